"""The demo's one-file HTML report and its ``summary.json`` data.

Self-contained: inline CSS and SVG, no script, nothing fetched. Every text from the data (queries,
chunks, reasons) is escaped; the calibration sections come from :mod:`relgrade.calibration`.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

METRICS = ("recall@5", "recall@10", "mrr", "ndcg@5", "ndcg@10", "precision@5")

CSS_EXTRA = """
.hero{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.card{flex:1 1 200px;border:1px solid #dde;border-radius:8px;padding:.8rem 1rem;background:#fbfcfe}
.card .big{font-size:1.6rem;font-weight:600;font-variant-numeric:tabular-nums}
.pass{color:#19733a}.fail{color:#b3261e}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:4px;font-weight:600}
.badge.pass{background:#e3f4e8}.badge.fail{background:#fde7e5}
nav a{margin-right:1rem}
"""


def _load(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _ci(est: dict) -> str:
    ci = est.get("ci95")
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _bar(value: float, lo: float | None, hi: float | None, width: int = 160) -> str:
    x = lambda v: 4 + max(0.0, min(1.0, v)) * (width - 8)  # noqa: E731
    parts = [f'<svg width="{width}" height="14" role="img" aria-label="value {value:.3f}">',
             f'<line x1="4" y1="7" x2="{width - 4}" y2="7" stroke="#e1e4ee" stroke-width="6"/>']
    if lo is not None and hi is not None:
        parts.append(f'<line x1="{x(lo):.1f}" y1="7" x2="{x(hi):.1f}" y2="7" stroke="#9fb0e6" stroke-width="6"/>')
    parts.append(f'<circle cx="{x(value):.1f}" cy="7" r="4" fill="#2e47b0"/></svg>')
    return "".join(parts)


def _metrics_table(evals: dict[str, dict], estimates: dict[str, dict]) -> str:
    names = list(evals)
    head = "<tr><th>metric</th>" + "".join(f"<th>{escape(n)} (golden set, 95% CI)</th><th></th>" for n in names) + "</tr>"
    rows = []
    for m in METRICS:
        cells = [f"<td>{escape(m)}</td>"]
        for n in names:
            est = evals[n]["aggregate"].get(m)
            if est is None:
                cells.append("<td></td><td></td>")
                continue
            ci = est.get("ci95") or [None, None]
            cells.append(f'<td class="num">{est["value"]:.3f} <span class="small">{_ci(est)}</span></td><td>{_bar(est["value"], *ci)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    out = [f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"]
    out.append("<h3>Prediction-powered estimates (human subset + judge on every query)</h3>")
    head = "<tr><th>run</th><th>metric</th><th>PPI++ (95% CI)</th><th>human only (95% CI)</th><th>judge only</th><th>judge worth</th></tr>"
    rows = []
    for n, est in estimates.items():
        for m, e in est["aggregate"].items():
            worth = e.get("effective_human_queries")
            worth_text = "n/a" if worth is None else f"{worth:.0f} queries (of {e['human_only']['n_queries']} labeled)"
            rows.append(f"<tr><td>{escape(n)}</td><td>{escape(m)}</td><td class='num'>{e['ppi']['value']:.3f} "
                        f"<span class='small'>{_ci(e['ppi'])}</span></td><td class='num'>{e['human_only']['value']:.3f} "
                        f"<span class='small'>{_ci(e['human_only'])}</span></td><td class='num'>{e['judge_only']['value']:.3f}</td>"
                        f"<td>{escape(worth_text)}</td></tr>")
    out.append(f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>")
    return "".join(out)


def _score(value) -> str:
    return "" if value is None else f"{value:.3f}"


def _failures(evals: dict[str, dict]) -> str:
    out = []
    for n, ev in evals.items():
        fails = ev.get("failures", [])
        out.append(f"<h3>{escape(n)}: {len(fails)} failed queries (no relevant doc in the top 5)</h3>")
        if not fails:
            out.append("<p>None.</p>")
            continue
        rows = "".join(
            f"<tr><td>{escape(str(f['query_id']))}</td><td>{escape(f.get('query') or '')}</td>"
            f"<td>{escape(', '.join(f['expected']))}</td><td>{escape(', '.join(f['got']))}</td></tr>" for f in fails)
        out.append(f"<table><thead><tr><th>query</th><th>text</th><th>expected</th><th>got (top 5)</th></tr></thead><tbody>{rows}</tbody></table>")
        na = ev.get("no_answer", [])
        if na:
            rows = "".join(f"<tr><td>{escape(str(r['query_id']))}</td><td>{escape(r.get('query') or '')}</td>"
                           f"<td>{escape(str(r.get('top_doc')))}</td><td class='num'>{_score(r.get('top_score'))}</td></tr>" for r in na)
            out.append(f"<p class='small'>{len(na)} no-answer queries (kept out of the means); what the retriever still returned first:</p>"
                       f"<table><thead><tr><th>query</th><th>text</th><th>top doc</th><th>score</th></tr></thead><tbody>{rows}</tbody></table>")
    return "".join(out)


def _gate(baseline: str, candidate: str, evals: dict[str, dict], code: int) -> tuple[str, dict]:
    b = evals[baseline]["aggregate"]["recall@5"]["value"]
    c = evals[candidate]["aggregate"]["recall@5"]["value"]
    leaks = evals[candidate].get("leaks", [])
    result = "pass" if code == 0 else "FAIL"
    reasons = []
    if b - c > 0.02 + 1e-12:
        reasons.append(f"recall@5 dropped {b - c:.3f} (> 0.02)")
    if leaks:
        reasons.append(f"{len(leaks)} leaks of forbidden documents")
    html = [f'<p><span class="badge {"pass" if code == 0 else "fail"}">gate: {result}</span> '
            f"{escape(candidate)} vs {escape(baseline)}: recall@5 {b:.3f} → {c:.3f}"
            + (f"; {escape('; '.join(reasons))}" if reasons else "") + "</p>"]
    if leaks:
        rows = "".join(f"<tr><td>{escape(str(r['query_id']))}</td><td>{escape(r.get('query') or '')}</td>"
                       f"<td>{escape(r['doc_id'])}</td><td class='num'>{r['rank']}</td></tr>" for r in leaks)
        html.append(f"<table><thead><tr><th>query</th><th>text</th><th>forbidden doc</th><th>rank</th></tr></thead><tbody>{rows}</tbody></table>")
    data = {"baseline": baseline, "current": candidate, "result": result, "exit_code": code, "reasons": reasons,
            "recall@5": {"baseline": b, "current": c}, "leaks": len(leaks)}
    return "".join(html), data


def build_report(out: Path, *, runs, baseline, candidate, model, details, human, calibration, evaluations, estimates,
                 gate_code) -> dict[str, Any]:
    """Write ``out/report.html``; return the data for ``summary.json``."""
    from relgrade.calibration import agreement, disagreements, read_human, read_judge, render_sections
    from relgrade.calibration._report import CSS

    evals = {n: _load(p) for n, p in evaluations.items()}
    ests = {n: _load(p) for n, p in estimates.items()}
    cal = _load(calibration)
    humans = read_human(human)
    judge = read_judge(details)
    report = agreement(judge.labels, humans.labels, expected=judge.expected, annotations=humans.annotations or None,
                       name="the demo judge", model=judge.model or model, n_unjudged=judge.n_unjudged)
    if "mapping" in cal:
        import dataclasses

        from relgrade.calibration import GradeMapping

        report = dataclasses.replace(report, mapping=GradeMapping.from_dict(cal["mapping"]))
    audit = disagreements(judge.labels, humans.labels, info={**humans.info, **judge.info})
    gate_html, gate_data = _gate(baseline, candidate, evals, gate_code)
    kappa = cal["kappa"]
    cards = [("judge κ vs humans", f"{kappa['value']:.2f}", _ci(kappa))]
    for n in runs:
        r5 = evals[n]["aggregate"]["recall@5"]
        cards.append((f"{n} recall@5", f"{r5['value']:.2f}", _ci(r5)))
    cards.append(("gate", gate_data["result"], "; ".join(gate_data["reasons"]) or "no regression"))
    hero = "".join(f'<div class="card"><div class="small">{escape(t)}</div><div class="big'
                   + (" fail" if v == "FAIL" else " pass" if v == "pass" else "") + f'">{escape(v)}</div>'
                   f'<div class="small">{escape(s)}</div></div>' for t, v, s in cards)
    local_note = ""
    if model.startswith("local/"):
        local_note = ('<p class="warn">The judge is the embedded local model (Gemma 3 270M base): a plumbing default '
                      "that runs anywhere offline, with near-zero agreement with human labels. Re-run with "
                      "<code>--model openai/gpt-4o-mini</code> (or any litellm model) for judgments worth using.</p>")
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>relgrade demo report</title><style>{CSS}{CSS_EXTRA}</style></head><body>
<h1>relgrade demo report</h1>
<p class="small">Bundled product documentation, {len(evals[baseline]['per_query'])} answerable queries, two retriever
configurations: <b>{escape(baseline)}</b> (baseline) and <b>{escape(candidate)}</b> (candidate). Judge: <code>{escape(model)}</code>.</p>
{local_note}
<div class="hero">{hero}</div>
<nav><a href="#metrics">Metrics</a><a href="#gate">Gate</a><a href="#calibration">Calibration</a><a href="#failures">Failures</a></nav>
<h2 id="metrics">Retrieval metrics</h2>{_metrics_table(evals, ests)}
<h2 id="gate">CI gate (recall@5, max drop 0.02, no leaks)</h2>{gate_html}
<div id="calibration">{render_sections(report, disagreements=audit, max_disagreements=40)}</div>
<h2 id="failures">Failure analysis</h2>{_failures(evals)}
<p class="small">Generated by relgrade. Every file behind these numbers is in {escape(str(out))}.</p>
</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
    return {
        "model": model,
        "calibration": {"kappa": kappa, "kappa_quadratic": cal.get("kappa_quadratic"), "verdict": cal["verdict"]["text"],
                        "n_pairs": cal["n_pairs"], "n_queries": cal["n_queries"]},
        "runs": {n: {**{m: evals[n]["aggregate"][m] for m in METRICS if m in evals[n]["aggregate"]},
                     "leaks": len(evals[n].get("leaks", [])), "failures": len(evals[n].get("failures", []))} for n in runs},
        "ppi": {n: ests[n]["aggregate"] for n in ests},
        "gate": gate_data,
        "files": {"report": str(out / "report.html"), "calibration_report": str(out / "calibration.html"),
                  "judge_details": str(details)},
    }
