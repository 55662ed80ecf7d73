"""The OpenSpiel bridge: numbering, rules, deals, the bot as an agent, hands at OpenSpiel's
table, the cross-engine lockstep check and the upstream reproducers of docs/openspiel.md.

pyspiel is imported here unconditionally: ``make test`` installs the ``openspiel`` extra, so a
missing OpenSpiel fails these tests instead of skipping them."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyspiel  # noqa: F401 - the extra must be installed (no skip)
import pytest

import arena.crosscheck as crosscheck_module
from agents import make_agent
from agents.openspiel import (
    OS_KNOCK,
    OpenSpielBotAgent,
    from_openspiel_card,
    meld_actions,
    meld_of_openspiel_id,
    openspiel_meld_id,
    openspiel_params,
    pyspiel_module,
    rules_from_params,
    split_meld,
    to_openspiel_card,
)
from arena.crosscheck import (
    CATEGORIES,
    CrosscheckReport,
    crosscheck,
    lockstep_hand,
    openspiel_actions,
    openspiel_moves,
)
from arena.openspiel import AgentSeat, BotSeat, Deal, answer_chance, defender_plan, hand_of, play_openspiel_hand
from eval import crosscheck as crosscheck_script
from eval import peer
from hgin_env import actions as A
from hgin_env.cards import parse_card, parse_cards
from hgin_env.game import build_deck
from hgin_env.match import Match
from hgin_env.observation import observe
from hgin_env.rules import PROFILES

ROOT = Path(__file__).resolve().parents[1]
UTILS = pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)


# --------------------------------------------------------------------------- numbering
def test_cards_map_both_ways_and_keep_rank_and_suit_letters() -> None:
    assert sorted(to_openspiel_card(c) for c in range(52)) == list(range(52))
    assert all(from_openspiel_card(to_openspiel_card(c)) == c for c in range(52))
    for text in ("AC", "TD", "7H", "KS"):
        assert UTILS.card_string(to_openspiel_card(parse_card(text))) == text[0] + text[1].lower()
    with pytest.raises(ValueError, match="outside 0..51"):
        to_openspiel_card(52)


def test_meld_ids_are_openspiels_own() -> None:
    for meld_id in range(185):
        ours = meld_of_openspiel_id(meld_id)
        assert sorted(UTILS.int_to_meld[meld_id]) == sorted(to_openspiel_card(c) for c in ours)
        assert openspiel_meld_id(ours) == meld_id == UTILS.meld_to_int(sorted(to_openspiel_card(c) for c in ours))
    with pytest.raises(ValueError, match="not an OpenSpiel meld"):
        openspiel_meld_id(parse_cards("AC 2C 4C"))
    with pytest.raises(ValueError, match="not an OpenSpiel meld"):
        openspiel_meld_id(parse_cards("AC 2C 3C 4C 5C 6C"))  # six: split it first


def test_long_runs_split_into_pieces_openspiel_can_lay() -> None:
    for length in range(3, 14):
        run = tuple(range(13 - length, 13))  # clubs, up to the king
        pieces = split_meld(run)
        assert [c for p in pieces for c in p] == list(run)
        assert all(3 <= len(p) <= 5 for p in pieces)
    assert [len(p) for p in split_meld(range(6))] == [3, 3]
    assert [len(p) for p in split_meld(range(7))] == [4, 3]
    assert meld_actions([parse_cards("AC 2C 3C 4C 5C 6C"), parse_cards("9C 9D 9H")]) == [
        56 + openspiel_meld_id(parse_cards("AC 2C 3C")), 56 + openspiel_meld_id(parse_cards("4C 5C 6C")),
        56 + openspiel_meld_id(parse_cards("9C 9D 9H"))]


# --------------------------------------------------------------------------- rules
def test_openspiel_defaults_are_our_default_profile() -> None:
    assert rules_from_params({}) is PROFILES["hollywood"]
    assert rules_from_params(pyspiel.load_game("gin_rummy").get_parameters()) is PROFILES["hollywood"]
    assert openspiel_params(PROFILES["hollywood"]) == {"oklahoma": False, "knock_card": 10, "gin_bonus": 25,
                                                       "undercut_bonus": 25}
    seven = rules_from_params({"knock_card": 7, "gin_bonus": 20})
    assert (seven.knock_limit, seven.gin_bonus, seven.undercut_bonus) == (7, 20, 25)
    okla = rules_from_params({"oklahoma": True})
    assert okla.oklahoma and okla.oklahoma_ace_gin_only and okla.spade_multiplier == 1
    assert openspiel_params(okla)["oklahoma"] is True
    for profile in ("gin_us_uk", "straight_gin", "hollywood_classic"):  # hands OpenSpiel can play
        assert rules_from_params(openspiel_params(PROFILES[profile])).knock_limit == PROFILES[profile].knock_limit


@pytest.mark.parametrize(("params", "message"), [
    ({"knock_card": 11}, "knock_card must be an int in 0..10"),
    ({"num_ranks": 10}, "num_ranks=13"),
    ({"players": 3}, "unknown OpenSpiel gin_rummy parameter"),
])
def test_bad_openspiel_parameters_are_refused(params: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rules_from_params(params)


@pytest.mark.parametrize(("profile", "option"), [
    ("gin_classic", "first_upcard_offer"), ("oklahoma", "oklahoma"), ("hollywood_three_hand", "format")])
def test_rules_openspiel_cannot_play_name_the_option(profile: str, option: str) -> None:
    with pytest.raises(ValueError, match=f"cannot play {option}="):
        openspiel_params(PROFILES[profile])


def test_missing_pyspiel_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    with pytest.raises(ImportError, match=r"\.\[openspiel\]"):
        pyspiel_module()


# --------------------------------------------------------------------------- deals
def test_a_deal_goes_to_openspiel_and_back() -> None:
    game = Match(seed=11, single_hand=True, first_dealer=1).current_game
    deal = Deal.from_game(game)
    state = deal.openspiel_state()
    assert hand_of(state, 0) == game.hand_cards(0) and hand_of(state, 1) == game.hand_cards(1)
    assert from_openspiel_card(state.upcard()) == game.upcard
    assert state.current_player() == 0 and state.stock_size() == 31
    back = Deal.from_openspiel(state)
    assert back.hands == deal.hands and back.upcard == deal.upcard
    assert back.game().hand_cards(0) == game.hand_cards(0)
    # Stock draws answered from the deal come back in drawing order.
    state.apply_action(54)
    state.apply_action(54)
    state.apply_action(53)
    state.apply_action(deal.chance_outcomes()[21])
    assert Deal.from_openspiel(state).stock[0] == deal.stock[0] == game.stock[-1]
    assert Deal.from_seed(11) == deal
    # A match's later hand: its own deal, non-dealer first.
    match = Match(seed=3)
    while match.hand_number == 1:
        match.apply(match.legal_actions()[0])
    hand = match.current_game  # the second hand, before its first move
    later = Deal.from_game(hand)
    assert later.hands[0] == hand.hand_cards(1 - hand.dealer)
    with pytest.raises(ValueError, match="each of the 52 cards once"):
        Deal((deal.hands[0], deal.hands[0]), deal.upcard, deal.stock)
    with pytest.raises(ValueError, match="10 cards"):
        Deal((deal.hands[0][:9], deal.hands[1]), deal.upcard, deal.stock)
    with pytest.raises(ValueError, match="before its first move"):
        game.apply(game.legal_actions()[0])
        Deal.from_game(game)


# --------------------------------------------------------------------------- the bot as an agent
def _bot_move(state: object, player: int) -> int:
    """What OpenSpiel's bot plays on a real state, in our action ids."""
    bot = pyspiel.make_simple_gin_rummy_bot(pyspiel.load_game("gin_rummy").get_parameters(), player)
    choice = bot.step(state)
    if choice == OS_KNOCK:
        return A.KNOCK + from_openspiel_card(bot.step(state.child(OS_KNOCK)))
    named = {52: A.TAKE_DISCARD, 53: A.DRAW_STOCK, 54: A.PASS}
    return named[choice] if choice in named else A.DISCARD + from_openspiel_card(choice)


def test_the_bot_agent_decides_as_the_bot_on_the_real_state() -> None:
    """At every decision of ``openspiel:simple`` in our engine, the bot asked on the real
    OpenSpiel state of the same hand (played in lockstep) chooses the same move."""
    agent = make_agent("openspiel:simple")
    assert isinstance(agent, OpenSpielBotAgent)
    compared = 0
    for seed in range(25):
        game = Match(seed=seed, single_hand=True, first_dealer=1).current_game
        deal = Deal.from_game(game)
        state = deal.openspiel_state()
        while not game.is_over:
            p = game.current_player
            ours, theirs = agent(observe(game, p)), _bot_move(state, p)
            if len(game.legal_actions()) > 1 and theirs in game.legal_actions():
                assert ours == theirs, (seed, A.describe_action(ours), A.describe_action(theirs))
                compared += 1
            if game.apply(ours) is not None:
                break
            for action in openspiel_actions(ours):
                state.apply_action(action)
                if state.is_chance_node():
                    answer_chance(state, deal)
    assert compared > 300


def test_the_stored_bot_moves_are_the_live_bots_and_the_reference_is_openspiels_utils() -> None:
    """tests/data/openspiel_bot_states.npz (what tests/test_openspiel_bot.py checks the
    batched bot against, without pyspiel) still holds the live bot's moves, and the batched
    bot's literal reference of gin_rummy_utils agrees with pyspiel's on random hands."""
    import numpy as np

    from agents import openspiel_bot

    with np.load(ROOT / "tests" / "data" / "openspiel_bot_states.npz") as data:
        obs, masks, moves = data["observations"], data["masks"], data["moves"]
    agent = make_agent("openspiel:simple")
    for i in range(0, len(moves), 7):  # a seventh of them: the whole file takes a few seconds
        assert agent({"observation": obs[i], "action_mask": masks[i]}) == moves[i], i
    rng = np.random.default_rng(0)
    crowded = [s * 13 + r for s in range(4) for r in range(3, 8)]  # 20 cards: many melds, many ties
    for k, size in enumerate([10, 11] * 300):
        deck = crowded if k % 3 else range(52)
        hand = sorted(int(c) for c in rng.choice(deck, size=size, replace=False))
        assert openspiel_bot.min_deadwood(hand) == UTILS.min_deadwood(hand), hand
        assert openspiel_bot.best_meld_group(hand) == [list(m) for m in UTILS.best_meld_group(hand)], hand
        assert openspiel_bot.all_melds(hand) == [list(m) for m in UTILS.all_melds(hand)], hand


def test_openspiel_bot_names_and_fallback() -> None:
    with pytest.raises(ValueError, match="known: openspiel:simple"):
        make_agent("openspiel:mcts")
    # A knock whose only discard is the card just taken (OpenSpiel allows it, ours does not):
    # the agent plays the bot's rule on our moves instead, and counts it.
    deck = build_deck("2C 3C 4C 5D 6D 7D 9H 9S 9D AS", "KC KD KH QC QD QH JC JD JH TC", "8S")
    game = Match(seed=0, single_hand=True, first_dealer=1, deck=deck).current_game
    agent = make_agent("openspiel:simple")
    assert agent(observe(game, 0)) == A.TAKE_DISCARD  # 8S: with it the bot may knock at once
    game.apply(A.TAKE_DISCARD)
    assert _bot_move(Deal.from_game(Match(seed=0, single_hand=True, first_dealer=1, deck=deck).current_game)
                     .openspiel_state().child(52), 0) == A.KNOCK + parse_card("8S")  # 8S thrown back
    assert agent(observe(game, 0)) == A.KNOCK + parse_card("AS")  # ours: 8S may not go back
    assert agent.fallbacks == 1


# --------------------------------------------------------------------------- OpenSpiel's table
def test_hands_at_openspiels_table_are_zero_sum_and_followed() -> None:
    expert = AgentSeat(make_agent("expert", seed=0), "expert")
    bot = BotSeat()
    kinds = set()
    for seed in range(20):
        deal = Deal.from_seed(seed)
        for seats in ([expert, bot], [bot, expert]):
            out = play_openspiel_hand(deal, seats)
            assert out.returns[0] == -out.returns[1]
            assert out.mirror_stopped == ""
            kinds.add(out.kind)
    assert {"knock", "undercut"} <= kinds
    # Two of our agents at OpenSpiel's table: a whole hand with our showdown moves on both sides.
    out = play_openspiel_hand(Deal.from_seed(4), [AgentSeat(make_agent("simple", seed=1)),
                                                  AgentSeat(make_agent("expert", seed=2))])
    assert out.kind in ("knock", "gin", "undercut", "tie", "wall")


def test_the_defender_plan_melds_long_layoff_runs() -> None:
    # 6S 7S 8S would go onto 3S 4S 5S, three cards off one end: OpenSpiel refuses the third,
    # so the plan melds them as a run of their own (the same deadwood, 2 for the 2D).
    knocker = [parse_cards("3S 4S 5S"), parse_cards("9C 9D 9H"), parse_cards("JC JD JH")]
    laid, own, dw = defender_plan(knocker, parse_cards("6S 7S 8S 2D 4D 6D 8D TC QH KH"), gin=False)
    assert laid == [] and parse_cards("6S 7S 8S") in own
    laid, own, dw = defender_plan(knocker, parse_cards("6S 7S 2D 4D 6D 8D TC QH KH AC"), gin=False)
    assert laid == list(parse_cards("6S 7S"))


def test_the_bot_lays_no_melds_against_gin() -> None:
    deck = build_deck("AC 2C 3C 4C 5C 6C 7C 8C 9C KD", "5H 5S 5D JH QH KH 2D 3S 8H 9S", "TC")
    game = Match(seed=0, single_hand=True, first_dealer=1, deck=deck).current_game
    out = play_openspiel_hand(Deal.from_game(game), [AgentSeat(make_agent("expert", seed=0)), BotSeat()])
    assert out.kind == "gin" and out.knocker == 0
    assert out.defender_min_deadwood == 22 and out.deadwood[1] == 67
    assert out.returns == (92.0, -92.0)  # 25 + 67; had the bot laid its melds, 25 + 22


# --------------------------------------------------------------------------- the lockstep check
def test_lockstep_hands_differ_only_by_the_rules_table() -> None:
    report = crosscheck(240, seed=1000)
    assert report.hands == 240 and report.unexplained == 0, "\n".join(report.lines())
    assert report.legal_sets > 8000 and report.results >= 230
    assert report.equal_sets > 0.8 * report.legal_sets
    assert set(report.by_category) <= set(CATEGORIES)
    assert report.by_category["take_and_discard"] > 100
    oklahoma = crosscheck(40, seed=2000, params={"oklahoma": True})
    assert oklahoma.unexplained == 0 and oklahoma.results >= 38, "\n".join(oklahoma.lines())


def test_lockstep_sees_a_planted_difference(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check is not blind: one move missing from OpenSpiel's set, or an undercut bonus
    that differs, is unexplained."""
    real = crosscheck_module.openspiel_moves
    monkeypatch.setattr(crosscheck_module, "openspiel_moves", lambda state: real(state) - {A.PASS})
    assert crosscheck(4, seed=0, agents=("expert",)).unexplained >= 4
    monkeypatch.setattr(crosscheck_module, "openspiel_moves", real)
    bonus = PROFILES["hollywood"].replace(undercut_bonus=10)
    monkeypatch.setattr(crosscheck_module, "rules_from_params", lambda params: bonus)
    report = crosscheck(60, seed=0, agents=("expert", "openspiel:simple"))
    assert any(d.category == "unexplained" and "undercut" in d.detail for d in report.found)


class _Taker:
    """Takes every face-up card it may, throws its lowest legal card, never knocks."""

    def __call__(self, observation: dict) -> int:
        legal = [int(a) for a in observation["action_mask"].nonzero()[0]]
        if A.TAKE_DISCARD in legal:
            return A.TAKE_DISCARD
        discards = [a for a in legal if A.is_discard(a)]
        return discards[0] if discards else legal[0]


def test_openspiels_upcard_draw_cap_is_explained() -> None:
    report = lockstep_hand(5, [_Taker(), _Taker()], report=CrosscheckReport())
    assert report.by_category == {"upcard_draw_cap": 1, "take_and_discard": report.by_category["take_and_discard"]}
    assert report.legal_sets >= 50


def test_openspiel_moves_in_our_ids() -> None:
    deal = Deal.from_seed(2)
    state = deal.openspiel_state()
    assert openspiel_moves(state) == {A.TAKE_DISCARD, A.PASS}
    with pytest.raises(ValueError, match="no move of ours"):
        openspiel_moves(pyspiel.load_game("gin_rummy").new_initial_state())


# --------------------------------------------------------------------------- the scripts
def test_crosscheck_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert crosscheck_script.main(["--hands", "6", "--quiet", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "legal-move sets compared" in text and "unexplained" in text
    data = json.loads((tmp_path / "crosscheck.json").read_text())
    assert data["hands"] == 6 and data["by_category"]["unexplained"] == 0
    assert crosscheck_script.main(["--hands", "2", "--param", "knock_card=12", "--quiet"]) == 2
    assert crosscheck_script.main(["--hands", "2", "--param", "knock_card", "--quiet"]) == 2
    assert "name=value" in capsys.readouterr().err


def test_peer_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert peer.main(["--agents", "expert", "r=random", "--deals", "4", "--seed", "9", "--quiet",
                      "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "| expert | 4 (8) |" in text and "| r | 4 (8) |" in text
    lines = (tmp_path / "hands.csv").read_text().splitlines()
    assert len(lines) == 1 + 16 and lines[0].split(",") == peer.HAND_COLUMNS
    summary = json.loads((tmp_path / "summary.json").read_text())["summaries"]
    assert summary[1]["points_per_hand"] < 0 < summary[1]["lost"]
    before = (tmp_path / "summary.json").read_text()
    (tmp_path / "summary.json").unlink()
    assert peer.main(["--summarize", str(tmp_path)]) == 0  # rebuilt from hands.csv alone
    assert capsys.readouterr().out.strip() in text
    assert json.loads((tmp_path / "summary.json").read_text())["summaries"] == json.loads(before)["summaries"]
    assert peer.main(["--summarize", str(tmp_path / "none")]) == 2
    assert peer.main(["--deals", "2", "--quiet"]) == 2  # no agent
    assert peer.main(["--agents", "nobody", "--deals", "2", "--quiet"]) == 2
    assert peer.main(["--agents", "expert", "--hands", "0", "--quiet"]) == 2


def test_peer_summary_counts_a_deal_as_one_unit() -> None:
    rows = [{"deal_seed": s, "agent": "x", "points": p, "kind": "knock", "knocker": "agent",
             "bot_gin_melds_cost": 0, "refused_knocks": 0, "wall_knocks": 0}
            for s, p in ((1, 10), (1, -2), (2, 4), (2, 0))]
    s = peer.summarize(rows)
    assert s["deals"] == 2 and s["hands"] == 4 and s["points_per_hand"] == 3.0
    assert s["ci_low"] < 3.0 < s["ci_high"]  # the two deal means 4 and 2


# --------------------------------------------------------------------------- the upstream reports
def _reproducers() -> dict[str, str]:
    text = (ROOT / "docs" / "openspiel.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(# reproducer: (\S+)\n.*?)```", text, flags=re.S)
    return {name: code for code, name in blocks}


def test_docs_have_the_reproducers() -> None:
    assert set(_reproducers()) == {"min_deadwood_shortcut", "bot_gin_melds", "layoff_chain"}


@pytest.mark.parametrize("name", ["min_deadwood_shortcut", "bot_gin_melds", "layoff_chain"])
def test_upstream_reproducer_still_shows_the_fault(name: str) -> None:
    """Each bug report of docs/openspiel.md runs with pyspiel alone and its asserts hold (they
    state the fault: when OpenSpiel fixes it, this test fails and the page needs an update)."""
    exec(compile(_reproducers()[name], f"docs/openspiel.md:{name}", "exec"), {})
