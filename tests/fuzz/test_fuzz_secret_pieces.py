"""Partial secrets, generated (issue 34): pieces of a key (any 12 characters or more, its halves around a line break)
of random keys (letters, digits, quotes, backslashes, HTML and URL specials, non-ASCII), inside a judge's JSON answer
as a provider returns it online (the answer text) and in a batch (that answer as a JSON string inside a result line,
raw bytes first). Masked as relgrade masks them (:mod:`relgrade.judge.transport._secrets`), no 12-character piece of
the key or of any form it is registered in survives, raw or decoded, and the answer still parses to its grade.
Then ``judge --batch`` end to end against the fake batch endpoint echoing pieces of the key in every answer.
"""

from __future__ import annotations

import html
import json
import random
from urllib.parse import quote

import pytest

from relgrade.cli import main

KEY_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_."  # what providers' keys are made of
HOSTILE = KEY_CHARS + "\"'\\<>&%/+=é€ü"  # and what a hostile test makes them of


def _key(rng: random.Random, alphabet: str) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(12, 64)))


def _piece(rng: random.Random, key: str) -> str:
    form = rng.choice((key, json.dumps(key)[1:-1], html.escape(key), quote(key, safe="")))
    a = rng.randint(0, len(form) - 12)
    piece = form[a:rng.randint(a + 12, len(form))]
    if rng.random() < 0.3 and len(piece) >= 24:
        cut = rng.randint(12, len(piece) - 12)
        piece = f"{piece[:cut]}\n{piece[cut:]}"
    return piece


def _windows(key: str) -> set[str]:
    forms = {key, json.dumps(key)[1:-1], json.dumps(key, ensure_ascii=False)[1:-1], html.escape(key),
             html.escape(key, quote=False), quote(key, safe="")}
    return {f[i:i + 12] for f in forms for i in range(len(f) - 11)}


def _check(masked: str, key: str, grade: int, exact: bool, what) -> bool:
    """No piece left, raw or decoded; the grade read is the grade, or (a key holding JSON's own characters, whose mask
    may take a quote of the answer with it) no grade: never another one. Returns whether the grade was read."""
    from relgrade.judge._parse import parse_answer

    read = parse_answer(masked, range(4), "grade").grade
    assert read == grade or (read is None and not exact), (what, masked)
    try:
        decoded = json.loads(masked)["reason"]
    except (ValueError, KeyError):
        decoded = ""
    leaks = [w for w in _windows(key) if w in masked or w in decoded]
    assert not leaks, (what, leaks[:3], masked)
    return read is not None


@pytest.mark.parametrize("alphabet", ["key_chars", "hostile"])
@pytest.mark.parametrize("chunk", range(4))
def test_no_piece_survives_masking_online_or_in_a_batch_line(chunk, alphabet):
    from relgrade.judge.transport._secrets import collect_secrets, mask, mask_bytes, mask_strings

    exact, read = alphabet == "key_chars", 0
    for seed in range(chunk, 1200, 4):
        rng = random.Random(seed)
        key = _key(rng, KEY_CHARS if exact else HOSTILE)
        secrets = collect_secrets(key)
        grade = rng.randrange(4)
        answer = json.dumps({"grade": grade, "reason": f"{rng.choice(('', 'ok ', 'saw '))}{_piece(rng, key)} end"},
                            ensure_ascii=rng.random() < 0.5)
        read += _check(mask(answer, secrets), key, grade, exact, (seed, "online"))
        line = json.dumps({"custom_id": "c1", "response": {"body": {"choices": [{"message": {"content": answer}}]}}})
        decoded = mask_strings(json.loads(mask_bytes(line.encode(), secrets)), secrets)
        content = decoded["response"]["body"]["choices"][0]["message"]["content"]
        _check(content, key, grade, exact, (seed, "batch"))
    assert read >= 300 * (1 if exact else 0.9), read  # hostile keys: a grade lost to the mask stays rare


KEYS = {"sk": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB12", "quotes": 'k3y"with\\quote/and-slash-Zt8Wq3Lp0Nv5'}
PIECES = ("tail24", "head30", "middle", "split", "html_cut", "json_cut")


@pytest.mark.parametrize("shape", sorted(KEYS))
def test_a_batch_that_echoes_pieces_of_the_key_shows_and_stores_none(tmp_path, monkeypatch, capsys, batch_fakes,
                                                                     shape):
    key = KEYS[shape]
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.delenv("RELGRADE_STORE", raising=False)
    monkeypatch.chdir(tmp_path)
    with open(tmp_path / "run.jsonl", "w") as fh:
        fh.write(json.dumps({"query_id": "q0", "query": "what is asked here", "results": [
            {"doc_id": f"d{i}", "text": f"chunk {i} [[grade={i % 4}]] [[echo-key:{how}]]"}
            for i, how in enumerate(PIECES)]}) + "\n")
    with batch_fakes.FakeBatchServer(delay=0.02) as server:
        code = main(["judge", "--run", "run.jsonl", "--model", "openai/gpt-4o-mini", "--api-base", server.base_url,
                     "--store", "s.sqlite", "--out", "o.qrels", "--batch", "--poll-interval", "0.02"])
        out, err = capsys.readouterr()
        assert server.chat.stats()["paid"] >= len(PIECES)  # the hostile server answered, echoing pieces
    assert code == 0, err
    got = {x.split()[2]: int(x.split()[3]) for x in (tmp_path / "o.qrels").read_text().splitlines()}
    assert got == {f"d{i}": i % 4 for i in range(len(PIECES))}
    leaks = [w for w in _windows(key) if w in out or w in err]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            leaks += [f"{path.name}: {w}" for w in _windows(key) if w.encode() in data]
    assert not leaks, leaks[:5]
