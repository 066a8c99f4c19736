"""The calibration page of ``relgrade calibrate --report`` in headless Chromium (issue 36, item 10): a verdict shows in
the gate's colours, said in words too (red "do not use", amber "with human labels only", green above), no longer in
one neutral box for "do not use" and "moderate"; a statistic that is the same on every resample reads "no CI"
wherever it is shown, never "0.00 (0.00–0.00)"."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import numpy as np
import pytest

_spec = importlib.util.spec_from_file_location("relgrade_test_browser", Path(__file__).resolve().parents[1] / "fakes" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)
if not browser.available():
    pytest.skip(browser.SKIP_REASON, allow_module_level=True)
pytest.importorskip("selenium.webdriver")

from selenium.webdriver.common.by import By  # noqa: E402

from relgrade.cli import main  # noqa: E402

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
RED, AMBER, GREEN = "rgba(253, 231, 229, 1)", "rgba(255, 244, 229, 1)", "rgba(227, 244, 232, 1)"  # the gate's badge colours


def _files(folder: Path, right: float, seed: int, constant: bool = False) -> tuple[Path, Path]:
    """30 queries of 8 pairs graded by two annotators; a judge right with probability ``right`` (else a random
    grade), or one grade for every pair (``constant``)."""
    rng = np.random.default_rng(seed)
    human, judge = ["query_id,doc_id,grade,annotator"], []
    for q in range(30):
        for d in range(8):
            g = int(rng.integers(0, 4))
            human.append(f"q{q},d{d},{g},ann")
            if q < 10:  # a second annotator on a third of the queries: the human ceiling
                human.append(f"q{q},d{d},{g if rng.random() < 0.9 else int(rng.integers(0, 4))},bob")
            j = 1 if constant else g if rng.random() < right else int(rng.integers(0, 4))
            judge.append(json.dumps({"query_id": f"q{q}", "doc_id": f"d{d}", "grade": j, "model": "fake/judge"}))
    (folder / "human.csv").write_text("\n".join(human) + "\n")
    (folder / "judge.details.jsonl").write_text("\n".join(judge) + "\n")
    return folder / "judge.details.jsonl", folder / "human.csv"


@pytest.mark.parametrize("right,constant,band,colour,word", [
    (0.0, True, "slight", RED, "Do not use."),
    (0.6, False, "moderate", AMBER, "With human labels only."),
    (0.95, False, "almost perfect", GREEN, "Usable."),
])
def test_the_verdict_shows_in_the_gates_colours(tmp_path, right, constant, band, colour, word):
    judge, human = _files(tmp_path, right, seed=4, constant=constant)
    page, data = tmp_path / "calibration.html", tmp_path / "calibration.json"
    assert main(["calibrate", "--judge", str(judge), "--human", str(human), "--n-boot", "300", "--no-mapping",
                 "--report", str(page), "--json", str(data)]) == 0
    assert json.loads(data.read_text())["verdict"]["band"] == band
    driver = browser.chrome(tmp_path / "chrome", window="1200,900")
    try:
        driver.get(page.as_uri())
        box = driver.find_element(By.CSS_SELECTOR, "p.verdict")
        assert box.is_displayed() and box.text.startswith(word) and band in box.text
        assert box.value_of_css_property("background-color") == colour
        text = driver.find_element(By.TAG_NAME, "body").text
        zero_width = re.findall(r"(-?\d+\.\d+)\s*\((-?\d+\.\d+)–(-?\d+\.\d+)\)", text)
        assert not [z for z in zero_width if z[1] == z[2]], zero_width  # one rule: no "0.00 (0.00–0.00)"
        if constant:  # the judge's κ, and its κ against the annotators, are the same on every resample
            assert "Cohen's κ\n0.00 (no CI)" in text or "Cohen's κ 0.00 (no CI)" in text
            assert "judge vs annotators κ 0.00 (no CI)" in text.replace("\n", " ")
        assert not [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        if constant:
            ARTIFACTS.mkdir(exist_ok=True)
            driver.save_screenshot(str(ARTIFACTS / "calibration_do_not_use.png"))
    finally:
        driver.quit()
