"""The demo's one-file HTML report and its ``summary.json`` data.

Order: what to conclude first (verdict cards, the gate with its leaks, the metrics, the failed
queries), then the judge's calibration, and last the long audit table of judge/human disagreements,
collapsed. Every number comes from the library's own results: the gate from
:class:`relgrade.GateResult`, agreement from :class:`relgrade.calibration.CalibrationReport`, metrics
from :class:`relgrade.EvalReport` and :class:`relgrade.hybrid.EstimateReport`. Self-contained:
inline CSS and SVG, no script, nothing fetched; every text from the data is escaped.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from relgrade._intervals import MEAN_CI, PLUS_TWO, STUDENT_T
from relgrade._verdict import DO_NOT_USE, NOT_ALONE, WORTH_WITHHELD, tone
from relgrade.hybrid._estimate_report import WIDTH_HELP, worth_cell
from relgrade._words import plural as _plural

METRICS = ("recall@5", "recall@10", "mrr", "ndcg@5", "ndcg@10", "precision@5")
MAX_DISAGREEMENTS = 40
UNRELIABLE_BANDS = DO_NOT_USE + NOT_ALONE  # verdicts that say "do not use judge labels (alone)"

CSS_EXTRA = """
.hero{display:flex;gap:1rem;flex-wrap:wrap;margin:1rem 0}
.card{flex:1 1 200px;border:1px solid #dde;border-radius:8px;padding:.8rem 1rem;background:#fbfcfe}
.card .big{font-size:1.6rem;font-weight:600;font-variant-numeric:tabular-nums}
.pass{color:#19733a}.fail{color:#b3261e}.caution{color:#9a5b00}
.badge{display:inline-block;padding:.1rem .5rem;border-radius:4px;font-weight:600}
.badge.pass{background:#e3f4e8}.badge.fail{background:#fde7e5}
nav a{margin-right:1rem}
dl.cols dt{font-weight:600;margin-top:.3rem}dl.cols dd{margin-left:1.2rem}
details>summary{cursor:pointer;font-weight:600;margin:.6rem 0}
"""


def _ci(ci) -> str:
    return "" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _bar(value: float, lo: float | None, hi: float | None, width: int = 160) -> str:
    x = lambda v: 4 + max(0.0, min(1.0, v)) * (width - 8)  # noqa: E731
    parts = [f'<svg width="{width}" height="14" role="img" aria-label="value {value:.3f}">',
             f'<line x1="4" y1="7" x2="{width - 4}" y2="7" stroke="#e1e4ee" stroke-width="6"/>']
    if lo is not None and hi is not None:
        parts.append(f'<line x1="{x(lo):.1f}" y1="7" x2="{x(hi):.1f}" y2="7" stroke="#9fb0e6" stroke-width="6"/>')
    parts.append(f'<circle cx="{x(value):.1f}" cy="7" r="4" fill="#2e47b0"/></svg>')
    return "".join(parts)


def judge_unreliable(calibration) -> bool:
    """True when the verdict says not to use the judge's labels (alone): κ band poor/slight/fair or undefined."""
    return calibration.verdict.band in UNRELIABLE_BANDS


def _metrics_table(evals: dict[str, dict]) -> str:
    names = list(evals)
    head = "<tr><th>metric</th>" + "".join(f"<th>{escape(n)}: mean (95% CI)</th><th></th>" for n in names) + "</tr>"
    rows = []
    for m in METRICS:
        cells = [f"<td>{escape(m)}</td>"]
        for n in names:
            est = evals[n]["aggregate"].get(m)
            if est is None:
                cells.append("<td>n/a</td><td></td>")
                continue
            ci = est.get("ci95") or [None, None]
            cells.append(f'<td class="num">{est["value"]:.3f} <span class="small">{_ci(est.get("ci95"))}</span></td>'
                         f'<td>{_bar(est["value"], *ci)}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    n_q = {n: evals[n]["n_queries"] for n in names}
    return (f"<table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            "<p class='small'>Against the golden set's expected documents. Mean over the queries that have a "
            f"relevant document ({', '.join(f'{escape(n)}: {q}' for n, q in n_q.items())}); the 95% CI is "
            f"{escape(STUDENT_T.name)} over queries ({escape(STUDENT_T.definition)}), {escape(PLUS_TWO.name)} for a "
            "0/1 metric such as recall@k, drawn as the light bar around the dot on a 0–1 axis.</p>")


def _ppi_table(estimates: dict[str, Any], calibration, golden: dict[str, dict] | None = None) -> str:
    show_worth = not any(rep.worth_withheld for rep in estimates.values())  # one rule: relgrade._verdict
    head = ["run", "metric", "PPI++ (95% CI)", "human-only (95% CI)", "judge-only"]
    if show_worth:
        head.append("judge worth")
    rows, notes = [], {}  # each note once, with the runs and metrics it concerns
    for n, rep in estimates.items():
        for m, e in rep.estimates.items():
            cells = [escape(n), escape(m), f"{e.ppi:.3f} <span class='small'>{_ci(e.ppi_ci95)}</span>",
                     f"{e.human_only:.3f} <span class='small'>{_ci(e.human_ci95)}</span>",
                     "n/a" if e.judge_only is None else f"{e.judge_only:.3f}"]
            if show_worth:
                cells.append(escape(worth_cell(e.effective_n, e.n_labeled, e.lam, e.width_ratio)))
            for sentence in dict.fromkeys((e.note or "").split("; ")) if e.note else ():
                notes.setdefault(sentence, []).append(f"{n} {m}")
            rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    n_labeled = next(iter(estimates.values())).labeled if estimates else ()
    cols = [
        ("PPI++", "prediction-powered estimate: the judge's prediction on every query, corrected by the "
                  f"human–prediction difference on the {len(n_labeled)} human-labeled queries (Angelopoulos et al. "
                  f"2023, power-tuned). {_prediction_caption(estimates)} "
                  "Valid only if the labeled queries are a random sample; the interval is honest even for a bad "
                  "judge (it then stays as wide as the human-only one)."),
        ("human-only", f"the mean over the human-labeled queries alone, with its 95% interval: {escape(MEAN_CI)}."),
        ("judge-only", "the mean of the judge's prediction over every query: no interval, and biased by whatever "
                       "the prediction gets wrong."),
    ]
    if show_worth:
        cols.append(("judge worth", escape(WIDTH_HELP.split("; ", 1)[1]) + "."))
    else:
        cols.append(("no “judge worth” column", escape(WORTH_WITHHELD) + "."))
    legend = "<dl class='cols'>" + "".join(f"<dt>{escape(t)}</dt><dd>{d}</dd>" for t, d in cols) + "</dl>"
    note_html = ("<details><summary>Notes on degenerate intervals (" + str(len(notes)) + ")</summary><ul>"
                 + "".join(f"<li>{escape(', '.join(where))}: {escape(x)}</li>" for x, where in notes.items())
                 + "</ul></details>") if notes else ""
    return (f"<table><thead><tr>{''.join(f'<th>{escape(h)}</th>' for h in head)}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>{_golden_vs_ppi(estimates, golden)}{legend}{note_html}")


def _prediction_caption(estimates: dict[str, Any]) -> str:
    """What the estimates' prediction was (their ``settings.prediction``, as ``estimate`` prints it)."""
    desc = next(iter(estimates.values())).settings.get("prediction") or {} if estimates else {}
    if desc.get("kind") == "hard":
        return f"The prediction (hard) is {escape(str(desc.get('model', 'the metric on the judge grades')))}."
    return ("The prediction (soft, the default) blends two halves: the metric's expectation under the probability "
            "of each human grade given the judge's grade, fitted on the human labels by cross-fitting "
            f"({desc.get('folds', 'k')} folds: a labeled query's own labels never shape its prediction), and the "
            "metric on the judge's own grades, averaged half and half with weights fixed in advance.")


def _golden_vs_ppi(estimates: dict[str, Any], golden: dict[str, dict] | None, metric: str = "recall@5") -> str:
    """Why a run's metric differs between the golden set and the PPI++ estimate (issue 25: 0.88 and 1.000 for one
    run, without a word)."""
    if not golden:
        return ""
    pairs = [(n, golden[n]["aggregate"][metric]["value"], rep.estimates[metric].ppi) for n, rep in estimates.items()
             if n in golden and metric in golden[n]["aggregate"] and metric in rep.estimates]
    if not pairs:
        return ""
    said = "; ".join(f"{escape(n)}: {g:.3f} against the golden set, {p:.3f} by PPI++" for n, g, p in pairs)
    return (f"<p class='small'><b>Why {metric} differs from the metrics above</b> ({said}): the golden set counts a "
            "hit only for the documents it lists as expected for a query; these estimates count any chunk that the "
            "human labels (and, corrected by them, the judge) grade relevant (grade ≥ 1), over the queries with a "
            "relevant document under those labels. Graders usually find more relevant chunks in the top 5 than a "
            "golden set lists, so the two answer different questions: has the retriever found the expected "
            "document, and has it found something relevant.</p>")


def _no_answer_rows(na: list[dict]) -> str:
    has_score = any(r.get("top_score") is not None for r in na)
    head = "<th>query</th><th>text</th><th>what the retriever returned first</th>" + ("<th>score</th>" if has_score else "")
    rows = []
    for r in na:
        top = "nothing retrieved" if r.get("top_doc") is None else escape(str(r["top_doc"]))
        cells = f"<td>{escape(str(r['query_id']))}</td><td>{escape(r.get('query') or '')}</td><td>{top}</td>"
        if has_score:
            cells += ("<td>n/a</td>" if r.get("top_score") is None else f"<td class='num'>{r['top_score']:.3f}</td>")
        rows.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _failures(evals: dict[str, dict]) -> str:
    out = []
    for n, ev in evals.items():
        fails = ev.get("failures", [])
        k = ev.get("settings", {}).get("failure_k", 5)
        out.append(f"<h3>{escape(n)}: {_plural(len(fails), 'failed query', 'failed queries')} "
                   f"(no relevant document in the top {k})</h3>")
        if fails:
            rows = "".join(
                f"<tr><td>{escape(str(f['query_id']))}</td><td>{escape(f.get('query') or '')}</td>"
                f"<td>{escape(', '.join(f['expected']))}</td><td>{escape(', '.join(f['got']))}</td></tr>" for f in fails)
            out.append("<table><thead><tr><th>query</th><th>text</th><th>expected (golden set)</th>"
                       f"<th>got (top {k})</th></tr></thead><tbody>{rows}</tbody></table>")
        else:
            out.append("<p>None.</p>")
        na = ev.get("no_answer", [])
        if na:
            out.append(f"<p class='small'>{_plural(len(na), 'no-answer query', 'no-answer queries')} (the golden set "
                       "has no relevant document for them, so they are kept out of the means):</p>" + _no_answer_rows(na))
    return "".join(out)


def leak_sentence(gate) -> str:
    """What the candidate leaks, counted: documents, distinct documents, queries."""
    leaks = gate.leaks
    if not leaks:
        return f"{gate.current} retrieves no forbidden document."
    docs = {x["doc_id"] for x in leaks}
    queries = {x["query_id"] for x in leaks}
    return (f"{gate.current} retrieves {_plural(len(leaks), 'forbidden document', 'forbidden documents')} "
            f"({_plural(len(docs), 'distinct chunk', 'distinct chunks')} private to another tenant) in the top 10 of "
            f"{_plural(len(queries), 'tenant query', 'tenant queries')}.")


def _gate(gate, evals: dict[str, dict]) -> str:
    html = [f'<p><span class="badge {"pass" if gate.passed else "fail"}">gate: {"pass" if gate.passed else "FAIL"}</span> '
            f"{escape(gate.current)} (candidate) against {escape(gate.baseline)} (baseline); rule: "
            f"{escape(gate.rule)} on {escape(', '.join(r.metric for r in gate.rows))}, and no forbidden document "
            "in the top 10.</p>"]
    rows = "".join(f"<tr><td>{escape(r.metric)}</td><td class='num'>{r.baseline:.3f}</td><td class='num'>{r.current:.3f}"
                   f"</td><td class='num'>{r.change:+.3f}</td><td>{'ok' if r.passed else 'FAIL: regression'}</td></tr>"
                   for r in gate.rows)
    html.append("<table><thead><tr><th>metric</th><th>baseline</th><th>candidate</th><th>change</th><th>verdict</th>"
                f"</tr></thead><tbody>{rows}</tbody></table>")
    other = [r for r in gate.reasons if not r.startswith("leak:")]  # the leak sentence below says it in full
    if other:
        html.append("<ul>" + "".join(f"<li>{escape(r)}</li>" for r in other) + "</ul>")
    html.append(f"<p>{escape(leak_sentence(gate))}</p>")
    if gate.leaks:
        queries = {q["query_id"]: q.get("query") for ev in evals.values() for q in ev.get("leaks", [])}
        rows = "".join(f"<tr><td>{escape(str(r['query_id']))}</td><td>{escape(queries.get(r['query_id']) or '')}</td>"
                       f"<td>{escape(r['doc_id'])}</td><td class='num'>{r['rank']}</td></tr>" for r in gate.leaks)
        html.append("<table><thead><tr><th>query</th><th>text</th><th>forbidden document</th><th>rank</th></tr></thead>"
                    f"<tbody>{rows}</tbody></table>")
    return "".join(html)


def build_report(out: Path, *, baseline, candidate, model, calibration, audit, evaluations, estimates, gate, details,
                 store) -> dict[str, Any]:
    """Write ``out/report.html``; return the data for ``summary.json``."""
    from relgrade.calibration import render_disagreements, render_sections
    from relgrade.calibration._report import CSS

    evals = {n: r.to_dict() for n, r in evaluations.items()}
    kappa = calibration.kappa
    result = "pass" if gate.passed else "FAIL"
    no_ci = calibration.verdict.no_ci
    cards = [("judge κ vs humans (95% CI)", f"{kappa.value:.2f}",
              (_ci(kappa.ci95) if kappa.ci95 else f"no CI: {no_ci}" if no_ci else "no CI")
              + f" · {calibration.verdict.band}", " " + tone(calibration.verdict.band))]  # the verdict's colour
    for n in evals:
        r5 = evals[n]["aggregate"]["recall@5"]
        cards.append((f"{n} recall@5 (95% CI)", f"{r5['value']:.2f}", _ci(r5.get("ci95")), ""))
    cards.append(("gate", result, "; ".join(gate.reasons) or "no regression, no leak", " pass" if gate.passed else " fail"))
    hero = "".join(f'<div class="card"><div class="small">{escape(t)}</div><div class="big{c}">{escape(v)}</div>'
                   f'<div class="small">{escape(s)}</div></div>' for t, v, s, c in cards)
    local_note = ""
    if model.startswith("local/"):
        local_note = ('<p class="warn">The judge is the embedded local model (Gemma 3 270M base): a plumbing default '
                      "that runs anywhere offline, with near-zero agreement with human labels. Re-run with "
                      "<code>--model openai/gpt-4o-mini</code> (or any litellm model) for judgments worth using.</p>")
    verdict = (f"<p><b>Verdict.</b> The gate {'passes' if gate.passed else 'fails'}: "
               + escape("; ".join(gate.reasons) if gate.reasons else "no regression and no leak")
               + f". Judge: {escape(calibration.verdict.text)}.</p>")
    page = f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>relgrade demo report</title><style>{CSS}{CSS_EXTRA}</style></head><body>
<h1>relgrade demo report</h1>
<p class="small">Bundled product documentation, {len(evals[baseline]['per_query'])} answerable queries, two retriever
configurations: <b>{escape(baseline)}</b> (baseline, with the tenant filter) and <b>{escape(candidate)}</b> (candidate,
without it). Judge: <code>{escape(model)}</code>.</p>
{local_note}
<div class="hero">{hero}</div>
{verdict}
<nav><a href="#gate">Gate</a><a href="#metrics">Metrics</a><a href="#failures">Failures</a><a href="#ppi">PPI++</a>
<a href="#calibration">Calibration</a><a href="#audit">Disagreements</a></nav>
<h2 id="gate">CI gate</h2>{_gate(gate, evals)}
<h2 id="metrics">Retrieval metrics (golden set)</h2>{_metrics_table(evals)}
<h2 id="failures">Failure analysis</h2>{_failures(evals)}
<h2 id="ppi">Prediction-powered estimates (human labels on some queries + the judge on all)</h2>{_ppi_table(estimates, calibration, evals)}
<div id="calibration">{render_sections(calibration, disagreements=None)}</div>
<h2 id="audit">Disagreements for the human audit</h2>
<details><summary>{_plural(len(audit), 'pair')} where the judge and the humans disagree (largest gaps first; the first
{min(len(audit), MAX_DISAGREEMENTS)} shown)</summary>{render_disagreements(audit, max_disagreements=MAX_DISAGREEMENTS, text_chars=300)}</details>
<p class="small">Generated by relgrade. Every file behind these numbers is in {escape(str(out))}; judgments in {escape(str(store))}.</p>
</body></html>
"""
    (out / "report.html").write_text(page, encoding="utf-8")
    return {
        "model": model,
        "calibration": {"kappa": kappa.to_dict(), "kappa_quadratic": calibration.kappa_quadratic.to_dict(),
                        "verdict": calibration.verdict.text, "band": calibration.verdict.band,
                        "n_pairs": calibration.n_pairs, "n_queries": calibration.n_queries},
        "runs": {n: {**{m: evals[n]["aggregate"][m] for m in METRICS if m in evals[n]["aggregate"]},
                     "leaks": len(evals[n].get("leaks") or []), "failures": len(evals[n].get("failures", []))}
                 for n in evals},
        "ppi": {n: rep.to_dict()["aggregate"] for n, rep in estimates.items()},
        "gate": gate.to_dict(),
        "files": {"report": str(out / "report.html"), "calibration_report": str(out / "calibration.html"),
                  "judge_details": str(details), "store": str(store)},
    }


__all__ = ["build_report", "judge_unreliable", "leak_sentence"]
