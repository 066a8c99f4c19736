"""Fetch the TREC DL 2020 passage judgments the TREC DL benchmarks read, with ir_datasets.

    pip install ir_datasets
    python benchmarks/fetch_trec_dl_2020.py --out ../shared/data/trec-dl-2020-passage

writes, in ``--out``:

* ``qrels.txt``: the NIST judgments, TREC qrels ``qid 0 pid grade`` (grades 0-3; 11,386 pairs, 54 queries);
* ``queries.tsv``: ``qid<TAB>query`` for the 54 judged queries;
* ``pairs.jsonl``: one line per judged pair, ``{"qid", "query", "pid", "passage", "label"}``.

ir_datasets downloads the MS MARCO passage collection (about 1 GB) and the TREC DL 2020 queries and
judgments on first use (``msmarco-passage/trec-dl-2020/judged``); the benchmarks themselves never
download anything. The texts are MS MARCO's: keep them out of this repository.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DATASET = "msmarco-passage/trec-dl-2020/judged"


def write_files(queries: dict[str, str], qrels: list[tuple[str, str, int]], text_of, out: Path) -> int:
    """Write qrels.txt, queries.tsv and pairs.jsonl from ``queries`` ({qid: text}), ``qrels``
    ([(qid, pid, grade)]) and ``text_of(pid) -> passage``; returns the number of pairs."""
    out.mkdir(parents=True, exist_ok=True)
    judged = sorted({q for q, _, _ in qrels}, key=lambda q: list(queries).index(q) if q in queries else len(queries))
    with open(out / "qrels.txt", "w", encoding="utf-8") as f:
        f.writelines(f"{q} 0 {d} {g}\n" for q, d, g in qrels)
    with open(out / "queries.tsv", "w", encoding="utf-8") as f:
        f.writelines(f"{q}\t{queries[q]}\n" for q in judged)
    with open(out / "pairs.jsonl", "w", encoding="utf-8") as f:
        for q, d, g in qrels:
            f.write(json.dumps({"qid": q, "query": queries[q], "pid": d, "passage": text_of(d), "label": g},
                               ensure_ascii=False) + "\n")
    return len(qrels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    from _trec_dl import DATA

    ap.add_argument("--out", type=Path, default=DATA)
    args = ap.parse_args()
    try:
        import ir_datasets
    except ImportError:
        raise SystemExit("fetch_trec_dl_2020: error: needs ir_datasets (pip install ir_datasets)") from None
    ds = ir_datasets.load(DATASET)
    queries = {q.query_id: q.text for q in ds.queries_iter()}
    qrels = [(r.query_id, r.doc_id, int(r.relevance)) for r in ds.qrels_iter()]
    docs = ds.docs_store()
    n = write_files(queries, qrels, lambda pid: docs.get(pid).text, args.out)
    print(f"wrote {n} judged pairs of {len({q for q, _, _ in qrels})} queries to {args.out}")


if __name__ == "__main__":
    main()
