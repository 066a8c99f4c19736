"""What the store's safety costs per judgment (issue 24): the claim protocol's batch-ledger check and the rows'
integrity check, measured against the whole store work of a judgment, side by side in one run.

Per judgment, a judge does one ``claim`` (one transaction: answered? claimed online? in an open batch?) and one
``put`` (the row, sealed with its check, committed; its claim released), and a later run reads the row back
(``get_many``: the check verified). Timed here on a fresh store with ``--pairs`` keys, alternated per round:

- ``claim + put``: the whole store work of one judgment, as the engine does it;
- ``ledger check``: the part of it that asks the batch ledger (``in_open_batches`` of one key);
- ``seal``: a row's sealed record text (the SHA-256 seal over its JSON) less the JSON encoding every put does anyway;
- ``read back``: ``get_many`` of every row, per row (the seal verified inside); ``verify``: the seal recomputed over
  the record text, per row.

    python benchmarks/store_protocol.py [--pairs 3000] [--rounds 3] [--store postgresql://...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path

RECORD = {"reason": "the passage names the setting and how to change it", "distribution": {"0": 0.01, "1": 0.04,
          "2": 0.15, "3": 0.8}, "expected_grade": 2.74, "raw_answer": '{"grade": 3, "reason": "the passage names the '
          'setting and how to change it"}', "error": None, "prompt_tokens": 707, "completion_tokens": 30,
          "cost_usd": 0.000124, "latency_s": 0.41, "calls": 1}


def per_item(fn, items) -> float:
    start = time.perf_counter()
    for item in items:
        fn(item)
    return (time.perf_counter() - start) / len(items) * 1e6


def one_round(store_spec: str, pairs: int) -> dict[str, float]:
    from relgrade.judge import JudgmentStore
    from relgrade.judge.store._claims import in_open_batches
    from relgrade.judge.store._integrity import seal_text, unseal

    tag = uuid.uuid4().hex[:8]
    keys = [f"bench-{tag}-{i:06d}" for i in range(pairs)]
    owner = f"bench:{tag}"
    out = {}
    with JudgmentStore(store_spec) as db:
        def judge(key):
            db.claim([key], owner)
            db.put(key, model="m", prompt_hash="p", status="judged", grade=3, record=RECORD, owner=owner)

        out["claim + put"] = per_item(judge, keys)
        query = db._query(db._db) if hasattr(db, "_query") else db._db.execute
        out["ledger check"] = per_item(lambda k: in_open_batches(query, [k]), keys)
        encode = per_item(lambda k: json.dumps(RECORD, ensure_ascii=False), keys)  # what a put encodes anyway
        out["seal"] = per_item(lambda k: seal_text(k, "m", "p", "judged", 3, RECORD), keys) - encode
        start = time.perf_counter()
        rows = db.get_many(keys)
        out["read back"] = (time.perf_counter() - start) / pairs * 1e6
        texts = {k: seal_text(k, "m", "p", "judged", 3, RECORD) for k in keys}  # the record text as stored
        assert all(unseal(k, "m", "p", "judged", 3, texts[k]) for k in keys)
        out["verify"] = per_item(lambda k: unseal(k, "m", "p", "judged", 3, texts[k]), keys)
        assert len(rows) == pairs
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--store", default=None, help="a postgresql:// URL (default: a fresh SQLite file per round)")
    args = parser.parse_args()
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            spec = args.store or str(Path(tmp) / f"s{r}.sqlite")
            rounds.append(one_round(spec, args.pairs))
    kind = "PostgreSQL" if args.store else "SQLite"
    print(f"{args.pairs} judgments per round, {args.rounds} rounds, {kind} store; microseconds per judgment (per row)")
    names = list(rounds[0])
    print(f"{'round':>5}  " + "  ".join(f"{n:>13}" for n in names))
    for r, row in enumerate(rounds):
        print(f"{r:>5}  " + "  ".join(f"{row[n]:>13.1f}" for n in names))
    share = [(row["ledger check"] + row["seal"]) / row["claim + put"] for row in rounds]
    read = [row["verify"] / row["read back"] for row in rounds]
    print(f"ledger check + seal: {min(share):.1%}-{max(share):.1%} of claim + put; "
          f"verify: {min(read):.1%}-{max(read):.1%} of reading a row back")


if __name__ == "__main__":
    main()
