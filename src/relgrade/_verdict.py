"""The judge's calibration verdict, carried with the labels it graded (issue 25).

``relgrade calibrate --json CAL.json`` says how far a judge agrees with humans (Cohen's κ with its CI, a
Landis & Koch band, what to do). Without this module the verdict stayed in CAL.json: a hybrid label set
built from a "do not use" judge, and every metric and gate on it, said nothing. Now:

* ``hybrid --mapping CAL.json`` and ``estimate --mapping CAL.json`` record a :class:`JudgeVerdict` (κ, CI,
  band, verdict text, mapping) with the labels (``OUT.calibration.json`` beside a hybrid set; a ``"judge"``
  block in an estimate report), as :func:`judge_block` ``{"labels": n judge labels, "calibration": ...}``;
* ``evaluate``, ``compare``, ``estimate``, ``rank-systems`` and ``gate`` print :func:`describe` when their
  labels hold judge grades: the verdict, or ``judge not calibrated`` when none was recorded;
* ``gate`` fails a decision that rests on judge labels the verdict says not to use (:meth:`JudgeVerdict.blocks`)
  unless told ``--accept-judge``.

The audit of a judge's biases (``relgrade audit --json AUDIT.json``, issue 37) travels the same way: ``estimate``,
``compare`` and ``rank-systems`` take ``--audit AUDIT.json`` (or find it in a ``--mapping CAL.json`` made with
``calibrate --audit``) and record an :class:`AuditVerdict` in the ``"judge"`` block (``"audit"``: null when the judge
was not audited); they and ``gate`` print it. A bias *warns* and never fails the gate: the reports the gate reads on
judge labels are PPI++ estimates, which the human labels keep unbiased whatever the judge's bias (it costs them
width, not validity); a bias matters for numbers on judge labels alone, which the line says.

The bands and their actions are defined here, once (:data:`ACTIONS`); ``relgrade.calibration`` computes the
band from κ. This module imports nothing heavy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from relgrade._errors import InputError
from relgrade._words import plural

# Landis & Koch (1977), "The measurement of observer agreement for categorical data", Biometrics 33:159-174.
ACTIONS = {
    "poor": "do not use judge labels",
    "slight": "do not use judge labels",
    "fair": "do not use judge labels alone",
    "moderate": "use judge labels only together with human labels (hybrid / prediction-powered estimates)",
    "substantial": "judge labels can rank systems; keep auditing a human sample",
    "almost perfect": "judge labels can stand in for human labels; keep a periodic human audit",
}
DO_NOT_USE = ("undefined", "poor", "slight")
"""Bands whose verdict is "do not use judge labels" (undefined: κ could not be computed)."""
NOT_ALONE = ("fair",)
"""Bands whose verdict is "do not use judge labels alone": fine beside human labels (PPI), not as the only labels."""
CAUTION = ("fair", "moderate")
"""Bands whose judge labels count only beside human labels: a page shows them in the caution colour."""


def tone(band: str) -> str:
    """How a page colours a verdict, in the gate's colours: ``"fail"`` (red) for "do not use" (:data:`DO_NOT_USE`),
    ``"caution"`` (amber) for "only with human labels" (:data:`CAUTION`), ``"pass"`` (green) above."""
    return "fail" if band in DO_NOT_USE else "caution" if band in CAUTION else "pass"


CALIBRATE_HINT = "run 'relgrade calibrate --judge DETAILS --human LABELS --json CAL.json' and pass --mapping CAL.json"


@dataclass(frozen=True)
class JudgeVerdict:
    """What ``relgrade calibrate`` said about a judge, as it travels with that judge's labels."""

    model: str | None
    band: str
    kappa: float | None
    ci95: tuple[float, float] | None
    text: str
    mapping_adopted: bool | None = None
    n_pairs: int | None = None
    n_queries: int | None = None
    source: str | None = None

    @classmethod
    def from_calibration(cls, data: Any, *, source: str | None = None, model: str | None = None) -> "JudgeVerdict | None":
        """The verdict of a ``relgrade calibrate --json`` dict (None for a plain mapping file without one).

        ``model``: the judge whose labels it will travel with; a calibration of another model is refused."""
        if not isinstance(data, Mapping) or not isinstance(data.get("verdict"), Mapping):
            return None
        calibrated = data.get("model")
        if model and calibrated and model != calibrated:
            raise InputError(f"this calibration is of the judge {calibrated}, the judge labels are of {model}: "
                             f"calibrate this judge ({CALIBRATE_HINT})", path=source)
        v, kappa = data["verdict"], data.get("kappa") or {}
        ci = v.get("ci95")
        mapping = data.get("mapping")
        return cls(calibrated or model, str(v.get("band", "undefined")), v.get("value"),
                   None if not ci else (float(ci[0]), float(ci[1])), str(v.get("text", "")),
                   mapping.get("adopted") if isinstance(mapping, Mapping) else None,
                   data.get("n_pairs", kappa.get("n")), data.get("n_queries"), source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "JudgeVerdict":
        ci = data.get("ci95")
        return cls(data.get("model"), str(data.get("band", "undefined")), data.get("kappa"),
                   None if not ci else (float(ci[0]), float(ci[1])), str(data.get("text", "")),
                   data.get("mapping_adopted"), data.get("n_pairs"), data.get("n_queries"), data.get("source"))

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["ci95"] = None if self.ci95 is None else list(self.ci95)
        out["do_not_use"] = self.band in DO_NOT_USE
        return out

    def line(self) -> str:
        """``judge openai/gpt-4o-mini: slight (κ 0.02, 95% ... CI -0.10–0.14): do not use judge labels``."""
        where = f" (calibrated in {self.source})" if self.source else ""
        return f"judge {self.model or '(model not recorded)'}: {self.text}{where}"

    def blocks(self, kind: str) -> str | None:
        """Why a gate must not pass on these judge labels (None when it may): a "do not use" verdict always; a
        "not alone" one (fair) when the report's labels are the judge's alone on most queries (``evaluate`` on
        a hybrid set), not for a PPI++ estimate, which corrects the judge with the human labels."""
        kappa = "" if self.kappa is None else f"κ {self.kappa:.2f}, "
        if self.band in DO_NOT_USE:
            return f"its calibration says {self.band} ({kappa}do not use judge labels)"
        if self.band in NOT_ALONE and kind != "estimate":
            return (f"its calibration says {self.band} ({kappa}do not use judge labels alone); gate on "
                    "'relgrade estimate' (PPI++ with the human labels)")
        return None


def judge_block(n_judge: int, verdict: "JudgeVerdict | None", audit: "AuditVerdict | None" = None) -> dict[str, Any] | None:
    """The ``"judge"`` entry a report or label set records: how many labels are judge grades, the calibration verdict
    and the audit's (None: not audited)."""
    if not n_judge:
        return None
    return {"labels": int(n_judge), "calibration": None if verdict is None else verdict.to_dict(),
            "audit": None if audit is None else audit.to_dict()}


WORTH_WITHHELD = ("judge worth withheld: the calibration says do not use this judge's labels (the PPI++ intervals stay "
                  "valid: they gain little over the human-only ones)")
"""Why every table and report leaves out "judge worth" for a judge whose verdict is "do not use" (one rule)."""


def worth_withheld(block: Mapping[str, Any] | None) -> bool:
    """True when a report's ``"judge"`` block (:func:`judge_block`) carries a "do not use" verdict: "judge worth" is
    then withheld everywhere (terminal tables, ``--json``, the HTML reports) with :data:`WORTH_WITHHELD`."""
    cal = block.get("calibration") if isinstance(block, Mapping) else None
    return isinstance(cal, Mapping) and str(cal.get("band", "undefined")) in DO_NOT_USE


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_block(block: Any, name: str | None = None) -> None:
    """Refuse (:class:`InputError`, naming the report) a ``"judge"`` block of the wrong shape: an object with
    ``labels`` a whole number (or null) and ``calibration`` null or a verdict object (:meth:`JudgeVerdict.to_dict`)."""
    fix = "the report is malformed: re-write it with the command that made it"
    if block is None:
        return
    if not isinstance(block, Mapping):
        raise InputError(f"'judge' is {type(block).__name__}, not an object {{labels, calibration}}; {fix}", path=name)
    n = block.get("labels")
    if n is not None and not (isinstance(n, int) and not isinstance(n, bool) and n >= 0):
        raise InputError(f"'judge.labels' is {n!r}, not a whole number of judge labels; {fix}", path=name)
    cal = block.get("calibration")
    if cal is None:
        return
    if not isinstance(cal, Mapping):
        raise InputError(f"'judge.calibration' is {type(cal).__name__}, not null or the calibration's verdict "
                         f"object; {fix}", path=name)
    ci = cal.get("ci95")
    if not isinstance(cal.get("band", ""), str) or not isinstance(cal.get("text", ""), str) \
            or not (cal.get("kappa") is None or _is_number(cal.get("kappa"))) \
            or not (ci is None or (isinstance(ci, list) and len(ci) == 2 and all(map(_is_number, ci)))):
        raise InputError(f"'judge.calibration' is not a verdict object (band and text strings, kappa a number, ci95 "
                         f"null or two numbers); {fix}", path=name)


def report_judge(data: Mapping[str, Any], name: str | None = None) -> dict[str, Any] | None:
    """The ``"judge"`` block of a report dict (checked: :func:`check_block`, ``name`` names the report); an
    ``estimate`` report without one (written before issue 25, or by the library without ``calibration``) still
    rests on judge labels: not calibrated, count unknown."""
    block = data.get("judge")
    check_block(block, name)
    if isinstance(block, Mapping):
        return dict(block) if block.get("labels") else None
    settings = data.get("settings")
    if block is None and isinstance(settings, Mapping) and (settings.get("kind") == "estimate" or settings.get("paired")):
        return {"labels": None, "calibration": None}
    return None


def _labels(block: Mapping[str, Any], one: str, many: str) -> str:
    n = block.get("labels")
    return plural(int(n), one, many) if isinstance(n, int) else f"its {many.split(' ', 1)[0]}"


def describe(block: Mapping[str, Any] | None) -> str | None:
    """The line to print for a ``"judge"`` block (None when the labels hold no judge grade)."""
    if not block or block.get("labels") == 0:
        return None
    cal = block.get("calibration")
    if not cal:
        n = block.get("labels")
        what = (plural(int(n), "label is a judge grade", "labels are judge grades") if isinstance(n, int)
                else "the labels include judge grades")
        return f"judge not calibrated: {what} and no calibration is recorded with them; {CALIBRATE_HINT}"
    return JudgeVerdict.from_dict(cal).line()


def gate_judge(reports: "list[tuple[Mapping[str, Any], str]]", *, accept: bool) -> tuple[list[str], list[str], dict]:
    """What the gate says about the judge behind ``[(report dict, name), ...]``: ``(lines to print, reasons to fail,
    the record for the gate's JSON)``. A report whose judge labels the verdict says not to use
    (:meth:`JudgeVerdict.blocks`) fails the gate, unless ``accept`` (``--accept-judge``), which is recorded."""
    lines: list[str] = []
    reasons: list[str] = []
    seen: dict[str, str] = {}
    record: dict[str, Any] = {"accept_judge": bool(accept), "reports": {}}
    for data, name in reports:
        block = report_judge(data, name)
        record["reports"][name] = block
        if block is None:
            continue
        line = describe(block)
        key = repr(sorted(block.items()))
        if key in seen:  # both reports rest on the same judge labels: said once
            continue
        seen[key] = name
        lines.append(f"{name}: {line}")
        audit = describe_audit(block, name)
        if audit:
            lines.append(f"{name}: {audit}")
        cal = block.get("calibration")
        settings = data.get("settings") or {}
        # a paired compare report (compare --human --judge) is PPI++ like an estimate: the humans correct the judge
        kind = "estimate" if settings.get("paired") else settings.get("kind", "evaluate")
        why = JudgeVerdict.from_dict(cal).blocks(kind) if cal else None
        if why is None:
            continue
        model = cal.get("model") or "a judge"
        if accept:
            lines.append(f"{name}: judge labels accepted with --accept-judge although {why}")
        else:
            reasons.append(f"judge: {name} rests on {_labels(block, 'judge label', 'judge labels')} of {model} and "
                           f"{why}; pass --accept-judge to gate on them anyway (recorded in the gate's JSON)")
    return lines, reasons, record


@dataclass(frozen=True)
class AuditVerdict:
    """What ``relgrade audit`` said about a judge, as it travels with that judge's labels: the probes that showed a
    bias (``biases``: ``(probe, shift, ci95)`` each), the system models sharing the judge's family (``circular``),
    and the audit's size. ``complete``: every answer the audit needed was there."""

    model: str | None
    prompt_hash: str | None
    n_pairs: int
    n_queries: int
    min_shift: float
    probes: tuple[str, ...]
    biases: tuple[tuple[str, float, tuple[float, float]], ...]
    circular: tuple[str, ...] = ()
    complete: bool = True
    source: str | None = None

    @classmethod
    def from_audit(cls, data: Any, *, source: str | None = None, model: str | None = None,
                   prompt_hash: str | None = None) -> "AuditVerdict":
        """The verdict of a ``relgrade audit --json`` dict (or of an ``"audit"`` block already in this shape).
        ``model``/``prompt_hash``: the judge whose labels it will travel with; an audit of another judge is refused."""
        if not isinstance(data, Mapping) or not isinstance(data.get("probes"), (Mapping, list)):
            raise InputError("not an audit: give the JSON of 'relgrade audit --json'", path=source)
        try:
            verdict = cls._read(data, source)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise InputError(f"malformed audit ({type(exc).__name__}: {exc}); re-run 'relgrade audit --json'",
                             path=source) from None
        for what, mine, theirs in (("judge", model, verdict.model), ("prompt", prompt_hash, verdict.prompt_hash)):
            if mine and theirs and not (mine == theirs or (what == "prompt" and mine.startswith(theirs[:12]))):
                raise InputError(f"this audit is of the {what} {theirs}, the judge labels are of {mine}: audit this "
                                 f"judge ('relgrade audit --run RUN --model MODEL --json AUDIT.json')", path=source)
        return verdict

    @classmethod
    def _read(cls, data: Mapping[str, Any], source: str | None) -> "AuditVerdict":
        if data.get("kind") != "audit":  # a block written by to_dict
            return cls.from_dict(data)
        probes = data["probes"]
        biases = tuple((name, float(p["shift"]), (float(p["ci95"][0]), float(p["ci95"][1])))
                       for name, p in probes.items() if p.get("bias"))
        circular = tuple(str(c["system_model"]) for c in data.get("circularity") or () if c.get("shared"))
        prompt = data.get("prompt") or {}
        return cls(data.get("model"), prompt.get("hash"), int(data["n_pairs"]), int(data["n_queries"]),
                   float(data["settings"]["min_shift"]), tuple(probes), biases, circular, bool(data.get("complete")),
                   source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AuditVerdict":
        biases = tuple((str(b["probe"]), float(b["shift"]), (float(b["ci95"][0]), float(b["ci95"][1])))
                       for b in data["biases"])
        return cls(data.get("model"), data.get("prompt_hash"), int(data["n_pairs"]), int(data["n_queries"]),
                   float(data["min_shift"]), tuple(map(str, data["probes"])), biases,
                   tuple(map(str, data.get("circular") or ())), bool(data.get("complete", True)), data.get("source"))

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "prompt_hash": self.prompt_hash, "n_pairs": self.n_pairs,
                "n_queries": self.n_queries, "min_shift": self.min_shift, "probes": list(self.probes),
                "biases": [{"probe": p, "shift": s, "ci95": list(ci)} for p, s, ci in self.biases],
                "circular": list(self.circular), "complete": self.complete, "source": self.source,
                "biased": bool(self.biases)}

    def line(self) -> str:
        """``judge M audited (AUDIT.json, 200 pairs of 40 queries): bias: length +1.00 [+0.93, +1.07] grade ...``."""
        where = f"{self.source}, " if self.source else ""
        head = (f"judge {self.model or '(model not recorded)'} audited ({where}{self.n_pairs} pairs of "
                f"{self.n_queries} queries{'' if self.complete else ', incomplete'})")
        if self.biases:
            found = ", ".join(f"{p} {s:+.2f} [{lo:+.2f}, {hi:+.2f}]" for p, s, (lo, hi) in self.biases)
            text = (f"{head}: bias: {found} grade; PPI++ estimates stay unbiased (the human labels correct it), "
                    "numbers on judge labels alone carry it")
        else:
            text = f"{head}: no bias of {self.min_shift:g} grade or more in {len(self.probes)} probes"
        if self.circular:
            text += f"; circular: {', '.join(self.circular)} shares the judge's model family"
        return text


def describe_audit(block: Mapping[str, Any] | None, name: str | None = None) -> str | None:
    """The line to print for the audit of a ``"judge"`` block (None when the judge was not audited); a malformed one
    is an :class:`InputError` naming the report ``name``."""
    audit = block.get("audit") if block else None
    if audit is None:
        return None
    try:
        return AuditVerdict.from_dict(audit).line()
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(f"the judge's audit recorded in the report is malformed ({type(exc).__name__}: {exc}); "
                         "re-write the report with --audit AUDIT.json", path=name) from None


__all__ = ["ACTIONS", "AuditVerdict", "CALIBRATE_HINT", "CAUTION", "DO_NOT_USE", "JudgeVerdict", "NOT_ALONE",
           "check_block", "describe", "describe_audit", "gate_judge", "judge_block", "report_judge", "tone"]
