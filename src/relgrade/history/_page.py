"""The trend page of :func:`relgrade.history.history`: one self-contained HTML file (inline CSS and SVG, no script,
nothing fetched, every text from the reports escaped), like the demo report.

Per metric a chart: each report's value (a dot) with its 95% interval (a vertical bar), joined in order, the
gate's threshold as a dashed red line labelled in the right margin (clear of every point), dots below it in red, a
red ring round a report resting on judge labels whose calibration says not to use them, and a dotted mark where
the labels or the corpus changed. Below, bars of leaks and failed queries per report (or one sentence when no
report has any to show), then the table of every value with its interval, its source and the judge's verdict.
"""

from __future__ import annotations

from html import escape

from relgrade.history._series import History

W, H, LEFT, RIGHT, TOP, BOTTOM = 760, 250, 56, 84, 16, 46
CSS_EXTRA = """
svg.trend{display:block;margin:.4rem 0 1rem;max-width:100%;height:auto;background:#fbfcfe;border:1px solid #e1e4ee;border-radius:6px}
.below{color:#b3261e;font-weight:600}.legend span{margin-right:1.2rem}
"""


def _x(i: int, n: int) -> float:
    return LEFT + (W - LEFT - RIGHT) * (0.5 if n == 1 else i / (n - 1))


def _range(h: History, metric: str) -> tuple[float, float]:
    values = [p.values[metric] for p in h.points]
    values += [c for p in h.points if p.ci95[metric] for c in p.ci95[metric]]
    if h.thresholds.get(metric) is not None:
        values.append(h.thresholds[metric])
    lo, hi = min(values), max(values)
    pad = max(0.02, (hi - lo) * 0.1)
    return max(0.0, lo - pad), min(1.0, hi + pad) if hi + pad > lo else lo + pad


def _labels(h: History) -> str:
    n = len(h.points)
    step = max(1, n // 12)
    out = []
    for i, p in enumerate(h.points):
        if i % step == 0 or i == n - 1:
            out.append(f'<text x="{_x(i, n):.1f}" y="{H - BOTTOM + 16}" text-anchor="middle" font-size="11" '
                       f'fill="#445">{escape(p.label[:14])}</text>')
    return "".join(out)


def metric_chart(h: History, metric: str) -> str:
    lo, hi = _range(h, metric)
    y = lambda v: TOP + (H - TOP - BOTTOM) * (1 - (v - lo) / ((hi - lo) or 1))  # noqa: E731
    n = len(h.points)
    parts = [f'<svg class="trend" data-metric="{escape(metric)}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" '
             f'role="img" aria-label="{escape(metric)} over {n} reports">']
    for k in range(5):
        v = lo + (hi - lo) * k / 4
        parts.append(f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#e6e8f0"/>'
                     f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end" font-size="11" fill="#556">{v:.2f}</text>')
    for i, p in enumerate(h.points):
        if p.changed:
            parts.append(f'<line class="changed" x1="{_x(i, n):.1f}" x2="{_x(i, n):.1f}" y1="{TOP}" y2="{H - BOTTOM}" '
                         f'stroke="#8a8fa8" stroke-dasharray="2 3"><title>{escape(", ".join(p.changed))} changed'
                         '</title></line>')
    t = h.thresholds.get(metric)
    if t is not None:
        parts.append(f'<line class="threshold" x1="{LEFT}" x2="{W - RIGHT}" y1="{y(t):.1f}" y2="{y(t):.1f}" '
                     f'stroke="#b3261e" stroke-width="1.5" stroke-dasharray="6 4"/><text class="threshold-label" '
                     f'x="{W - RIGHT + 10}" y="{y(t) + 4:.1f}" font-size="11" fill="#b3261e">gate {t:.3f}</text>')
    path = " ".join(f"{_x(i, n):.1f},{y(p.values[metric]):.1f}" for i, p in enumerate(h.points))
    parts.append(f'<polyline points="{path}" fill="none" stroke="#2e47b0" stroke-width="1.5"/>')
    for i, p in enumerate(h.points):
        x, v, ci = _x(i, n), p.values[metric], p.ci95[metric]
        if ci:
            parts.append(f'<line class="ci" x1="{x:.1f}" x2="{x:.1f}" y1="{y(ci[0]):.1f}" y2="{y(ci[1]):.1f}" '
                         'stroke="#9fb0e6" stroke-width="6" stroke-linecap="round"/>')
        below = t is not None and v < t - 1e-12
        tip = f"{p.label}: {metric} {v:.4f}" + (f" [{ci[0]:.4f}, {ci[1]:.4f}]" if ci else "") + (
            f" ({p.time})" if p.time else "") + f"; source {p.source}" + (f"; judge {p.judge}" if p.judge else "")
        if p.judge_do_not_use:
            parts.append(f'<circle class="judge-warning" cx="{x:.1f}" cy="{y(v):.1f}" r="8" fill="none" '
                         'stroke="#b3261e" stroke-width="1.5"/>')
        parts.append(f'<circle class="point{" below" if below else ""}" cx="{x:.1f}" cy="{y(v):.1f}" r="4.5" '
                     f'fill="{"#b3261e" if below else "#2e47b0"}"><title>{escape(tip)}</title></circle>')
    parts.append(_labels(h) + "</svg>")
    return "".join(parts)


def counts_chart(h: History) -> str:
    """The bars of leaks and failed queries per report; one sentence instead when no report has any to show."""
    n = len(h.points)
    known = [c for p in h.points for c in (p.leaks, p.failures) if c is not None]
    if not any(known):
        what = ("no report lists a leak or a failed query" if known
                else "the reports carry no leak or failed-query information")
        return f'<p class="small counts-none">Nothing to chart: {what}.</p>'

    top = max([1] + [c for p in h.points for c in (p.leaks, p.failures) if c is not None])
    y = lambda v: TOP + (H - TOP - BOTTOM) * (1 - v / top)  # noqa: E731
    bw = min(14.0, (W - LEFT - RIGHT) / max(n, 1) / 3)
    parts = [f'<svg class="trend counts" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" '
             f'aria-label="leaks and failed queries over {n} reports">',
             f'<line x1="{LEFT}" x2="{W - RIGHT}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#aab"/>',
             f'<text x="{LEFT - 6}" y="{y(top) + 4:.1f}" text-anchor="end" font-size="11" fill="#556">{top}</text>',
             f'<text x="{LEFT - 6}" y="{y(0) + 4:.1f}" text-anchor="end" font-size="11" fill="#556">0</text>']
    for i, p in enumerate(h.points):
        x = _x(i, n)
        for offset, value, colour, what in ((-bw, p.failures, "#e0a000", "failed queries"), (0, p.leaks, "#b3261e", "leaks")):
            if value is None:
                continue
            height = max(1.5, y(0) - y(value)) if value else 1.5
            parts.append(f'<rect class="bar {what.split()[0]}" x="{x + offset:.1f}" y="{y(0) - height:.1f}" width="{bw:.1f}" '
                         f'height="{height:.1f}" fill="{colour}"><title>{escape(p.label)}: {value} {what}</title></rect>')
    parts.append(_labels(h) + "</svg>")
    return "".join(parts)


def render_page(h: History, *, title: str = "relgrade: retrieval quality over time") -> str:
    """The whole page as a string (module docstring)."""
    from relgrade.calibration._report import CSS

    sections = []
    for m in h.metrics:
        below = h.below(m)
        note = (f'<p class="below">{len(below)} of {len(h.points)} reports below the gate threshold: '
                f'{escape(", ".join(p.label for p in below))}</p>' if below else "")
        sections.append(f'<h2 id="m-{escape(m)}">{escape(m)}</h2>{metric_chart(h, m)}{note}')
    rows = "".join("<tr>" + f"<td>{escape(p.label)}</td><td>{escape(p.time or '')}</td><td>{escape(p.source)}</td>"
                   + f'<td{" class=below" if p.judge_do_not_use else ""}>{escape(p.judge or "")}</td>' + "".join(
        f'<td class="num">{p.values[m]:.4f}' + (f' <span class="small">[{p.ci95[m][0]:.3f}, {p.ci95[m][1]:.3f}]</span>'
                                                if p.ci95[m] else "") + "</td>" for m in h.metrics)
        + f'<td class="num">{"n/a" if p.leaks is None else p.leaks}</td>'
        + f'<td class="num">{"n/a" if p.failures is None else p.failures}</td>'
        + f"<td>{escape(', '.join(p.changed))}</td></tr>" for p in h.points)
    head = "".join(f"<th>{escape(x)}</th>" for x in ["report", "time", "source", "judge", *h.metrics, "leaks",
                                                      "failed queries", "changed"])
    order = "by the time each report records" if h.order == "time" else "in the order given"
    rule = f"Gate: {escape(h.rule)} (dashed red line)." if h.rule else "No gate threshold given."
    if h.rule:
        failures = h.failures
        rule += (f' <span class="below">The newest report, {escape(h.newest.label)}, fails: '
                 f'{escape("; ".join(failures))}.</span>' if failures
                 else f" The newest report, {escape(h.newest.label)}, passes.")
    notes = "".join(f"<li>{escape(x)}</li>" for x in h.notes)
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>{escape(title)}</title><style>{CSS}{CSS_EXTRA}</style></head><body>
<h1>{escape(title)}</h1>
<p class="small">{len(h.points)} reports, {order}. Each dot is a report's value, the light bar its 95% interval. {rule}
Dotted marks: the labels or the corpus changed there, so values on both sides measure different things.</p>
{"<ul>" + notes + "</ul>" if notes else ""}
{"".join(sections)}
<h2 id="counts">Leaks and failed queries</h2>
<p class="legend small"><span style="color:#e0a000">■ failed queries</span><span style="color:#b3261e">■ leaks (forbidden documents in the top k)</span></p>
{counts_chart(h)}
<h2 id="table">Every report</h2>
<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>
<p class="small">Generated by relgrade history.</p>
</body></html>
"""


__all__ = ["counts_chart", "metric_chart", "render_page"]
