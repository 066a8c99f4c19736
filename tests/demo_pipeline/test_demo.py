"""``relgrade demo`` end to end with the embedded local judge: one cold run (the session's, tests/conftest.py's
``demo_run``: ~4 minutes on 2 cores) in a fresh working directory, checked against the README's quoted ending, the library's own gate,
a second run into another folder (0 judge calls), and its report in headless Chromium."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
# The cold demo judges 329 pairs with the local model: ~4 min idle, more than pytest-timeout's 600 s on a
# loaded 2-core machine (seen: the full suite beside other jobs), so this module gets 1800 s.
pytestmark = [pytest.mark.local_model, pytest.mark.required, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
_spec = importlib.util.spec_from_file_location("relgrade_test_browser", ROOT / "tests" / "fakes" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


@pytest.fixture(scope="module")
def demo(demo_run):
    """The session's one cold ``relgrade demo`` (tests/conftest.py: ``demo_run``)."""
    return demo_run


def _readme_ending() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"It ends with:\n\n```text\n(.*?)```", readme, re.S)
    assert block, "README.md has no quoted demo ending ('It ends with:' followed by a text block)"
    return block.group(1).rstrip("\n").split("\n")


def test_the_readme_quotes_the_demo_ending_word_for_word(demo):
    quoted = _readme_ending()
    printed = demo["stdout"].rstrip("\n").split("\n")
    assert printed[-len(quoted):] == quoted


def test_judgments_go_to_the_default_store_not_the_output_folder(demo):
    assert (demo["work"] / ".relgrade" / "judgments.sqlite").is_file()
    assert not list(demo["out"].rglob("*.sqlite"))
    assert "judgments are stored in .relgrade/judgments.sqlite" in demo["stdout"]


def test_the_judge_step_prints_progress_lines_without_a_terminal(demo):
    lines = [x for x in demo["stderr"].splitlines() if x.startswith("judging: ")]
    assert lines, demo["stderr"][-1000:]  # the local judge takes minutes: a line every 5 s
    done = [int(re.match(r"judging: (\d+)/329 pairs", x).group(1)) for x in lines]
    assert done == sorted(done) and done[-1] == 329
    assert ", 0 from the store, 7 duplicates, 0 unjudged" in lines[-1]  # the words of the judge's summary line
    assert "\r" not in demo["stderr"]  # no tqdm bar without a terminal


def test_a_second_demo_into_another_folder_makes_no_judge_call(demo):
    from relgrade.demo import ending, run_demo

    store = demo["work"] / ".relgrade" / "judgments.sqlite"
    said: list[str] = []
    second = run_demo(demo["work"] / "other", store=store, say=said.append)
    assert second.judge_calls == 0
    assert ("329 judged, 0 unjudged, 0 failed: 322 from the store, 7 duplicates (the same query and chunk text as "
            "another doc id: judged once, the grade shared); 0 judge calls") in "\n".join(said)
    first = json.loads((demo["out"] / "summary.json").read_text())
    assert second.data["runs"] == first["runs"] and second.data["gate"]["passed"] == first["gate"]["passed"]
    assert ending(second)[:5] == _readme_ending()[:5]


def test_the_summary_gate_is_the_library_gate_on_the_written_reports(demo):
    import relgrade

    out = demo["out"]
    summary = json.loads((out / "summary.json").read_text())
    again = relgrade.gate(out / "eval_bm25.json", out / "eval_tfidf.json", metrics=["recall@5"], max_drop=0.02,
                          names=("bm25", "tfidf"))
    assert summary["gate"] == json.loads(json.dumps(again.to_dict()))
    assert json.loads((out / "gate.json").read_text()) == summary["gate"]
    # The bundled golden set forbids each tenant's private chunks to the other tenant; TF-IDF has no tenant
    # filter: 7 leaks, one per tenant query (lq49-lq52, lq55-lq57), so the gate fails; BM25 filters: none.
    assert summary["gate"]["result"] == "FAIL"
    assert sorted(x["query_id"] for x in summary["gate"]["leaks"]) == ["lq49", "lq50", "lq51", "lq52", "lq55",
                                                                       "lq56", "lq57"]
    assert summary["runs"]["bm25"]["leaks"] == 0 and summary["runs"]["tfidf"]["leaks"] == 7
    details = [json.loads(line) for line in (out / "judge.qrels.details.jsonl").read_text().splitlines()]
    assert len(details) == 329 and all(d["model"] == "local/gemma3-270m" for d in details)
    graded = [d for d in details if d["grade"] is not None]
    assert all(abs(sum(d["distribution"].values()) - 1) < 1e-6 for d in graded)


def test_report_order_columns_and_no_empty_cells(demo):
    html = (demo["out"] / "report.html").read_text()
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "plumbing default" in html and "near-zero agreement" in html
    order = [html.index(s) for s in ('id="gate"', 'id="metrics"', 'id="failures"', 'id="ppi"', 'id="calibration"',
                                     'id="audit"')]
    assert order == sorted(order)
    details = html.index("<details><summary>", html.index('id="audit"'))
    assert html.index("Disagreements for the human audit (", details) > details  # the long table is collapsed
    assert "judge worth" not in html.split('id="ppi"')[1].split("</table>")[0]  # the verdict says do not use it
    assert "no “judge worth” column" in html
    assert ">None<" not in html and "<td></td>" not in html and "<td class='num'></td>" not in html
    assert "7 forbidden documents (7 distinct chunks private to another tenant) in the top 10 of 7 tenant queries" in html


@pytest.mark.skipif(not browser.available(), reason=browser.SKIP_REASON)
def test_report_renders_in_chromium_with_the_key_numbers(demo, tmp_path):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    driver = browser.chrome(tmp_path / "chrome", window="1280,2000")
    try:
        driver.get((demo["out"] / "report.html").as_uri())
        text = driver.find_element(By.TAG_NAME, "body").text
        summary = json.loads((demo["out"] / "summary.json").read_text())
        assert f"{summary['calibration']['kappa']['value']:.2f}" in text
        for run in summary["runs"].values():
            assert f"{run['recall@5']['value']:.3f}" in text
        assert f"gate: {summary['gate']['result']}" in text
        assert driver.find_elements(By.CSS_SELECTOR, "svg")  # heatmap, distributions, CI bars
        audit = driver.find_element(By.CSS_SELECTOR, "#audit + details table")
        assert not audit.is_displayed()  # collapsed until the reader opens it
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "demo_report.png"))
    finally:
        driver.quit()


@pytest.mark.skipif(not browser.available(), reason=browser.SKIP_REASON)
def test_the_demo_pages_name_the_prediction_one_ci_rule_and_verdict_colours(demo, tmp_path):
    """Issue 36, item 10: the PPI caption names the prediction the estimates used (the default soft one blends two
    halves); a statistic the same on every resample reads "no CI" on both pages, never "0.00 (0.00–0.00)"; the
    do-not-use verdict is red, as a failed gate."""
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    prediction = json.loads((demo["out"] / "estimate_bm25.json").read_text())["settings"]["prediction"]
    assert prediction["kind"] == "soft" and "blend" in prediction
    driver = browser.chrome(tmp_path / "chrome", window="1280,2000")
    try:
        for page in ("report.html", "calibration.html"):
            driver.get((demo["out"] / page).as_uri())
            text = driver.find_element(By.TAG_NAME, "body").text
            pairs = re.findall(r"(-?\d\.\d+) \((-?\d\.\d+)–(-?\d\.\d+)\)", text)
            assert pairs and not [x for x in pairs if x[1] == x[2]], pairs
            assert "judge vs annotators κ 0.00 (no CI)" in " ".join(text.split())
            box = driver.find_element(By.CSS_SELECTOR, "p.verdict")
            assert box.text.startswith("Do not use.") and box.value_of_css_property("background-color") == \
                "rgba(253, 231, 229, 1)"
            if page == "report.html":
                caption = " ".join(text.split())
                assert (f"The prediction (soft, the default) blends two halves: the metric's expectation under the "
                        f"probability of each human grade given the judge's grade, fitted on the human labels by "
                        f"cross-fitting ({prediction['folds']} folds") in caption
                assert "and the metric on the judge's own grades, averaged half and half" in caption
                card = driver.find_element(By.CSS_SELECTOR, ".hero .card .big")
                assert card.value_of_css_property("color") == "rgba(179, 38, 30, 1)"  # the kappa card: red
    finally:
        driver.quit()
