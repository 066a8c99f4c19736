from __future__ import annotations

import pytest

from relgrade._errors import InputError
from relgrade.io import query_id_for
from relgrade.label import Item, read_items


def test_csv_with_extra_and_empty_columns(tmp_path):
    path = tmp_path / "sample.csv"
    path.write_text(
        "query_id,query,doc_id,text,judge_grade,grade,rank\n"
        'q1,capital of france?,d1,"Paris, the capital.\nSecond line.",3,,1\n'
        "q1,capital of france?,d2,Lyon is a city.,,,2\n",
        encoding="utf-8",
    )
    items = read_items(path)
    assert items == (
        Item("q1", "capital of france?", "d1", "Paris, the capital.\nSecond line.", 3),
        Item("q1", "capital of france?", "d2", "Lyon is a city.", None),
    )


def test_jsonl_aliases_and_missing_query_id(make_items):
    path = make_items([{"query": "what is bm25", "pid": 17, "passage": "BM25 is a ranking function."}])
    (item,) = read_items(path)
    assert item.query_id == query_id_for("what is bm25")
    assert (item.doc_id, item.text, item.judge_grade) == ("17", "BM25 is a ranking function.", None)


@pytest.mark.parametrize(
    "rows, line, words",
    [
        ([{"query_id": "q", "query": "x", "doc_id": "d"}], 1, "missing text"),
        ([{"query_id": "q", "query": "x", "doc_id": "d", "text": "t"}, {"query_id": "q", "query": "x", "doc_id": "d", "text": "u"}], 2, "listed again"),
        ([{"query_id": "q", "query": "x", "doc_id": "d", "text": "t", "judge_grade": 5}], 1, "not one of 0, 1, 2, 3"),
        ([{"query_id": "q", "query": "x", "doc_id": "d", "text": "t", "judge_grade": "high"}], 1, "not a number"),
    ],
)
def test_bad_rows_name_file_and_line(make_items, rows, line, words):
    path = make_items(rows)
    with pytest.raises(InputError) as err:
        read_items(path)
    assert err.value.path == str(path) and err.value.line == line
    assert words in str(err.value) and "\n" not in str(err.value)


def test_bad_json_line_and_unknown_format(tmp_path):
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"query_id": "q", "query": "x", "doc_id": "d", "text": "t"}\n{"query_id": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"items.jsonl:2: invalid JSON"):
        read_items(bad)
    trec = tmp_path / "items.txt"
    trec.write_text("q1 0 d1 1\n", encoding="utf-8")
    with pytest.raises(InputError, match="CSV .* or JSONL"):
        read_items(trec)
    with pytest.raises(InputError, match="no such items file"):
        read_items(tmp_path / "missing.csv")


def test_a_blind_sample_keeps_the_judge_beside_it_and_show_judge_reads_it_from_there(tmp_path):
    """relgrade sample writes items.csv blind to the judge and items.judge.csv beside it (issue 25)."""
    from relgrade.calibration import sample_pairs, with_texts, write_sample
    from relgrade.label._items import judge_file_for, with_judge_grades

    judge = {f"q{q}": {f"d{d}": (q + d) % 4 for d in range(3)} for q in range(4)}
    drawn = with_texts(sample_pairs(judge, n=2, seed=0), queries={q: f"question {q}" for q in judge},
                       texts={f"d{d}": f"chunk {d}" for d in range(3)})
    items_path = write_sample(drawn, tmp_path / "items.csv", model="openai/x")
    assert judge_file_for(items_path) == tmp_path / "items.judge.csv"
    header = items_path.read_text(encoding="utf-8").splitlines()[0]
    assert "judge" not in header and "stratum" not in header
    items = read_items(items_path)
    assert items and all(it.judge_grade is None for it in items)  # the page gets nothing to anchor on
    shown = with_judge_grades(items, items_path)  # --show-judge: from the file beside
    assert [it.judge_grade for it in shown] == [judge[it.query_id][it.doc_id] for it in items]
    (tmp_path / "items.judge.csv").unlink()
    assert with_judge_grades(items, items_path) == items
