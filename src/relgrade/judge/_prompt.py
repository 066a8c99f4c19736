"""Judge prompts: files under ``prompts/``, versioned by content hash, with untrusted text delimited.

A prompt file is plain UTF-8 text with the placeholders ``{{query}}`` and ``{{chunk}}`` (plain
string replacement, so JSON braces need no escaping). A line ``[system]`` and a line ``[user]``
introduce optional sections; with no header the whole file is the user message. Built-in names:

- ``graded`` (``prompts/graded.txt``): 0-3 scale, answer ``{"grade": <int>, "reason": "<short>"}``.
  Its structure follows UMBRELA (Upadhyay et al. 2024), itself after Thomas et al. (2023, "Large
  language models can accurately predict searcher preferences"): consider the searcher's intent,
  how well the passage matches it, how trustworthy it is, then give one final grade.
- ``binary`` (``prompts/binary.txt``): 0-1 scale, same answer format.
- ``local`` (``prompts/local_fewshot.txt``): few-shot completion prompt for the embedded base model.

The version of a prompt is ``sha256(file bytes)``; outputs show its first 12 hex digits.

Delimiting (prompt injection)
-----------------------------
Chunk text is untrusted. ``{{chunk}}`` renders as::

    <<<PASSAGE 3f2a...c1>>>
    text
    <<<END PASSAGE 3f2a...c1>>>

where the code is the first 16 hex digits of sha256(chunk text) (deterministic, so caching works).
Every run of three or more ``<`` or ``>`` inside the text is broken up (``<<<`` -> ``<< <``),
so no text in a chunk can open or close a marker, whatever code it guesses. Substitution is one
pass over the template *after* it is split into sections, so a chunk that contains ``{{query}}``,
``[system]`` or a fake marker stays inert text inside the passage block.

The query is untrusted too (it may come from users of the system under test) and is delimited
the same way (issue 15), between ``<<<QUERY code>>>`` and ``<<<END QUERY code>>>`` lines whose
code is the first 16 hex digits of sha256 of the query text. Prompts rendered inside a JSON string
(``escape="json"``, ragas' templates) keep ragas' own layout: there the query is only
neutralised, and JSON-escaped.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path

from relgrade._errors import InputError
from relgrade.judge._config import DEFAULT_MODEL

BUILTIN = {"graded": "graded.txt", "binary": "binary.txt", "local": "local_fewshot.txt"}
_DEFAULT_MAX_GRADE = {"graded": 3, "binary": 1, "local": 3}
_PLACEHOLDER = re.compile(r"\{\{(query|chunk)\}\}")
_HEADER = re.compile(r"^\[(system|user)\]\s*$")


@dataclass(frozen=True)
class Prompt:
    """A loaded judge prompt. ``sha256`` versions it; ``max_grade`` fixes the scale ``0..max_grade``.

    ``grade_key`` is the JSON key the answer carries the grade under (``"grade"`` for relgrade's
    prompts, ``"verdict"`` or ``"rating"`` for ragas'). ``escape="json"`` is for templates whose
    placeholders sit inside a JSON string (ragas renders its input as JSON): the query and the
    delimited chunk are then JSON-string-escaped (``json.dumps(value, ensure_ascii=False)``
    without the quotes), so a ``"`` in a chunk cannot close the string either.
    """

    name: str
    system: str | None
    user: str
    sha256: str
    max_grade: int = 3
    grade_key: str = "grade"
    escape: str | None = None

    @property
    def hash(self) -> str:
        """The short version shown in outputs: 12 hex digits of the content hash."""
        return self.sha256[:12]

    @property
    def scale(self) -> tuple[int, ...]:
        return tuple(range(self.max_grade + 1))

    def render(self, query: str, chunk: str) -> list[dict[str, str]]:
        """Chat messages for one (query, chunk) pair, the chunk delimited (see the module doc)."""
        if self.escape == "json":
            values = {"query": neutralise(query), "chunk": delimit(chunk)}
            values = {k: json.dumps(v, ensure_ascii=False)[1:-1] for k, v in values.items()}
        else:
            values = {"query": delimit(query, "QUERY"), "chunk": delimit(chunk)}

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)

        messages = []
        if self.system is not None:
            messages.append({"role": "system", "content": fill(self.system)})
        messages.append({"role": "user", "content": fill(self.user)})
        return messages


def neutralise(text: str) -> str:
    """Break every run of 3+ ``<`` or ``>`` so the text cannot form a passage marker."""
    for run in ("<<<", ">>>"):
        spaced = run[:2] + " " + run[2]
        while run in text:
            text = text.replace(run, spaced)
    return text


def boundary(chunk: str) -> str:
    """The marker code of a chunk: 16 hex digits of sha256 of its text."""
    return hashlib.sha256(chunk.encode("utf-8")).hexdigest()[:16]


def delimit(chunk: str, kind: str = "PASSAGE") -> str:
    """The text between an opening and a closing marker line (``PASSAGE`` or ``QUERY``) that it cannot forge."""
    code = boundary(chunk)
    return f"<<<{kind} {code}>>>\n{neutralise(chunk)}\n<<<END {kind} {code}>>>"


def prompts_dir() -> Path | None:
    """Where the built-in prompts live: the wheel's ``relgrade/_prompts``, else the repo's ``prompts/``."""
    try:
        from importlib.resources import files

        shipped = files("relgrade") / "_prompts"
        if shipped.is_dir():
            return Path(str(shipped))
    except (ModuleNotFoundError, TypeError, OSError):
        pass
    repo = Path(__file__).resolve().parents[3] / "prompts"  # src/relgrade/judge/_prompt.py -> the repo root
    return repo if repo.is_dir() else None


def parse_prompt(text: str, *, name: str, max_grade: int = 3) -> Prompt:
    """Build a :class:`Prompt` from file content (``[system]``/``[user]`` sections optional)."""
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    sections: dict[str, list[str]] = {}
    current: str | None = None
    preamble: list[str] = []
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line.strip())
        if header:
            current = header.group(1)
            if current in sections:
                raise InputError(f"prompt {name}: section [{current}] appears twice; keep one")
            sections[current] = []
        elif current is None:
            preamble.append(line)
        else:
            sections[current].append(line)
    if not sections:
        user, system = text, None
    else:
        if "".join(preamble).strip():
            raise InputError(f"prompt {name}: text before the first [system]/[user] line; move it into a section")
        if "user" not in sections:
            raise InputError(f"prompt {name}: has a [system] section but no [user] section")
        user = "".join(sections["user"]).strip("\n")
        system = "".join(sections["system"]).strip("\n") if "system" in sections else None
    whole = user + (system or "")
    for placeholder in ("{{query}}", "{{chunk}}"):
        if placeholder not in whole:
            raise InputError(f"prompt {name}: no {placeholder} placeholder; the judge needs both {{{{query}}}} and {{{{chunk}}}}")
    if not isinstance(max_grade, int) or isinstance(max_grade, bool) or not 1 <= max_grade <= 9:
        raise InputError(f"max grade must be an integer from 1 to 9, got {max_grade!r}")
    return Prompt(name=name, system=system, user=user, sha256=sha, max_grade=max_grade)


def load_prompt(spec: "str | Path | Prompt" = "graded", *, max_grade: int | None = None) -> Prompt:
    """Load ``graded``, ``binary``, ``local`` or a prompt file PATH (scale 0..3 unless ``max_grade``)."""
    if isinstance(spec, Prompt):
        return spec if max_grade is None or max_grade == spec.max_grade else replace(spec, max_grade=max_grade)
    spec_str = str(spec)
    if spec_str in BUILTIN:
        folder = prompts_dir()
        path = None if folder is None else folder / BUILTIN[spec_str]
        if path is None or not path.is_file():
            raise InputError(f"built-in prompt {spec_str!r} is missing from the installation; reinstall relgrade")
        default_max = _DEFAULT_MAX_GRADE[spec_str]
        name = spec_str
    else:
        path = Path(spec_str)
        if not path.is_file():
            raise InputError(f"--prompt {spec_str}: not 'graded', 'binary', 'local' or an existing prompt file")
        default_max = 3
        name = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise InputError("prompt file is not valid UTF-8; re-save it as UTF-8", path=path) from None
    return parse_prompt(text, name=name, max_grade=default_max if max_grade is None else max_grade)


def resolve(model: str | None, prompt: "str | Path | Prompt | None", max_grade: int | None) -> tuple[str, Prompt]:
    """The model a judge call uses (:data:`~relgrade.judge._config.DEFAULT_MODEL` when None) and its prompt (``local``
    for a ``local/`` model, else ``graded``, when None)."""
    model = DEFAULT_MODEL if model is None else model  # "" is an error, never the default model
    if not isinstance(model, str) or not model.strip() or model != model.strip():
        raise InputError(f"--model must be a litellm model name such as openai/gpt-4o-mini, got {model!r}")
    if prompt is None:
        prompt = "local" if model.startswith("local/") else "graded"
    return model, load_prompt(prompt, max_grade=max_grade)
