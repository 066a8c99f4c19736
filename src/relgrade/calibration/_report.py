"""The calibration report as one self-contained HTML file: inline CSS and SVG, no script, nothing fetched.

:func:`render_sections` returns the HTML fragments for one judge (verdict, CI forest plot, confusion
heatmap, grade distributions, mapping, disagreements for the human audit) so a larger report can
embed them; :func:`render_page` wraps one or more judges in a full page. Every text that comes from
the data (queries, chunks, reasons, names) is escaped with :func:`html.escape`: chunks are untrusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from relgrade._intervals import BCA
from relgrade._verdict import tone as verdict_tone
from relgrade._words import plural
from relgrade.calibration._disagreements import Disagreement
from relgrade.calibration._results import Agreement, CalibrationReport

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2230;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.2rem;margin-top:2rem;border-bottom:1px solid #dde}h3{font-size:1rem}
.verdict{padding:.8rem 1rem;border-radius:6px;background:#f3f5fb;border-left:5px solid #4a63c8;font-size:1.05rem}
.verdict.fail{background:#fde7e5;border-left-color:#b3261e}.verdict.caution{background:#fff4e5;border-left-color:#e08a00}
.verdict.pass{background:#e3f4e8;border-left-color:#19733a}
.verdict .tone{font-weight:600;margin-right:.4rem}.verdict.fail .tone{color:#b3261e}.verdict.pass .tone{color:#19733a}
.verdict.caution .tone{color:#9a5b00}
.warn{padding:.6rem 1rem;border-radius:6px;background:#fff4e5;border-left:5px solid #e08a00}
table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #dde;padding:.25rem .5rem;vertical-align:top;text-align:left}
th{background:#f5f6fa}.num{text-align:right;font-variant-numeric:tabular-nums}
.chunk{max-width:480px;white-space:pre-wrap;word-break:break-word}.small{color:#556;font-size:.9em}
.grid{display:flex;flex-wrap:wrap;gap:2rem;align-items:flex-start}
"""

TONE_WORDS = {"fail": "Do not use.", "caution": "With human labels only.", "pass": "Usable."}
"""The verdict's colour said in words too (colour alone is not read by everyone)."""

FOREST_ROWS = (
    ("kappa", "Cohen's κ"),
    ("kappa_linear", "κ linear"),
    ("kappa_quadratic", "κ quadratic"),
    ("binary_kappa", "binary κ"),
    ("krippendorff_alpha", "Krippendorff α"),
    ("accuracy", "accuracy"),
)


def _fmt(a: Agreement | None, digits: int = 2) -> str:
    if a is None or not math.isfinite(a.value):
        return "undefined"
    ci = f" ({a.ci95[0]:.{digits}f}–{a.ci95[1]:.{digits}f})" if a.ci95 else " (no CI)"
    return f"{a.value:.{digits}f}{ci}"


def _forest(rows: Sequence[tuple[str, Agreement]], lo: float = -0.2, hi: float = 1.0) -> str:
    width, left, row_h = 560, 150, 26
    height = row_h * len(rows) + 40
    span = width - left - 20

    def x(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
             'aria-label="CI forest plot">']
    bands = ((0.0, 0.2, "#fbeaea"), (0.2, 0.4, "#fdf3e3"), (0.4, 0.6, "#fbf8e1"), (0.6, 0.8, "#eaf6ea"),
             (0.8, 1.0, "#dff1e6"))
    for a, b, colour in bands:
        parts.append(f'<rect x="{x(a):.1f}" y="10" width="{x(b) - x(a):.1f}" height="{height - 40}" fill="{colour}"/>')
    for tick in (-0.2, 0.0, 0.2, 0.4, 0.6, 0.8, 1.0):
        parts.append(f'<line x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="10" y2="{height - 28}" stroke="#ccd" '
                     'stroke-width="0.5"/>')
        parts.append(f'<text x="{x(tick):.1f}" y="{height - 12}" font-size="11" text-anchor="middle">{tick:.1f}</text>')
    for i, (label, agr) in enumerate(rows):
        y = 10 + row_h * i + row_h / 2
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="12" text-anchor="end">{escape(label)}</text>')
        if agr.ci95:
            parts.append(f'<line x1="{x(agr.ci95[0]):.1f}" x2="{x(agr.ci95[1]):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                         'stroke="#334" stroke-width="2"/>')
        if math.isfinite(agr.value):
            parts.append(f'<circle cx="{x(agr.value):.1f}" cy="{y:.1f}" r="4.5" fill="#4a63c8"/>')
    parts.append("</svg>")
    return "".join(parts)


def _heatmap(report: CalibrationReport) -> str:
    scale = report.scale
    k = len(scale)
    cell, left, top = 54, 70, 40
    size_w, size_h = left + cell * k + 10, top + cell * k + 30
    norm = report.row_normalised()
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size_w}" height="{size_h}" role="img" '
             'aria-label="confusion matrix">',
             f'<text x="{left + cell * k / 2:.0f}" y="14" font-size="12" text-anchor="middle">judge grade</text>',
             f'<text x="14" y="{top + cell * k / 2:.0f}" font-size="12" text-anchor="middle" '
             f'transform="rotate(-90 14 {top + cell * k / 2:.0f})">human grade</text>']
    for j, g in enumerate(scale):
        parts.append(f'<text x="{left + cell * j + cell / 2:.0f}" y="{top - 6}" font-size="12" '
                     f'text-anchor="middle">{g}</text>')
    for i, g in enumerate(scale):
        parts.append(f'<text x="{left - 8}" y="{top + cell * i + cell / 2 + 4:.0f}" font-size="12" '
                     f'text-anchor="end">{g}</text>')
        for j in range(k):
            share = norm[i][j] or 0.0
            shade = int(255 - 180 * share)
            colour = f"rgb({shade},{shade + (255 - shade) // 3},255)"
            text_colour = "#fff" if share > 0.55 else "#111"
            parts.append(f'<rect x="{left + cell * j}" y="{top + cell * i}" width="{cell}" height="{cell}" '
                         f'fill="{colour}" stroke="#fff"/>')
            parts.append(f'<text x="{left + cell * j + cell / 2:.0f}" y="{top + cell * i + cell / 2:.0f}" '
                         f'font-size="12" text-anchor="middle" fill="{text_colour}">{report.confusion_matrix[i][j]}</text>')
            parts.append(f'<text x="{left + cell * j + cell / 2:.0f}" y="{top + cell * i + cell / 2 + 14:.0f}" '
                         f'font-size="10" text-anchor="middle" fill="{text_colour}">{100 * share:.0f}%</text>')
    parts.append("</svg>")
    return "".join(parts)


def _distributions(report: CalibrationReport) -> str:
    scale = report.scale
    width, height, left, bottom = 360, 200, 30, 30
    total_j = max(sum(report.judge_distribution), 1)
    total_h = max(sum(report.human_distribution), 1)
    shares = [(h / total_h, j / total_j) for h, j in zip(report.human_distribution, report.judge_distribution)]
    top = max(max(max(s) for s in shares), 1e-9)
    group = (width - left) / len(scale)
    bar = group / 3
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 20}" role="img" '
             'aria-label="grade distributions">']
    for i, (g, (hs, js)) in enumerate(zip(scale, shares)):
        x0 = left + group * i + group / 6
        for off, share, colour in ((0, hs, "#8a94a6"), (bar, js, "#4a63c8")):
            h = (height - bottom - 20) * share / top
            parts.append(f'<rect x="{x0 + off:.1f}" y="{height - bottom - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                         f'fill="{colour}"/>')
            parts.append(f'<text x="{x0 + off + bar / 2:.1f}" y="{height - bottom - h - 3:.1f}" font-size="10" '
                         f'text-anchor="middle">{100 * share:.0f}%</text>')
        parts.append(f'<text x="{x0 + bar:.1f}" y="{height - bottom + 14}" font-size="12" text-anchor="middle">{g}</text>')
    parts.append(f'<rect x="{left}" y="{height + 2}" width="10" height="10" fill="#8a94a6"/>'
                 f'<text x="{left + 14}" y="{height + 11}" font-size="11">human</text>'
                 f'<rect x="{left + 70}" y="{height + 2}" width="10" height="10" fill="#4a63c8"/>'
                 f'<text x="{left + 84}" y="{height + 11}" font-size="11">judge</text></svg>')
    return "".join(parts)


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], num: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = "".join(f'<td class="num">{c}</td>' if i in num else f"<td>{c}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def render_sections(
    report: CalibrationReport,
    *,
    disagreements: Sequence[Disagreement] | None = (),
    max_disagreements: int = 200,
    text_chars: int = 600,
) -> str:
    """HTML fragments (no ``<html>``/``<body>``) for one judge; reusable inside a larger report.

    ``disagreements=None`` leaves the audit table out (a larger report places
    :func:`render_disagreements` itself)."""
    name = escape(report.judge)
    out = [f'<section class="calibration"><h2>Judge {name}'
           + (f' <span class="small">({escape(report.model)})</span>' if report.model else "") + "</h2>"]
    tone = verdict_tone(report.verdict.band)
    out.append(f'<p class="verdict {tone}"><span class="tone">{TONE_WORDS[tone]}</span>'
               f'{escape(report.verdict.text)}</p>')
    if report.model and report.model.startswith("local/"):
        out.append('<p class="warn">This is the embedded local judge: a plumbing default with near-zero agreement '
                   "with humans. Do not base decisions on its labels.</p>")
    out.append(f'<p class="small">{plural(report.n_pairs, "pair")} over {plural(report.n_queries, "query", "queries")} '
               'labeled by both; '
               f"{report.n_unjudged} unjudged, {report.n_judge_only} judged only, {report.n_human_only} human only. "
               f"95% CIs: {escape(report.ci_method.name)} ({report.n_boot} resamples of queries, seed "
               f"{report.seed}); {escape(BCA.name)} for the rank correlations, AUC and the human ceiling. "
               f"Method: {escape(report.ci_method.described)}. "
               "Verdict on unweighted Cohen's κ, Landis &amp; Koch bands.</p>")
    forest = [(label, getattr(report, key)) for key, label in FOREST_ROWS]
    for key, value in report.continuous.items():
        forest.append((key, value))
    ha = report.human_agreement
    if ha is not None:
        forest.append(("human–human κ", ha.pairwise_kappa))
        if ha.judge_kappa is not None:
            forest.append(("judge vs annotators κ", ha.judge_kappa))
    out.append("<h3>Agreement with 95% CIs</h3>")
    out.append('<div class="grid">' + _forest(forest) + _table(
        ["statistic", "value (95% CI)"],
        [[escape(label), escape(_fmt(value))] for label, value in forest]
        + [["leniency (judge − human, grades)", escape(_fmt(report.leniency))]], num=(1,)) + "</div>")
    if ha is not None:
        out.append(f"<h3>Human ceiling</h3><p>{ha.n_annotators} annotators overlap on {ha.n_pairs} pairs "
                   f"({ha.n_queries} queries): human–human κ {escape(_fmt(ha.pairwise_kappa))}, α "
                   f"{escape(_fmt(ha.alpha))}; the judge against the same annotators κ {escape(_fmt(ha.judge_kappa))}; "
                   f"gap {escape(_fmt(ha.gap))}.</p>")
    out.append('<h3>Confusion matrix and grade distributions</h3><div class="grid">'
               + _heatmap(report) + _distributions(report) + "</div>")
    pg_rows = [[str(g), escape(_fmt(v["precision"])), escape(_fmt(v["recall"]))] for g, v in report.per_grade.items()]
    out.append(_table(["grade", "precision (95% CI)", "recall (95% CI)"], pg_rows, num=(1, 2)))
    if report.mapping is not None:
        m = report.mapping
        out.append(f"<h3>Mapping onto the human scale</h3><p>{escape(m.message)}</p>")
        out.append(_table(["judge grade", "mapped grade"], [[str(a), str(b)] for a, b in m.table().items()], num=(0, 1)))
    if report.notes:
        out.append("<h3>Notes</h3><ul>" + "".join(f"<li>{escape(n)}</li>" for n in report.notes) + "</ul>")
    if disagreements is not None:
        out.append(render_disagreements(disagreements, max_disagreements=max_disagreements, text_chars=text_chars))
    out.append("</section>")
    return "\n".join(out)


def render_disagreements(disagreements: Sequence[Disagreement], *, max_disagreements: int = 200,
                         text_chars: int = 600) -> str:
    """The human-audit table of judge/human disagreements (largest gaps first), capped at ``max_disagreements``."""
    out = [f"<h3>Disagreements for the human audit ({len(disagreements)})</h3>"]
    if not disagreements:
        out.append("<p>None.</p>")
        return "\n".join(out)
    shown = list(disagreements)[:max_disagreements]
    rows = []
    for d in shown:
        text = d.text if len(d.text) <= text_chars else d.text[: text_chars - 1] + "…"
        rows.append([escape(d.query_id) + (f"<br><span class='small'>{escape(d.query)}</span>" if d.query else ""),
                     f"<span class='small'>{escape(d.doc_id)}</span>"
                     + (f"<div class='chunk'>{escape(text)}</div>" if text else ""),
                     str(d.human), str(d.judge), escape(d.reason)])
    out.append(_table(["query", "chunk", "human", "judge", "reason"], rows, num=(2, 3)))
    if len(disagreements) > len(shown):
        out.append(f'<p class="small">{len(disagreements) - len(shown)} more not shown (largest gaps first).</p>')
    return "\n".join(out)


def render_page(
    reports: Sequence[CalibrationReport],
    *,
    disagreements: Sequence[Sequence[Disagreement]] | None = None,
    combination_html: str = "",
    audit: Mapping[str, Any] | None = None,
    title: str = "relgrade calibration report",
) -> str:
    """A full self-contained HTML page for one or more judges; ``audit``: the judge's audit (``relgrade audit
    --json``), in a section of its own after them (:func:`render_audit`)."""
    disagreements = disagreements or [()] * len(reports)
    body = "\n".join(render_sections(r, disagreements=d) for r, d in zip(reports, disagreements))
    tail = "" if audit is None else render_audit(audit)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
            f"<h1>{escape(title)}</h1>{combination_html}{body}{tail}</body></html>\n")


def render_audit(audit: Mapping[str, Any], *, source: str | None = None) -> str:
    """HTML for a judge's audit (the dict of ``relgrade audit --json``): what it found, one row per probe, and the
    system models that share the judge's family."""
    settings = audit.get("settings") or {}
    probes = list((audit.get("probes") or {}).values())
    biases = [p for p in probes if p.get("bias")]
    where = f", {escape(source)}" if source else ""
    out = [f'<section class="audit"><h2>Judge audit: biases <span class="small">({escape(str(audit.get("model")))}, '
           f'{plural(int(audit.get("n_pairs", 0)), "pair")} of {plural(int(audit.get("n_queries", 0)), "query", "queries")}'
           f"{where})</span></h2>"]
    if biases:
        found = "; ".join(f"{p['probe']}: {p['verdict']}" for p in biases)
        out.append(f'<p class="warn">The judge\'s grades move with what a probe changes, not with relevance. {escape(found)}. '
                   "PPI++ estimates stay unbiased (the human labels correct it); numbers on judge labels alone carry "
                   "it.</p>")
    else:
        out.append(f'<p class="verdict">No bias of {float(settings.get("min_shift", 0.25)):g} grade or more in '
                   f"{len(probes)} probes.</p>")
    if audit.get("complete") is False:
        out.append('<p class="warn">The audit is incomplete (a budget stop or failed calls): the probes rest on the '
                   "pairs answered.</p>")

    def num(v, fmt="{:+.2f}"):
        return "" if v is None else fmt.format(v)

    rows = [[escape(p["probe"]), escape("stored answer" if p["baseline"] == "original" else p["baseline"]),
             escape(p.get("what", "")), str(p["n_pairs"]), num(p["shift"]),
             "" if p["ci95"] is None else f"{p['ci95'][0]:+.2f} – {p['ci95'][1]:+.2f}",
             num(p["changed"], "{:.0%}"), escape(p["verdict"])] for p in probes]
    out.append(_table(["probe", "compared with", "what changes", "pairs", "shift (grades)", "95% CI", "changed",
                       "verdict"], rows, num=(3, 4, 5, 6)))
    for c in audit.get("circularity") or ():
        if c.get("shared"):
            out.append(f'<p class="warn">Circularity: the system model {escape(str(c["system_model"]))} shares the '
                       f"judge's model family ({escape(str(c.get('judge_family')))}).</p>")
    out.append(f'<p class="small">95% CIs: {escape(str(settings.get("method", "")))}. A bias: the interval excludes 0 '
               "and the shift is at least the minimum shift; changed: the share of pairs whose grade moved (the "
               "identity probe's share is the judge's own noise).</p></section>")
    return "\n".join(out)


def render_combination(combo) -> str:
    """HTML for a :class:`~relgrade.calibration.CombinationReport`."""
    rows = [[escape(c.name), escape(_fmt(c.kappa)), escape(_fmt(c.gain, 3) if c.gain else "—"), escape(c.message)]
            for c in combo.combinations]
    return (f"<section><h2>Several judges ({combo.n_pairs} pairs, {combo.n_queries} queries)</h2>"
            f'<p class="verdict">{escape(combo.recommendation)}</p>'
            + _table(["judge / combination", "κ (95% CI)", "gain vs best", "decision"], rows, num=(1, 2))
            + "</section>")
