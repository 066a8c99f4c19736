"""The labeling page in headless Chromium (Debian's ``chromium`` and ``chromium-driver``).

Grades pairs by key presses only, with one skip, one undo and a note; restarts the server and
checks it resumes; checks the SQLite store directly, the export through ``read_qrels``, that a
``<script>`` chunk shows as text without running, and that a request without the token is refused.
"""

from __future__ import annotations

import importlib.util
import sqlite3
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("relgrade_test_browser", Path(__file__).resolve().parents[1] / "fakes" / "browser.py")
browser = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(browser)
if not browser.available():
    pytest.skip(browser.SKIP_REASON, allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

from relgrade.cli import main  # noqa: E402
from relgrade.io import read_qrels  # noqa: E402

EVIL = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">'
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"

ITEMS = [
    {"query_id": "q1", "query": "how long should I steep green tea?", "doc_id": "tea-12",
     "text": "Green tea is best steeped at 70-80 °C for two to three minutes. Water that is too hot, or a "
             "steep that runs long, draws out tannins and makes the cup bitter.\n\nFor a second infusion, "
             "add thirty seconds.", "judge_grade": 3},
    {"query_id": "q1", "query": "how long should I steep green tea?", "doc_id": "evil-1", "text": EVIL, "judge_grade": 0},
    {"query_id": "q1", "query": "how long should I steep green tea?", "doc_id": "tea-40",
     "text": "Black teas tolerate boiling water and longer steeps of four to five minutes.", "judge_grade": 1},
    {"query_id": "q2", "query": "what does a rate limit of 429 mean in an HTTP API?", "doc_id": "api-3",
     "text": "HTTP 429 Too Many Requests tells the client it sent too many requests in a given time; a "
             "Retry-After header may say how long to wait.", "judge_grade": 3},
    {"query_id": "q2", "query": "what does a rate limit of 429 mean in an HTTP API?", "doc_id": "api-9",
     "text": "Status codes in the 4xx range indicate client errors.", "judge_grade": 1},
    {"query_id": "q2", "query": "what does a rate limit of 429 mean in an HTTP API?", "doc_id": "cook-2",
     "text": "Preheat the oven to 180 °C and grease the tin.", "judge_grade": 0},
]


@pytest.fixture
def driver(tmp_path):
    drv = browser.chrome(tmp_path / "chrome", window="1280,860")
    yield drv
    drv.quit()


def press(driver, key: str) -> None:
    ActionChains(driver).send_keys(key).perform()


def shown_doc(driver) -> str:
    return driver.find_element(By.ID, "doc-id").text.split()[0] if driver.find_element(By.ID, "item-view").is_displayed() else ""


def wait_for(driver, condition, what: str):
    return WebDriverWait(driver, 10, poll_frequency=0.05).until(lambda d: condition(d), message=what)


def grade(driver, key: str, expect_next: str) -> None:
    press(driver, key)
    wait_for(driver, lambda d: shown_doc(d) == expect_next, f"after {key!r} the page shows {expect_next or 'done'}")


def severe(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def test_grade_by_keyboard_resume_export_and_escaping(label_server, make_items, driver, tmp_path):
    items = make_items(ITEMS)
    server = label_server(items, "--annotator", "tester")
    driver.get(server.url)
    wait_for(driver, lambda d: shown_doc(d) == "tea-12", "the first pair is shown")
    assert driver.find_element(By.ID, "query").text == ITEMS[0]["query"]
    rubric = driver.find_element(By.ID, "rubric").text
    assert all(word in rubric for word in ("Irrelevant", "Related", "Highly relevant", "Perfectly relevant"))
    assert "judge" not in driver.find_element(By.ID, "item-view").text  # blind to the judge by default
    grade(driver, "3", "evil-1")

    # The untrusted chunk is shown as text and nothing in it ran.
    assert driver.find_element(By.ID, "text").text == EVIL
    assert driver.execute_script("return window.__pwned") is None
    assert driver.execute_script("return document.querySelectorAll('#text *').length") == 0
    ARTIFACTS.mkdir(exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / "label_page_untrusted.png"))
    grade(driver, "0", "tea-40")
    driver.save_screenshot(str(ARTIFACTS / "label_page.png"))
    grade(driver, "s", "api-3")
    grade(driver, "2", "api-9")
    press(driver, "u")  # undo the 2 on api-3
    wait_for(driver, lambda d: shown_doc(d) == "api-3" and "undone" in d.find_element(By.ID, "status").text, "undo goes back")
    assert "undone: grade 2" in driver.find_element(By.ID, "previous").text
    press(driver, "n")
    wait_for(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "note", "n focuses the note")
    press(driver, "needs the unit 3s")  # digits typed into the note are not grades
    assert shown_doc(driver) == "api-3"
    press(driver, "\ue007")  # Enter leaves the note
    grade(driver, "1", "api-9")
    wait_for(driver, lambda d: "api-3" in d.find_element(By.ID, "status").text, "the last label is acknowledged")
    assert driver.find_element(By.ID, "progress-text").text == "3 of 6 graded · 1 skipped"
    assert severe(driver) == []

    # The store, read directly while the server still runs.
    db = sqlite3.connect(server.store)
    rows = db.execute("SELECT doc_id, annotator, grade, skipped, note FROM labels ORDER BY id").fetchall()
    assert rows == [
        ("tea-12", "tester", 3, 0, ""),
        ("evil-1", "tester", 0, 0, ""),
        ("tea-40", "tester", None, 1, ""),
        ("api-3", "tester", 1, 0, "needs the unit 3s"),
    ]

    # Restart without --annotator: the page asks for a name, then resumes where tester stopped.
    server.stop()
    server = label_server(items)
    driver.get(server.url)
    name = wait_for(driver, lambda d: d.find_element(By.ID, "name-input"), "the name prompt")
    wait_for(driver, lambda d: name.is_displayed() and d.switch_to.active_element == name, "the name box has focus")
    press(driver, "tester\ue007")
    wait_for(driver, lambda d: shown_doc(d) == "api-9", "resumes at the first pair tester has not labeled")
    assert driver.find_element(By.ID, "progress-text").text == "3 of 6 graded · 1 skipped"
    grade(driver, "2", "cook-2")
    grade(driver, "0", "")
    assert driver.find_element(By.ID, "done-view").is_displayed()
    driver.save_screenshot(str(ARTIFACTS / "label_page_done.png"))
    grade(driver, "r", "tea-40")  # r revisits the skipped pair; skipping it again ends the round
    grade(driver, "s", "")
    wait_for(driver, lambda d: "saved skip for q1 / tea-40" in d.find_element(By.ID, "status").text, "the re-skip is acknowledged")

    # A second annotator has their own progress.
    driver.get(server.url + "&annotator=bob")
    wait_for(driver, lambda d: shown_doc(d) == "tea-12", "bob starts at the first pair")
    assert driver.find_element(By.ID, "progress-text").text == "0 of 6 graded"
    grade(driver, "1", "evil-1")
    wait_for(driver, lambda d: "saved" in d.find_element(By.ID, "status").text, "bob's label is acknowledged")
    assert driver.execute_script("return window.__pwned") is None
    assert severe(driver) == []

    # Second line of defence: even markup forced into the page cannot run script (the CSP forbids inline code).
    driver.execute_script("document.getElementById('text').innerHTML = arguments[0]", EVIL)
    seen: list[dict] = []
    csp_refused = lambda d: seen.extend(severe(d)) or any("Content Security Policy" in e["message"] for e in seen)  # noqa: E731
    wait_for(driver, csp_refused, "the browser refuses the inline onerror handler")
    assert driver.execute_script("return window.__pwned") is None

    # Export: five grades by tester (the skip left out) and one by bob, read back by read_qrels.
    out = tmp_path / "human.csv"
    assert main(["label", str(items), "--export", str(out)]) == 0
    qrels = read_qrels(out)
    assert qrels.annotations == {
        ("q1", "tea-12"): {"tester": 3, "bob": 1},
        ("q1", "evil-1"): {"tester": 0},
        ("q2", "api-3"): {"tester": 1},
        ("q2", "api-9"): {"tester": 2},
        ("q2", "cook-2"): {"tester": 0},
    }

    # Without the token the browser gets nothing but the refusal.
    driver.get(server.base + "/")
    assert "missing or wrong token" in driver.find_element(By.TAG_NAME, "body").text
    assert driver.execute_script("return document.scripts.length") == 0
