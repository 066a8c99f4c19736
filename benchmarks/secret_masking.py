"""What masking every 12-character piece of every key costs per judgment (issue 34), side by side with masking whole
keys only (what relgrade did before) and with parsing the same answer.

Every answer is masked once before it is parsed and stored (:func:`relgrade.judge.transport._secrets.mask`). Timed
here, per answer, with the secrets a judge registers for three keys in the environment (an OpenAI project key, an
Anthropic key, a 40-character token) and their echoed forms:

- ``pieces``: :func:`relgrade._redact.mask_pieces`, every 12-character piece of every secret;
- ``whole``: ``str.replace`` of each whole secret (the masking before issue 34);
- ``parse``: :func:`relgrade.judge._parse.parse_answer` of the same answer (work every judgment does anyway);
- ``store``: writing that answer's row to a SQLite store (``put``, committed; what every paid judgment costs locally,
  before the call itself, which takes 100 ms or more).

Answers: a short JSON answer (about 100 characters), a 2 KB one, and a 2 KB one that echoes a piece of the key.

    python benchmarks/secret_masking.py [--rounds 5] [--n 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

KEYS = {"OPENAI_API_KEY": "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB12Cd34Ef56Gh78Ij90",
        "ANTHROPIC_API_KEY": "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
                             "abcdefghijklmnopqrstuvwxyzABCDEF-GHIJKLAA",
        "SOME_SERVICE_TOKEN": "tok_9f86d081884c7d659a2feaa0c55ad015abcd"}
REASON = "the passage names the setting and how to change it, with the default value and its unit"


def answers() -> dict[str, str]:
    short = json.dumps({"grade": 3, "reason": REASON})
    long = json.dumps({"grade": 2, "reason": " ".join([REASON] * 22)})
    echo = json.dumps({"grade": 1, "reason": " ".join([REASON] * 11) + " key " + KEYS["OPENAI_API_KEY"][-24:] + " "
                       + " ".join([REASON] * 11)})
    return {"short (100 B)": short, "long (2 KB)": long, "long, echoing a piece": echo}


def per_call(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    os.environ.update(KEYS)
    from relgrade._redact import mask_pieces
    from relgrade.judge import JudgmentStore
    from relgrade.judge._parse import parse_answer
    from relgrade.judge.transport._secrets import collect_secrets

    secrets = collect_secrets(env_names=tuple(KEYS))

    def whole(text: str) -> str:
        for s in secrets:
            if s in text:
                text = text.replace(s, "***")
        return text

    print(f"{len(secrets)} secrets registered (3 keys and their echoed forms); microseconds per answer, best of "
          f"{args.rounds} rounds of {args.n}")
    print(f"{'answer':<24}{'pieces':>10}{'whole':>10}{'parse':>10}{'store':>10}{'pieces/store':>14}")
    with tempfile.TemporaryDirectory() as tmp, JudgmentStore(Path(tmp) / "s.sqlite") as db:
        for name, text in answers().items():
            assert "***" in mask_pieces(text, secrets) or "key" not in text
            keys = iter(f"{name}-{i}" for i in range(10 ** 9))
            record = {"raw_answer": text, "reason": REASON, "prompt_tokens": 700, "completion_tokens": 30}
            rows = {k: min(per_call(f, args.n if k != "store" else args.n // 10) for _ in range(args.rounds)) for k, f in (
                ("pieces", lambda: mask_pieces(text, secrets)), ("whole", lambda: whole(text)),
                ("parse", lambda: parse_answer(text, range(4), "grade")),
                ("store", lambda: db.put(next(keys), model="m", prompt_hash="p", status="judged", grade=2,
                                         record=record)))}
            print(f"{name:<24}{rows['pieces']:>10.1f}{rows['whole']:>10.1f}{rows['parse']:>10.1f}{rows['store']:>10.1f}"
                  f"{rows['pieces'] / rows['store']:>14.1%}")


if __name__ == "__main__":
    main()
