"""The trend page of ``relgrade history`` rendered in headless Chromium (Debian's chromium and chromium-driver):
the charts are there and visible at their size, every report is a dot inside its chart, the gate's line sits at
the threshold and its label overlaps no point or interval, dots below it are red, a report resting on a judge the
calibration says not to use is ringed and named, each report's source is shown, no empty chart is drawn, text from
the reports is shown as text, the page does not overflow, and the console has no error."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("relgrade_test_browser", Path(__file__).resolve().parents[1] / "fakes" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)
if not browser.available():
    pytest.skip(browser.SKIP_REASON, allow_module_level=True)
pytest.importorskip("selenium.webdriver")

from selenium.webdriver.common.by import By  # noqa: E402

from relgrade import evaluate  # noqa: E402
from relgrade.cli import main  # noqa: E402

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
N_BUILDS = 8


def _reports(tmp_path: Path) -> list[str]:
    """Eight nightly builds: recall@5 drifts down at build 6 (a regression), a leak appears at build 7."""
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(20)}
    paths = []
    for b in range(N_BUILDS):
        misses = set(range(2 + (6 if b >= 5 else b % 2)))
        run = {q: ({f"x{j}": 10.0 - j for j in range(6)} | {f"d{i}": 1.0} if i in misses else {f"d{i}": 10.0})
               for i, q in enumerate(qrels)}
        data = evaluate(qrels, run, ["recall@5", "mrr"]).to_dict()
        if b == 6:
            data["leaks"] = [{"query_id": "q1", "query": None, "doc_id": "other-tenant", "rank": 2}]
        data["recorded"] = {"time": f"2024-06-{b + 1:02d}T03:00:00+00:00", "commit": f"{b:02d}c0ffee{b}" * 2}
        path = tmp_path / f"build{b}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


@pytest.fixture
def page(tmp_path):
    paths = _reports(tmp_path)
    html = tmp_path / "trend.html"
    # the newest build is below the threshold: history gates it as the gate would (exit 1)
    assert main(["history", *paths, "--baseline", paths[0], "--max-drop", "0.1", "--html", str(html)]) == 1
    driver = browser.chrome(tmp_path / "chrome", window="1100,900")
    driver.get(html.as_uri())
    yield driver, html
    driver.quit()


def _rect(driver, element) -> dict:
    return driver.execute_script("return arguments[0].getBoundingClientRect().toJSON();", element)


def test_trend_page_renders_every_point_the_threshold_and_the_counts(page):
    driver, html = page
    charts = driver.find_elements(By.CSS_SELECTOR, "svg.trend")
    assert len(charts) == 3  # recall@5, mrr, and the leaks / failed-queries chart
    for chart in charts:
        box = _rect(driver, chart)
        assert box["width"] > 500 and box["height"] > 150, box
    recall = driver.find_element(By.CSS_SELECTOR, 'svg.trend[data-metric="recall@5"]')
    frame = _rect(driver, recall)
    dots = recall.find_elements(By.CSS_SELECTOR, "circle.point")
    assert len(dots) == N_BUILDS
    for dot in dots:
        r = _rect(driver, dot)
        assert r["width"] > 4 and frame["left"] <= r["left"] and r["right"] <= frame["right"]
        assert frame["top"] <= r["top"] and r["bottom"] <= frame["bottom"]
    xs = [_rect(driver, d)["left"] for d in dots]
    assert xs == sorted(xs) and len(set(xs)) == N_BUILDS  # one column per build, in time order
    line = _rect(driver, recall.find_element(By.CSS_SELECTOR, "line.threshold"))
    below = recall.find_elements(By.CSS_SELECTOR, "circle.point.below")
    assert len(below) == 3  # builds 6-8: 0.6 < 0.9 - 0.1
    for dot in below:
        assert _rect(driver, dot)["top"] > line["top"]  # drawn under the gate's line
        assert driver.execute_script("return getComputedStyle(arguments[0]).fill;", dot) == "rgb(179, 38, 30)"
    above = [d for d in dots if "below" not in d.get_attribute("class")]
    assert all(_rect(driver, d)["bottom"] < line["top"] + 1 for d in above)
    assert len(recall.find_elements(By.CSS_SELECTOR, "line.ci")) == N_BUILDS
    counts = driver.find_element(By.CSS_SELECTOR, "svg.counts")
    leak_bars = counts.find_elements(By.CSS_SELECTOR, "rect.bar.leaks")
    heights = [_rect(driver, b)["height"] for b in leak_bars]
    assert len(leak_bars) == N_BUILDS and heights[6] > 10 * max(heights[:6] + heights[7:])
    fails = [_rect(driver, b)["height"] for b in counts.find_elements(By.CSS_SELECTOR, "rect.bar.failed")]
    assert fails[7] > fails[0] > 0
    assert "3 of 8 reports below the gate threshold" in driver.find_element(By.TAG_NAME, "body").text
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth;")
    errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert not errors, errors
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "history_trend.png"))


def test_trend_page_is_self_contained(page):
    _, html = page
    text = html.read_text()
    assert "<script" not in text and "http://" not in text and "https://" not in text and "<link" not in text


def _overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and b["top"] < a["bottom"]


def test_the_gate_label_overlaps_no_point_or_interval(page):
    driver, _ = page
    for chart in driver.find_elements(By.CSS_SELECTOR, "svg.trend[data-metric]"):
        label = _rect(driver, chart.find_element(By.CSS_SELECTOR, "text.threshold-label"))
        assert label["width"] > 20 and _rect(driver, chart)["right"] >= label["right"]  # drawn, inside the chart
        for mark in chart.find_elements(By.CSS_SELECTOR, "circle.point, line.ci"):
            assert not _overlap(label, _rect(driver, mark)), (chart.get_attribute("data-metric"), label)


def _hostile_reports(tmp_path: Path) -> list[str]:
    """Three perfect builds (no leak, no failed query): one on hybrid labels of a judge calibrated 'slight' (do not
    use), one whose commit string holds ESC, BEL and markup."""
    qrels = {f"q{i}": {f"d{i}": 1} for i in range(6)}
    run = {q: {f"d{i}": 1.0} for i, q in enumerate(qrels)}
    paths = []
    for b in range(3):
        data = evaluate(qrels, run, ["recall@5"]).to_dict()
        commit = "\x1b[31m<b>boom</b>\x07" if b == 1 else f"{b}aaaaaaaaaa"
        data["recorded"] = {"time": f"2024-07-0{b + 1}T00:00:00+00:00", "commit": commit}
        if b == 2:
            data["labels"] = {"human": 2, "judge": 4}
            data["judge"] = {"labels": 4, "calibration": {"model": "m", "band": "slight", "kappa": 0.05,
                                                          "ci95": [-0.1, 0.2], "text": "slight: do not use"}}
        path = tmp_path / f"perfect{b}.json"
        path.write_text(json.dumps(data))
        paths.append(str(path))
    return paths


def test_judge_source_and_text_from_reports_and_no_empty_chart(tmp_path):
    paths = _hostile_reports(tmp_path)
    html = tmp_path / "perfect.html"
    assert main(["history", *paths, "--min", "0.5", "--html", str(html)]) == 0
    driver = browser.chrome(tmp_path / "chrome", window="1100,900")
    try:
        driver.get(html.as_uri())
        body = driver.find_element(By.TAG_NAME, "body").text
        assert not driver.find_elements(By.CSS_SELECTOR, "svg.counts")  # nothing to chart: one sentence instead
        assert "Nothing to chart: no report lists a leak or a failed query." in body
        chart = driver.find_element(By.CSS_SELECTOR, 'svg.trend[data-metric="recall@5"]')
        rings = chart.find_elements(By.CSS_SELECTOR, "circle.judge-warning")
        assert len(rings) == 1 and _rect(driver, rings[0])["width"] > 12  # round the third build's dot
        dot = chart.find_elements(By.CSS_SELECTOR, "circle.point")[2]
        assert _overlap(_rect(driver, rings[0]), _rect(driver, dot))
        rows = [r.text for r in driver.find_elements(By.CSS_SELECTOR, "table tbody tr")]
        assert "hybrid (2 human, 4 judge)" in rows[2] and "slight (κ 0.05): do not use" in rows[2]
        assert "labels" in rows[0]
        assert "rest on judge labels whose calibration says not to use them" in body
        assert "<b>boom</b>" in rows[1] and "\\x1b" in rows[1] and "\\x07" in rows[1]  # shown as text, escaped
        assert not driver.find_elements(By.CSS_SELECTOR, "table b")
        assert "The newest report" in body and "passes" in body
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert not errors, errors
    finally:
        driver.quit()
    raw = html.read_text()
    assert "\x1b" not in raw and "\x07" not in raw
