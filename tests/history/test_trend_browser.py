"""The trend page of ``relgrade history`` rendered in headless Chromium (Debian's chromium and chromium-driver):
the charts are there and visible at their size, every report is a dot inside its chart, the gate's line sits at
the threshold, dots below it are red, the page does not overflow, and the console has no error."""

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
    assert main(["history", *paths, "--baseline", paths[0], "--max-drop", "0.1", "--html", str(html)]) == 0
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
