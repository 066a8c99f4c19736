"""Headless Debian Chromium driven by selenium, shared by the browser tests.

Load it by path (the tests run with ``--import-mode=importlib``)::

    browser = load_browser()          # from a test module: see tests/label/test_browser.py
    driver = browser.chrome(tmp_path / "chrome", window="1280,860")
"""

from __future__ import annotations

from pathlib import Path

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
SKIP_REASON = "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"


def available() -> bool:
    return CHROMIUM.exists() and DRIVER.exists()


def chrome(user_data_dir: Path, *, window: str = "1280,860"):
    """A headless Chromium with no network side-traffic and the browser console log captured."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", f"--window-size={window}", f"--user-data-dir={user_data_dir}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    driver.set_page_load_timeout(30)
    return driver
