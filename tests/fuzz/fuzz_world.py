"""A small valid world of files for every command, and malformed variants of each file kind (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

QUERIES = [f"q{i}" for i in range(1, 7)]
DOCS = [f"d{i}" for i in range(1, 6)]


def grade(q: str, d: str) -> int:
    return (int(q[1:]) * 7 + int(d[1:]) * 3) % 4


def judge_grade(q: str, d: str) -> int:
    g = grade(q, d)
    return g if (int(q[1:]) + int(d[1:])) % 3 else min(3, g + 1)


def text_of(d: str) -> str:
    return f"chunk {d} about something"


def write_world(root: Path) -> dict[str, Path]:
    """Valid inputs: TREC qrels and runs, human CSV, judge details, corpus, items, mapping."""
    f = {}
    f["qrels"] = root / "qrels.txt"
    f["qrels"].write_text("".join(f"{q} 0 {d} {grade(q, d)}\n" for q in QUERIES for d in DOCS))
    for name, shift in (("run", 0), ("run_b", 2)):
        lines = []
        for q in QUERIES:
            order = DOCS[shift:] + DOCS[:shift]
            lines += [f"{q} Q0 {d} {i + 1} {10 - i}.5 sys\n" for i, d in enumerate(order)]
        f[name] = root / f"{name}.txt"
        f[name].write_text("".join(lines))
    f["human"] = root / "human.csv"
    f["human"].write_text("query_id,doc_id,grade,annotator\n"
                          + "".join(f"{q},{d},{grade(q, d)},alice\n" for q in QUERIES[:4] for d in DOCS))
    f["judge"] = root / "judge.details.jsonl"
    f["judge"].write_text("".join(json.dumps({"query_id": q, "doc_id": d, "query": f"query {q}", "text": text_of(d),
                                              "grade": judge_grade(q, d), "model": "fake/judge",
                                              "prompt_hash": "p1"}) + "\n" for q in QUERIES for d in DOCS))
    f["corpus"] = root / "corpus.jsonl"
    f["corpus"].write_text("".join(json.dumps({"doc_id": d, "text": text_of(d)}) + "\n" for d in DOCS))
    f["items"] = root / "items.jsonl"
    f["items"].write_text("".join(json.dumps({"query_id": q, "query": f"query {q}", "doc_id": d, "text": text_of(d)})
                                  + "\n" for q in QUERIES[:2] for d in DOCS))
    f["mapping"] = root / "mapping.json"
    f["mapping"].write_text(json.dumps({"adopted": True, "table": {"0": 0, "1": 1, "2": 2, "3": 3}}))
    return f


GENERIC = {
    "empty": b"",
    "blank": b"  \n\n \n",
    "binary": b"\x00\x01\x02PK\x03\x04" * 50,
    "latin1": "query_id,doc_id,grade\nq1,caf\xe9,1\n".encode("latin-1"),
    "deep_json": b"[" * 100_000 + b"]" * 100_000,
    "deep_jsonl": b"{\"a\":" * 100_000 + b"1" + b"}" * 100_000 + b"\n",
}

BAD = {
    "trec_qrels": {
        "three_fields": "q1 0 d1\n",
        "nan_grade": "q1 0 d1 nan\n",
        "inf_grade": "q1 0 d1 inf\n",
        "huge_grade": "q1 0 d1 1e400\n",
        "word_grade": "q1 0 d1 two\n",
        "frac_grade": "q1 0 d1 1.5\n",
        "duplicate_pair": "q1 0 d1 1\nq1 0 d1 2\n",
        "bom_garbage": "\ufeff\x01\x02 nonsense here\n",
    },
    "trec_run": {
        "five_fields": "q1 Q0 d1 1 0.5\n",
        "nan_score": "q1 Q0 d1 1 nan t\n",
        "word_score": "q1 Q0 d1 1 high t\n",
        "word_rank": "q1 Q0 d1 first 0.5 t\n",
        "duplicate_doc": "q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n",
        "truncated_jsonl": '{"query_id": "q1", "results": [{"doc_id": "d1"}]}\n{"query_id": "q2", "resu',
        "jsonl_no_results": '{"query_id": "q1"}\n',
        "lone_surrogate_jsonl": '{"query_id": "q1", "query": "half \\ud83d", "results": [{"doc_id": "d1", "text": "x"}]}\n',
    },
    "csv_labels": {
        "unbalanced_quote": "query_id,doc_id,grade\nq1,d1,1\nq1,\"d2,2\nq2,d1,3\nq2,d2,0\n",
        "wrong_columns": "qq,dd,gg\nq1,d1,1\n",
        "nan_grade": "query_id,doc_id,grade\nq1,d1,NaN\n",
        "inf_grade": "query_id,doc_id,grade\nq1,d1,inf\n",
        "huge_grade": "query_id,doc_id,grade\nq1,d1,1e400\n",
        "grade_4": "query_id,doc_id,grade\nq1,d1,4\nq1,d2,1\n",
        "grade_minus_1": "query_id,doc_id,grade\nq1,d1,-1\nq1,d2,1\n",
        "duplicate_label": "query_id,doc_id,grade\nq1,d1,1\nq1,d1,2\n",
        "extra_cell": "query_id,doc_id,grade\nq1,d1,1,oops\n",
        "missing_doc": "query_id,doc_id,grade\nq1,,1\n",
        "bool_json": '{"query_id": "q1", "doc_id": "d1", "grade": true}\n',
        "nan_json": '{"query_id": "q1", "doc_id": "d1", "grade": NaN}\n',
        "infinity_json": '{"query_id": "q1", "doc_id": "d1", "grade": Infinity}\n',
        "lone_surrogate_json": '{"query_id": "q1", "doc_id": "d1\\udc00", "grade": 1}\n',
    },
    "details": {
        "truncated": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "m"}\n{"query_id": "q1", "doc_',
        "nan_grade": '{"query_id": "q1", "doc_id": "d1", "grade": NaN, "model": "m"}\n',
        "grade_4": '{"query_id": "q1", "doc_id": "d1", "grade": 4, "model": "m"}\n',
        "grade_minus_1": '{"query_id": "q1", "doc_id": "d1", "grade": -1, "model": "m"}\n',
        "string_word_grade": '{"query_id": "q1", "doc_id": "d1", "grade": "high", "model": "m"}\n',
        "twice": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "m"}\n'
                 '{"query_id": "q1", "doc_id": "d1", "grade": 2, "model": "m"}\n',
        "no_doc": '{"query_id": "q1", "grade": 1, "model": "m"}\n',
        "bad_scale": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "m", "scale": [3, 0]}\n',
        "list_line": '[1, 2, 3]\n',
        "bad_distribution": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "m", "distribution": [0.5]}\n',
        "lone_surrogate": '{"query_id": "q1", "doc_id": "d1", "grade": 1, "model": "m", "text": "a \\ud800 b"}\n',
    },
    "mapping": {
        "not_json": "adopted: yes\n",
        "to_9": '{"adopted": true, "table": {"0": 0, "1": 1, "2": 9, "3": 3}}',
        "to_minus_4": '{"adopted": true, "table": {"0": -4, "1": 1, "2": 2, "3": 3}}',
        "adopted_word": '{"adopted": "yes", "table": {"0": 0}}',
        "nan_target": '{"adopted": true, "table": {"0": NaN}}',
        "no_table": '{"adopted": true}',
        "lone_surrogate": '{"adopted": true, "table": {"0": 0, "1": 1, "2": 2, "3": 3}, "note": "\\udfff"}',
    },
    "corpus": {
        "no_text": '{"doc_id": "d1"}\n',
        "truncated": '{"doc_id": "d1", "text": "a"}\n{"doc_id": "d2", "te',
        "lone_surrogate": '{"doc_id": "d1", "text": "a \\ud800"}\n',
    },
    "items": {
        "unbalanced_quote": "query_id,query,doc_id,text\nq1,what,d1,\"open quote\nq1,what,d2,text\n",
        "no_text": '{"query_id": "q1", "query": "what", "doc_id": "d1"}\n',
        "lone_surrogate": '{"query_id": "q1", "query": "what", "doc_id": "d1", "text": "a \\udbff"}\n',
        "wrong_columns": "a,b,c\n1,2,3\n",
    },
}

SUFFIX = {"trec_qrels": ".txt", "trec_run": ".txt", "csv_labels": ".csv", "details": ".jsonl", "mapping": ".json",
          "corpus": ".jsonl", "items": ".csv", "report": ".json"}
# a JSON-looking bad case keeps a suffix its reader sniffs as JSON
JSON_CASES = {"bool_json", "nan_json", "infinity_json", "truncated_jsonl", "jsonl_no_results", "lone_surrogate_jsonl",
              "lone_surrogate_json"}
