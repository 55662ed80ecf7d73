"""The web table in a real browser: Debian's headless Chromium, driven by Selenium through
the system chromedriver (nothing is downloaded). It plays a whole duel against ``random``
by clicking, then replays the saved match. With ``HGIN_SCREENSHOTS=DIR`` it saves
``web_play.png`` (a game in progress) and ``web_replay.png`` there (docs/img in the repo).

Needs ``chromium`` and ``chromium-driver`` (Debian/Ubuntu: ``apt-get install chromium
chromium-driver``; ``.ci/run`` installs them when they are missing).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from hgin_web.app import WebConfig, create_app
from hgin_web.server import server_config

CHROMIUM = os.environ.get("HGIN_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("HGIN_CHROMEDRIVER", "/usr/bin/chromedriver")


def _need(path: str) -> str:
    found = shutil.which(path) or (path if os.access(path, os.X_OK) else None)
    if found is None:
        raise RuntimeError(f"{path} is missing: the browser test drives Debian's headless Chromium; install it with "
                           "'apt-get install chromium chromium-driver' (or set HGIN_CHROMIUM / HGIN_CHROMEDRIVER)")
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    save_dir = tmp_path_factory.mktemp("web") / "games"
    app = create_app(WebConfig(save_dir=save_dir))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(server_config(app, "127.0.0.1", port))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = _need(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", "--force-device-scale-factor=1"):
        options.add_argument(arg)
    # An explicit driver path: Selenium Manager never goes looking for (downloading) one.
    driver = webdriver.Chrome(service=Service(executable_path=_need(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _settled(driver: webdriver.Chrome, version: int, timeout: float = 20) -> int:
    """Wait until the page has drawn a view newer than ``version`` and is idle."""
    def ready(d: webdriver.Chrome) -> int | bool:
        body = d.find_element(By.TAG_NAME, "body")
        v = int(body.get_attribute("data-version"))
        return v if v > max(version, 0) and body.get_attribute("data-busy") == "0" else False
    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(
        ready, f"the page did not settle; status {driver.find_element(By.ID, 'status').text!r}")


def _error(driver: webdriver.Chrome) -> str:
    box = driver.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def _click_a_move(driver: webdriver.Chrome) -> None:
    """Knock when a knock button is offered, pass or draw, else discard the card that
    leaves the least deadwood (the page shows it under each card)."""
    offered = driver.find_elements(By.CSS_SELECTOR, "#controls button.action")
    buttons = {b.get_attribute("data-kind"): b for b in offered}
    for kind in ("big_gin", "knock", "pass", "draw"):
        if kind in buttons:
            buttons[kind].click()
            return
    cards = driver.find_elements(By.CSS_SELECTOR, "#tables .card[data-action]")
    assert cards, f"no move offered: {driver.find_element(By.ID, 'status').text}"
    min(cards, key=lambda c: int(c.get_attribute("data-dw"))).click()


def test_play_a_duel_by_clicking_then_replay_it(server: str, browser: webdriver.Chrome) -> None:
    shots = os.environ.get("HGIN_SCREENSHOTS")
    browser.get(server + "/")
    version = _settled(browser, -1)
    Select(browser.find_element(By.ID, "rules")).select_by_value("hollywood_short")
    Select(browser.find_element(By.ID, "seat")).select_by_value("0")
    opponent = browser.find_element(By.ID, "agent-1")
    opponent.clear()
    opponent.send_keys("random")
    browser.find_element(By.ID, "seed").send_keys("11")
    Select(browser.find_element(By.ID, "speed")).select_by_value("0")
    browser.find_element(By.ID, "start").click()
    version = _settled(browser, version)
    shot_taken = False
    for _ in range(2000):
        assert not _error(browser), _error(browser)
        if browser.find_element(By.TAG_NAME, "body").get_attribute("data-over") == "1":
            break
        if not shot_taken and browser.find_elements(By.CSS_SELECTOR, "#showdown .showdown") \
                and browser.find_elements(By.CSS_SELECTOR, "#tables .card[data-action]"):
            if shots:
                browser.save_screenshot(str(Path(shots) / "web_play.png"))
            shot_taken = True
        _click_a_move(browser)
        version = _settled(browser, version)
    else:
        raise AssertionError("the match did not end")
    assert shot_taken
    result = browser.find_element(By.ID, "match-result").text
    assert result.startswith("Match over"), result
    # The page reload continues the game: the same finished match comes back.
    browser.refresh()
    version = _settled(browser, -1)
    assert browser.find_element(By.ID, "match-result").text == result
    # Replay the saved file: forward, a hand's start, the end.
    browser.find_element(By.ID, "replay-this").click()
    version = _settled(browser, version)
    assert browser.find_element(By.ID, "step-count").text.startswith("move 0 /")
    browser.find_element(By.ID, "forward").click()
    version = _settled(browser, version)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    version = _settled(browser, version)
    assert browser.find_element(By.ID, "step-count").text.startswith("move 2 /")
    jump = Select(browser.find_element(By.ID, "jump"))
    assert len(jump.options) >= 2
    jump.select_by_index(1)
    version = _settled(browser, version)
    assert browser.find_elements(By.CSS_SELECTOR, "#showdown .showdown")  # hand 1's showdown
    for _ in range(12):
        browser.find_element(By.ID, "forward").click()
        version = _settled(browser, version)
    assert len(browser.find_elements(By.CSS_SELECTOR, "#tables .table .hand")) == 2  # both hands open
    if shots:
        browser.save_screenshot(str(Path(shots) / "web_replay.png"))
    browser.find_element(By.ID, "last").click()
    _settled(browser, version)
    assert browser.find_element(By.ID, "match-result").text.startswith("Match over")
    assert not _error(browser)
