"""``relgrade demo`` end to end with the embedded local judge, and its report in headless Chromium."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")
pytestmark = pytest.mark.local_model

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
_spec = importlib.util.spec_from_file_location("relgrade_test_browser", Path(__file__).resolve().parents[1] / "fakes" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from relgrade.cli import main

    out = tmp_path_factory.mktemp("demo") / "out"
    code = main(["demo", "--out", str(out)])
    assert code == 0
    return out


def test_demo_writes_summary_with_kappa_ci_and_consistent_gate(demo):
    summary = json.loads((demo / "summary.json").read_text())
    kappa = summary["calibration"]["kappa"]
    lo, hi = kappa["ci95"]
    assert lo <= kappa["value"] <= hi
    assert summary["model"] == "local/gemma3-270m"
    evals = {p.stem[5:]: json.loads(p.read_text()) for p in demo.glob("eval_*.json") if not p.stem.endswith("_hybrid")}
    assert len(evals) == 2 and set(summary["runs"]) == set(evals)
    gate = summary["gate"]
    base, cur = evals[gate["baseline"]], evals[gate["current"]]
    drop = base["aggregate"]["recall@5"]["value"] - cur["aggregate"]["recall@5"]["value"]
    expect_fail = drop > 0.02 or bool(cur["leaks"])
    assert gate["result"] == ("FAIL" if expect_fail else "pass")
    assert gate["exit_code"] == (1 if expect_fail else 0)
    for name, ev in evals.items():
        assert summary["runs"][name]["recall@5"] == ev["aggregate"]["recall@5"]
    # judge labels, hybrid labels and PPI estimates all exist and agree on what was judged
    details = [json.loads(line) for line in (demo / "judge.qrels.details.jsonl").read_text().splitlines()]
    assert details and all(d["model"] == "local/gemma3-270m" for d in details)
    graded = [d for d in details if d["grade"] is not None]
    assert all(abs(sum(d["distribution"].values()) - 1) < 1e-6 for d in graded)
    for est in summary["ppi"].values():
        for metric in est.values():
            assert metric["ppi"]["ci95"][0] <= metric["ppi"]["value"] <= metric["ppi"]["ci95"][1]


def test_report_is_self_contained_and_says_the_local_judge_is_unreliable(demo):
    html = (demo / "report.html").read_text()
    assert "<script" not in html.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "plumbing default" in html and "near-zero agreement" in html


@pytest.mark.skipif(not browser.available(), reason=browser.SKIP_REASON)
def test_report_renders_in_chromium_with_the_key_numbers(demo, tmp_path):
    pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.common.by import By

    driver = browser.chrome(tmp_path / "chrome", window="1280,2000")
    try:
        driver.get((demo / "report.html").as_uri())
        text = driver.find_element(By.TAG_NAME, "body").text
        summary = json.loads((demo / "summary.json").read_text())
        assert f"{summary['calibration']['kappa']['value']:.2f}" in text
        for name, run in summary["runs"].items():
            assert f"{run['recall@5']['value']:.3f}" in text
        assert f"gate: {summary['gate']['result']}" in text
        assert driver.find_elements(By.CSS_SELECTOR, "svg")  # heatmap, distributions, CI bars
        severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        assert not severe, severe
        ARTIFACTS.mkdir(exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / "demo_report.png"))
    finally:
        driver.quit()
