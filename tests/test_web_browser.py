"""The web table in a real browser: Debian's headless Chromium, driven by Selenium through
the system chromedriver (nothing is downloaded). It plays a whole duel against ``random``
by clicking (reloading in the middle: the page keeps its seat token), then replays the
saved match; it watches a trained policy play. On the way it checks what a card player
reads at a glance (issue 56): the agents offered in a list, the card just drawn
highlighted and named in the log, each hand's end shown on the table until "Next hand",
the sheet's legend, and the final score in the banner. At 1,280 px and at a phone's width
nothing scrolls sideways. With ``HGIN_SCREENSHOTS=DIR`` it saves ``web_lobby.png`` (the
start page), ``web_play.png`` (a game in progress), ``web_hand_end.png``,
``web_match_end.png``, ``web_phone.png`` (a game at 390 px), ``web_watch.png`` and
``web_replay.png`` there (docs/img in the repo).

Needs ``chromium`` and ``chromium-driver`` (Debian/Ubuntu: ``apt-get install chromium
chromium-driver``; ``make test`` installs them when they are missing).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

from hgin_web.app import WebConfig, create_app

try:
    from tests.web_helpers import serving
except ImportError:  # pragma: no cover - pytest run without the repo root on sys.path
    from web_helpers import serving

CHROMIUM = os.environ.get("HGIN_CHROMIUM", "chromium")  # a path, or a name looked up on PATH (as make does)
WIDE, PHONE = (1280, 900), (390, 844)
#: A card written as the API writes it (TC, KH): the page shows 10♣, K♥ instead.
CARD_CODE = re.compile(r"(?<![A-Za-z0-9])[A2-9TJQK][CDHS](?![A-Za-z0-9])")
CHROMEDRIVER = os.environ.get("HGIN_CHROMEDRIVER", "chromedriver")


def _need(path: str) -> str:
    found = shutil.which(path) or (path if os.access(path, os.X_OK) else None)
    if found is None:
        raise RuntimeError(f"{path} is missing: the browser test drives Debian's headless Chromium; install it with "
                           "'apt-get install chromium chromium-driver' (or set HGIN_CHROMIUM / HGIN_CHROMEDRIVER)")
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    save_dir = tmp_path_factory.mktemp("web") / "games"
    with serving(create_app(WebConfig(save_dir=save_dir))) as port:
        yield f"http://127.0.0.1:{port}"


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
        # One round trip per poll (Selenium's get_attribute injects a script of its own each time).
        v, busy = d.execute_script("const b = document.body; return [b.dataset.version, b.dataset.busy];")
        return int(v) if int(v) > max(version, 0) and busy == "0" else False
    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(
        ready, f"the page did not settle; status {driver.find_element(By.ID, 'status').text!r}")


def _error(driver: webdriver.Chrome) -> str:
    box = driver.find_element(By.ID, "error")
    return box.text if box.is_displayed() else ""


def _fits(driver: webdriver.Chrome, where: str) -> None:
    """Nothing on the page scrolls sideways (the sheet included)."""
    widths = driver.execute_script(
        "const d = document.documentElement, s = document.querySelector('table.sheet');"
        "return [d.scrollWidth, d.clientWidth, s ? s.scrollWidth : 0, s ? s.parentElement.clientWidth : 0];")
    assert widths[0] <= widths[1] and widths[2] <= widths[3], f"{where}: overflow {widths}"


def _at_width(driver: webdriver.Chrome, size: tuple[int, int]) -> None:
    driver.set_window_size(*size)
    WebDriverWait(driver, 10).until(lambda d: d.execute_script("return window.innerWidth") <= size[0])


def _shot(driver: webdriver.Chrome, name: str) -> None:
    shots = os.environ.get("HGIN_SCREENSHOTS")
    if shots:
        driver.save_screenshot(str(Path(shots) / name))


def _click_a_move(driver: webdriver.Chrome) -> str | None:
    """Knock when a knock button is offered, pass or draw, else discard the card that
    leaves the least deadwood (the page shows it under each card); the kind clicked."""
    offered = driver.find_elements(By.CSS_SELECTOR, "#controls button.action[data-kind]")
    buttons = {b.get_dom_attribute("data-kind"): b for b in offered}
    for kind in ("big_gin", "knock", "pass", "draw"):
        if kind in buttons:
            buttons[kind].click()
            return kind
    cards = driver.find_elements(By.CSS_SELECTOR, "#tables .card[data-action]")
    assert cards, f"no move offered: {driver.find_element(By.ID, 'status').text}"
    min(cards, key=lambda c: int(c.get_dom_attribute("data-dw"))).click()
    return "discard"


def _check_hand_end(driver: webdriver.Chrome) -> str:
    """The hand's end on the table: its result, both hands' melds and deadwood (or the
    hands of a dead hand), what it added to the sheet; the next deal waits for the button."""
    box = driver.find_element(By.ID, "hand-end")
    head = box.find_element(By.CSS_SELECTOR, ".hand-end-head").text
    assert re.match(r"Hand \d+: (dead hand|(You|Random) (knock|go|goes|knocks))", head), head
    if "dead hand" not in head:
        sides = box.find_elements(By.CSS_SELECTOR, ".showdown-side")
        assert len(sides) == 2 and all("deadwood" in s.text for s in sides), [s.text for s in sides]
        assert box.find_elements(By.CSS_SELECTOR, ".group.meld .card") or "gin" not in head
        assert re.search(r"(You|Random): (I|II|III) \+\d+", box.find_element(By.ID, "hand-end-score").text)
    assert not driver.find_elements(By.ID, "table-title")  # the next deal is not on screen yet
    return head


def _start_from_the_lobby(browser: webdriver.Chrome, server: str) -> int:
    """Checks the lobby (the server's agent list, the search's options box) and starts a
    short duel against Random on seed 23 at full speed; the page's version."""
    _at_width(browser, WIDE)
    browser.get(server + "/")
    version = _settled(browser, -1)
    Select(browser.find_element(By.ID, "rules")).select_by_value("hollywood_short")
    Select(browser.find_element(By.ID, "seat")).select_by_value("0")
    # The opponent is chosen from the server's list: the registry's agents and the policies.
    opponent = Select(browser.find_element(By.ID, "agent-1"))
    offered = [o.get_attribute("value") for o in opponent.options]
    assert {"random", "simple", "expert", "search", "ppo", "ppo:hgin_ppo.zip"} <= set(offered), offered
    # Choosing search shows a box for its options (the server's: rollouts, until, ...).
    options = browser.find_element(By.ID, "agent-1-options")
    assert not options.is_displayed()
    opponent.select_by_value("search")
    assert options.is_displayed() and "rollouts=1..256" in options.get_attribute("title")
    opponent.select_by_value("random")
    assert not options.is_displayed()
    _shot(browser, "web_lobby.png")
    browser.find_element(By.ID, "seed").send_keys("23")
    Select(browser.find_element(By.ID, "speed")).select_by_value("0")
    browser.find_element(By.ID, "start").click()
    return _settled(browser, version)


def _reload_keeps_the_seat(browser: webdriver.Chrome) -> int:
    """A reload mid-game keeps the seat (the token is in localStorage), the settings bar
    shows this game, not the form's defaults, and the viewer's speed stays as chosen
    (instant, not the form's normal); the page's version."""
    title = browser.find_element(By.ID, "table-title").text
    browser.refresh()
    version = _settled(browser, -1)
    assert browser.find_element(By.ID, "table-title").text == title
    assert browser.find_elements(By.CSS_SELECTOR, "#tables .seat .who")[-1].text == "You"
    assert browser.execute_script(
        "return Object.keys(localStorage).filter((k) => k.startsWith('hgin_seat_')).length") == 1
    assert Select(browser.find_element(By.ID, "rules")).first_selected_option.get_attribute("value") \
        == "hollywood_short"
    assert browser.find_element(By.ID, "agent-1").get_attribute("value") == "random"
    assert browser.find_element(By.ID, "seed").get_attribute("value") == "23"
    assert Select(browser.find_element(By.ID, "speed")).first_selected_option.get_attribute("value") == "0"
    return version


def _check_the_match_end(browser: webdriver.Chrome) -> int:
    """The match's end: it fits both widths, the banner says the score, the last hand's end
    stays, the sheet's legend and header; a reload brings the same finished match back."""
    _fits(browser, "the match's end at 1,280 px")
    _at_width(browser, PHONE)
    _fits(browser, "the match's end at a phone's width")
    _at_width(browser, WIDE)
    result = browser.find_element(By.ID, "match-result").text
    # The banner says the score, as the terminal does (a short session is won on points).
    assert re.fullmatch(r"Match over: (You win|Random wins), \d+ to \d+\.", result), result
    _check_hand_end(browser)  # the last hand's end stays on the table, with the banner
    assert browser.find_element(By.CSS_SELECTOR, "#hand-end .banner").text == result
    legend = browser.find_element(By.ID, "sheet-legend").text
    assert "\u25a1 a box" in legend and "games: columns won" in legend, legend
    head = browser.find_element(By.CSS_SELECTOR, "table.sheet tr.head th")
    assert head.text == "Hollywood" and head.size["height"] < 30, "the sheet's header wraps"
    _shot(browser, "web_match_end.png")
    # The page reload continues the game: the same finished match comes back.
    browser.refresh()
    version = _settled(browser, -1)
    assert browser.find_element(By.ID, "match-result").text == result
    return version


def _replay_the_file(browser: webdriver.Chrome, version: int) -> None:
    """Replays the saved file: forward, a hand's start, the end."""
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
    replayed = Select(browser.find_element(By.ID, "replay-file")).first_selected_option.text
    assert replayed.startswith("web_") and replayed.endswith(".json")  # the controls show the replay's file
    setup = browser.find_element(By.ID, "setup").size["height"]
    assert setup < 100, f"the settings bar takes {setup} px (more than two lines) in a replay"
    _fits(browser, "a replay at 1,280 px")
    _shot(browser, "web_replay.png")
    browser.find_element(By.ID, "last").click()
    _settled(browser, version)
    assert browser.find_element(By.ID, "match-result").text.startswith("Match over")
    assert not _error(browser)


def test_play_a_duel_by_clicking_then_replay_it(server: str, browser: webdriver.Chrome) -> None:
    version = _start_from_the_lobby(browser, server)
    shot_taken = reloaded = drawn_seen = False
    hand_ends: list[str] = []
    for moves in range(2000):
        assert not _error(browser), _error(browser)
        if browser.find_element(By.TAG_NAME, "body").get_dom_attribute("data-over") == "1":
            break
        if browser.find_elements(By.ID, "next-hand"):
            hand_ends.append(_check_hand_end(browser))
            if len(hand_ends) == 1:
                _fits(browser, "a hand's end at 1,280 px")
                _shot(browser, "web_hand_end.png")
                # The other setting: a pause, after which the next hand is dealt unasked.
                Select(browser.find_element(By.ID, "hand-end-setting")).select_by_value("3000")
                assert "dealt in 3 s" in browser.find_element(By.ID, "controls").text
                WebDriverWait(browser, 15).until(lambda d: not d.find_elements(By.ID, "hand-end"))
                version = _settled(browser, version)
                Select(browser.find_element(By.ID, "hand-end-setting")).select_by_value("0")
                continue
            browser.find_element(By.ID, "next-hand").click()
            version = _settled(browser, version)
            continue
        if moves == 6:
            version = _reload_keeps_the_seat(browser)
            reloaded = True
        if not shot_taken and browser.find_elements(By.CSS_SELECTOR, "#showdown .showdown") \
                and browser.find_elements(By.CSS_SELECTOR, "#tables .card[data-action]"):
            _fits(browser, "a game at 1,280 px")
            _shot(browser, "web_play.png")
            _at_width(browser, PHONE)
            _fits(browser, "a game at a phone's width")
            _shot(browser, "web_phone.png")
            _at_width(browser, WIDE)
            shot_taken = True
        kind = _click_a_move(browser)
        version = _settled(browser, version)
        drawn = browser.find_elements(By.CSS_SELECTOR, "#tables .hand .card.drawn")
        if kind == "draw" and not browser.find_elements(By.ID, "hand-end"):
            # The card drawn from the stock: highlighted in the hand, named in your log line.
            assert len(drawn) == 1, "the drawn card is not highlighted"
            card = drawn[0].get_dom_attribute("title").split(" ")[0]
            # The log's lines as shown, in one round trip (not one per line: the log grows all match).
            lines = browser.execute_script(
                "return [...document.querySelectorAll('#log li')].map(li => li.innerText.trim());")
            mine = [line for line in lines if line.startswith("You ")]
            assert mine[-1] == f"You draw {card} from the stock", (mine[-3:], card)
            drawn_seen = True
        elif kind == "discard":
            assert not drawn  # gone once discarded
    else:
        raise AssertionError("the match did not end")
    assert shot_taken and reloaded and drawn_seen and len(hand_ends) >= 2  # one after a pause, one by the button
    assert not CARD_CODE.search(browser.find_element(By.ID, "log").text), browser.find_element(By.ID, "log").text
    version = _check_the_match_end(browser)
    _replay_the_file(browser, version)


def test_watch_a_policy_with_long_names_and_one_card_notation(server: str, browser: webdriver.Chrome) -> None:
    """Watching a trained policy (named by a long ppo:PATH): the name is shortened with the
    full one on hover, the policy panel says how many moves it leaves out, cards are
    written one way in the tables, the move log and the panel; it fits both widths."""
    _at_width(browser, WIDE)
    browser.get(server + "/")
    version = _settled(browser, -1)
    browser.find_element(By.ID, "tab-watch").click()
    Select(browser.find_element(By.ID, "rules")).select_by_value("hollywood")
    for seat, agent in ((0, "ppo:hgin_ppo_scratch.zip"), (1, "random")):
        Select(browser.find_element(By.ID, f"agent-{seat}")).select_by_value(agent)
    browser.find_element(By.ID, "seed").send_keys("5")
    browser.find_element(By.ID, "start").click()
    version = _settled(browser, version, timeout=60)
    for _ in range(40):  # to a discard of the policy (11 legal moves: more than the panel lists)
        more = browser.find_elements(By.ID, "policy-more")
        if more:
            break
        browser.find_element(By.TAG_NAME, "body").send_keys("n")
        version = _settled(browser, version)
    else:
        raise AssertionError("the policy never had more legal moves than the panel lists")
    assert re.match(r"8 of \d+ legal moves shown; the other \d+ have", more[0].text), more[0].text
    names = [n for n in browser.find_elements(By.CSS_SELECTOR, "#tables .who .name") if "ppo" in n.text]
    assert names and "\u2026" in names[0].text
    assert names[0].get_attribute("title") == "player_0 (ppo:hgin_ppo_scratch.zip)"
    for where in ("log", "policy"):
        text = browser.find_element(By.ID, where).text
        assert not CARD_CODE.search(text), (where, text)
    assert any(s in browser.find_element(By.ID, "log").text + browser.find_element(By.ID, "policy").text
               for s in "\u2663\u2666\u2665\u2660")
    _fits(browser, "watching at 1,280 px")
    _shot(browser, "web_watch.png")
    _at_width(browser, PHONE)
    _fits(browser, "watching at a phone's width")
    _at_width(browser, WIDE)
    assert not _error(browser)
