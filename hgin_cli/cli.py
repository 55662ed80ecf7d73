"""The ``hgin`` command line: play a match in the terminal, replay saved matches, and thin
fronts for the tournament, training and benchmark scripts.

    hgin play --opponent expert --seed 7 --save my_match.json
    hgin play --resume my_match.json                                 (play on from a saved match)
    hgin replay my_match.json --moves
    hgin rules [PROFILE]
    hgin tournament --agents expert simple random --matches 200     (= python -m eval.tournament)
    hgin train --total-timesteps 2000000 --run-name my_run          (= python -m train.ppo)
    hgin bench ...                                                   (= python -m eval.bench.run)

Saved matches are JSON (:func:`save_match` / :func:`load_match`)::

    {"format": "hgin-match", "rules_version": 1, "rules": {...all Rules options...},
     "seed": 7, "first_dealer": null, "actions": [105, 12, ...],
     "players": ["human", "expert"], "complete": true}

``seed``, ``first_dealer`` (``null`` = drawn from the seed, as ``Game`` does by default) and
the rules rebuild the deals; ``actions`` are the action ids of both players in order, so
``hgin_env.game.replay(rules, seed, actions, first_dealer=...)`` gives back the same match.
``players`` and ``complete`` (false for an abandoned match) are informative only.

Importing this module is light: torch is imported only when a PPO opponent is loaded.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import random
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from hgin_env import actions as A
from hgin_env.cards import format_card, format_cards
from hgin_env.game import Game, HandRecord, Phase
from hgin_env.match import Match
from hgin_env.observation import ObservationLayout
from hgin_env.render import grouped_hand, hand_order, render_hand_result, render_table
from hgin_env.rules import PROFILES, RULES_VERSION, Rules, get_rules

MATCH_FORMAT = "hgin-match"
BUILTIN_OPPONENTS = ("random", "simple", "expert")
#: Subcommands forwarded untouched to another script's ``main(argv)``: (module, what it is).
FORWARDED = {
    "tournament": ("eval.tournament", "duplicate-deal tournament between agents"),
    "train": ("train.ppo", "train a MaskablePPO policy"),
    "bench": ("eval.bench.run", "benchmark against the reference anchors"),
}


class CliError(Exception):
    """An error reported as one line on stderr with exit code 2 (no traceback)."""


class MatchFileError(CliError, ValueError):
    """A saved match that cannot be used (corrupt, incomplete, or another rules version)."""


# =========================================================================== saved matches
def save_match(game: Game, path: str | Path, players: Sequence[str] | None = None) -> Path:
    """Write ``game`` (finished or not) as a ``hgin-match`` JSON file; returns the path.

    The game must have been dealt from its seed (``Game(rules, seed, first_dealer=...)``);
    a game with a stacked ``deck`` cannot be rebuilt from a seed and raises ``ValueError``.
    """
    if game.deck is not None:
        raise ValueError("a game dealt from a stacked deck cannot be saved as a seed replay")
    rules = get_rules(game.rules)
    data: dict[str, Any] = {
        "format": MATCH_FORMAT,
        "rules_version": RULES_VERSION,
        "rules": rules.to_dict(),
        "seed": game.seed,
        "first_dealer": game.first_dealer,
        "single_hand": bool(game.single_hand),
        "actions": [int(a) for a in game.action_history],
        "players": list(players) if players is not None else ["player_0", "player_1"],
        "complete": bool(game.is_over),
    }
    path = Path(path)
    path.write_text(json.dumps(data) + "\n")
    return path


def load_match(path: str | Path) -> tuple[dict[str, Any], Game]:
    """Read and check a saved match; returns ``(data, game)`` with the game replayed to its end.

    Raises :class:`MatchFileError` (a ``ValueError``) with a one-line reason for a missing
    or unreadable file, bad JSON, missing or mistyped keys, another format or rules version,
    unknown rule options, or an action that is illegal where it occurs.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise MatchFileError(f"{path}: cannot read the file ({exc.strerror or exc})") from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise MatchFileError(f"{path}: not a saved match (not UTF-8 text: {exc.reason} at byte "
                             f"{exc.start})") from None
    except json.JSONDecodeError as exc:
        raise MatchFileError(f"{path}: not a saved match (invalid JSON: {exc})") from None
    if not isinstance(data, dict):
        raise MatchFileError(f"{path}: not a saved match (expected a JSON object)")
    if data.get("format") != MATCH_FORMAT:
        raise MatchFileError(f"{path}: not a saved match (format {data.get('format')!r}, "
                             f"expected {MATCH_FORMAT!r})")
    missing = [k for k in ("rules_version", "rules", "seed", "first_dealer", "actions") if k not in data]
    if missing:
        raise MatchFileError(f"{path}: saved match is missing {', '.join(missing)}")
    if data["rules_version"] != RULES_VERSION:
        raise MatchFileError(f"{path}: saved with rules version {data['rules_version']!r}, this hgin_env "
                             f"plays rules version {RULES_VERSION}; the match cannot be replayed")
    if not isinstance(data["rules"], dict):
        raise MatchFileError(f"{path}: 'rules' must be an object of rule options")
    try:
        rules = Rules.from_dict(data["rules"])
    except (TypeError, ValueError) as exc:
        raise MatchFileError(f"{path}: bad rules: {exc}") from None
    seed = data["seed"]
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise MatchFileError(f"{path}: 'seed' must be an integer >= 0, got {seed!r}")
    if data["first_dealer"] not in (None, 0, 1) or isinstance(data["first_dealer"], bool):
        raise MatchFileError(f"{path}: 'first_dealer' must be null, 0 or 1, got {data['first_dealer']!r}")
    actions = data["actions"]
    if not isinstance(actions, list) or not all(
            isinstance(a, int) and not isinstance(a, bool) for a in actions):
        raise MatchFileError(f"{path}: 'actions' must be a list of action ids (integers)")
    single_hand = data.get("single_hand", False)
    if not isinstance(single_hand, bool):
        raise MatchFileError(f"{path}: 'single_hand' must be true or false, got {single_hand!r}")
    try:
        game = Game(rules=rules, seed=seed, single_hand=single_hand, first_dealer=data["first_dealer"])
    except ValueError as exc:
        raise MatchFileError(f"{path}: {exc}") from None
    for i, action in enumerate(actions):
        if game.is_over:
            raise MatchFileError(f"{path}: action #{i + 1} ({action}) comes after the end of the match")
        if action not in game.legal_actions():
            raise MatchFileError(
                f"{path}: action #{i + 1} ({action}: {A.describe_action(action)}) is illegal in hand "
                f"{game.hand_number} for player_{game.current_player}; the file is corrupt")
        game.apply(action)
    return data, game


# =========================================================================== helpers
def _out() -> Any:
    return sys.stdout


def _say(*lines: str) -> None:
    out = _out()
    for line in lines:
        print(line, file=out)
    out.flush()


def _can_print_symbols() -> bool:
    encoding = getattr(sys.stdout, "encoding", None)
    if encoding is None:  # an in-memory stream (StringIO) takes any text
        return True
    try:
        "♣♦♥♠".encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _card(card: int | None, symbols: bool) -> str:
    return "-" if card is None else format_card(card, symbols)


def describe_move(game: Game, action: int, name: str, symbols: bool = True) -> str:
    """What ``name`` does with ``action`` in ``game``'s current state (call before applying):
    ``player_1 draws from the stock``, ``player_1 takes 7♥``, ``player_1 discards 9♣``..."""
    top = _card(game.discard_top, symbols)
    if action == A.DRAW_STOCK:
        return f"{name} draws from the stock"
    if action == A.TAKE_DISCARD:
        if game.phase == Phase.FIRST_UPCARD:
            return f"{name} takes the upcard {top}"
        return f"{name} takes {top} from the discard pile"
    if action == A.PASS:
        return f"{name} passes on the upcard {top}"
    if action == A.BIG_GIN:
        return f"{name} lays down all 11 cards: big gin!"
    card = A.action_card(action)
    if action >= A.KNOCK:
        dw = game.deadwood_after_discard().get(card, -1) if game.phase == Phase.DISCARD else -1
        if dw == 0:
            return f"{name} goes gin! (discards one card face down)"
        return f"{name} knocks (discards one card face down)"
    return f"{name} discards {_card(card, symbols)}"


def _column_names(n: int) -> list[str]:
    return ["I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX"][:n]


def _winner_line(game: Game, names: Sequence[str]) -> str:
    board = game.scoreboard
    won = board.columns_won
    hands = len(game.hand_history)
    if game.truncated:
        head = f"Match stopped after {hands} hands (the rules' max_hands cap)"
    else:
        head = f"Match over after {hands} hands"
    winner = board.match_winner
    # Profiles with game, shutout and box bonuses (004, 001) are paid on the settlement.
    settled = f"; {board.settlement_text(names)}" if board.is_settled else ""
    if winner is None:
        return f"{head}: a draw, columns {won[0]}-{won[1]}{settled}."
    if board.num_columns == 1 or board.rules.short_session:
        totals = board.columns.sum(axis=1)
        return (f"{head}: {names[winner]} wins, {int(totals[winner])} to "
                f"{int(totals[1 - winner])}{settled}.")
    return f"{head}: {names[winner]} wins, {won[winner]} columns to {won[1 - winner]}{settled}."


def _hand_summary(record: HandRecord, game: Game, names: Sequence[str], symbols: bool) -> list[str]:
    lines = [render_hand_result(record, symbols)]
    if record.knock_discard is not None:
        lines.append(f"  (knock discard, face down: {_card(record.knock_discard, symbols)})")
    for j in record.columns_decided:
        w = game.scoreboard.column_winners[j]
        lines.append(f"  Column {_column_names(game.scoreboard.num_columns)[j]} is decided: "
                     f"won by {names[w] if w is not None else '-'}")
    lines.append(str(game.scoreboard))
    return lines


# =========================================================================== play
HELP_TEXT = """\
Moves:
  draw            draw the top card of the stock
  take            take the top card of the discard pile (or the first upcard)
  pass            pass on the first upcard
  7H              discard 7H (ranks A 2..9 T/10 J Q K, suits C D H S)
  knock 7H        knock, discarding 7H face down (deadwood must be within the knock limit)
  big gin         lay down all 11 cards (only if the rules allow big gin)
Also: help (this text, and the deadwood after each discard), show (the table again), quit."""


class _Quit(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class HumanMatch:
    """A terminal duel: the human in seat ``human`` against ``agent``, played by
    :meth:`Match.play` (the human is a policy that prompts) on the match's one ``Game``."""

    def __init__(self, match: Match, human: int, agent: Any, agent_label: str, symbols: bool = True):
        self.match = match
        self.game = match.current_game
        self.human = human
        self.agent = agent
        self.symbols = symbols
        self.names = ["", ""]
        self.names[human] = f"player_{human} (you)"
        self.names[1 - human] = f"player_{1 - human} ({agent_label})"
        self.labels = ["", ""]
        self.labels[human] = "human"
        self.labels[1 - human] = agent_label
        #: The move being made, as said before it was applied, and the mover's hand then.
        self._told: tuple[str | None, int] = (None, 0)

    # ------------------------------------------------------------------ text
    def cards(self, cards: Sequence[int]) -> str:
        return format_cards(cards, self.symbols)

    def legal_moves_text(self) -> str:
        """The legal moves as the words to type (ASCII cards)."""
        g = self.game
        legal = g.legal_actions()
        top = _card(g.discard_top, False)
        if g.phase == Phase.FIRST_UPCARD:
            return f"legal moves: take (the upcard {top}), pass"
        if g.phase == Phase.DRAW:
            parts = ["draw (from the stock)"]
            if A.TAKE_DISCARD in legal:
                parts.append(f"take ({top})")
            return "legal moves: " + ", ".join(parts)
        order = hand_order(g.hands[g.current_player])  # as the hand is shown: melds, then loose cards
        discards = [format_card(c) for c in order if A.DISCARD + c in legal]
        knocks = [format_card(c) for c in order if A.KNOCK + c in legal]
        text = "legal moves: discard " + " ".join(discards)
        if knocks:
            text += " | knock " + " / knock ".join(knocks)
        if A.BIG_GIN in legal:
            text += " | big gin"
        return text

    def why_illegal(self, action: int) -> str:
        g = self.game
        text = A.describe_action(action)
        card = A.action_card(action)
        if g.phase == Phase.FIRST_UPCARD:
            return f"'{text}' is not possible now: take the first upcard or pass."
        if g.phase == Phase.DRAW:
            if action == A.PASS:
                if not g.rules.first_upcard_offer:
                    return ("These rules have no first-upcard offer (004): nobody passes; draw "
                            "from the stock or take the discard.")
                return "You can only pass on the first upcard; now draw a card."
            if action == A.TAKE_DISCARD:
                return "Both players passed the upcard: you must draw from the stock."
            return f"'{text}': draw a card first ('draw' from the stock or 'take' the discard)."
        if action in (A.DRAW_STOCK, A.TAKE_DISCARD, A.PASS):
            return "You have already drawn: now discard a card (e.g. '7H') or knock ('knock 7H')."
        if action == A.BIG_GIN:
            return "Big gin is not possible (not allowed by these rules, or not all 11 cards melded)."
        assert card is not None
        if not g.hands[g.current_player] >> card & 1:
            return f"You do not hold {format_card(card)}."
        if card == g.taken_card:
            return f"You just took {format_card(card)} from the discard pile: it cannot go back this turn."
        if action >= A.KNOCK:
            dw = g.deadwood_after_discard()[card]
            return (f"Cannot knock with {format_card(card)}: your deadwood would be {dw}, "
                    f"above the knock limit {g.knock_limit}.")
        return f"'{text}' is not legal now."

    def bare_knock(self) -> str:
        g = self.game
        if any(A.KNOCK <= a < A.DRAW_STOCK for a in g.legal_actions()):
            return "Say which card to discard face down, e.g. 'knock 7H'."
        best = min(dw for c, dw in g.deadwood_after_discard().items() if c != g.taken_card)
        return (f"You cannot knock: your deadwood after any discard is at least {best}, "
                f"above the knock limit {g.knock_limit}.")

    def show_table(self) -> None:
        g = self.game
        if g.phase == Phase.DISCARD:
            hand = grouped_hand(g.hands[self.human], self.symbols)
            _say(f"Your hand: {hand}", self.legal_moves_text())
            return
        _say("", render_table(g, self.human, self.symbols))
        if g.phase == Phase.FIRST_UPCARD:
            _say(f"First upcard {_card(g.discard_top, self.symbols)}: take it or pass.")
        _say(self.legal_moves_text())

    def show_help(self) -> None:
        _say(HELP_TEXT)
        g = self.game
        if g.phase == Phase.DISCARD:
            after = g.deadwood_after_discard()
            pairs = sorted(after.items(), key=lambda kv: (kv[1], kv[0]))
            _say("Deadwood after discarding: " + ", ".join(
                f"{_card(c, self.symbols)} {dw}" for c, dw in pairs if c != g.taken_card)
                + f"  (knock limit {g.knock_limit})")
        _say(self.legal_moves_text())

    # ------------------------------------------------------------------ input
    def read_line(self, prompt: str) -> str | None:
        out = _out()
        print(prompt, end="", file=out)
        out.flush()
        stdin = sys.stdin
        line = stdin.readline()
        if line == "":
            print(file=out)
            return None
        if not (hasattr(stdin, "isatty") and stdin.isatty()):
            print(line.rstrip("\r\n"), file=out)  # echo piped input, so transcripts read naturally
        return line

    def ask_move(self) -> int:
        self.show_table()
        while True:
            line = self.read_line("your move> ")
            if line is None:
                raise _Quit("end of input")
            text = line.strip()
            low = text.lower()
            if not text:
                _say(self.legal_moves_text())
                continue
            if low in ("quit", "exit", "q", "resign"):
                raise _Quit("you quit")
            if low in ("help", "h", "?"):
                self.show_help()
                continue
            if low in ("show", "table", "hand"):
                self.show_table()
                continue
            if low == "knock" and self.game.phase == Phase.DISCARD:
                _say(self.bare_knock(), self.legal_moves_text())
                continue
            try:
                action = A.parse_action(text)
            except ValueError as exc:
                _say(f"Cannot read {text!r}: {exc}. Type 'help' for the moves.", self.legal_moves_text())
                continue
            if action not in self.game.legal_actions():
                _say(self.why_illegal(action), self.legal_moves_text())
                continue
            return action

    # ------------------------------------------------------------------ loop
    def your_move(self, action: int) -> str | None:
        g = self.game
        top = _card(g.discard_top, self.symbols)
        if action == A.TAKE_DISCARD:
            return f"You take {top}"
        if action == A.PASS:
            return f"You pass on the upcard {top}"
        if A.KNOCK <= action < A.DRAW_STOCK:
            card = _card(A.action_card(action), self.symbols)
            gin = g.deadwood_after_discard().get(A.action_card(action)) == 0
            return f"You {'go gin' if gin else 'knock'}, discarding {card} face down"
        if action == A.BIG_GIN:
            return "You lay down big gin!"
        if A.DISCARD <= action < A.KNOCK:
            return f"You discard {_card(action - A.DISCARD, self.symbols)}"
        return None  # a draw is told after it, with the card drawn

    # The policies say what a move does before it is applied (the table changes with it);
    # after_move prints it once the match has applied it.
    def human_policy(self, obs: dict) -> int:
        """The human's seat: prompt until a legal move is typed."""
        action = self.ask_move()
        self._told = self.your_move(action), self.game.hands[self.human]
        return action

    def agent_policy(self, obs: dict) -> int:
        g = self.game
        action = int(self.agent(obs))
        if action not in g.legal_actions():
            raise CliError(f"the opponent agent chose an illegal action {action} "
                           f"({A.describe_action(action)}); this is a bug in the agent")
        self._told = describe_move(g, action, self.names[g.current_player], self.symbols), 0
        return action

    def after_move(self, seat: int, obs: dict, action: int, finished: list) -> None:
        g = self.game
        move, before = self._told
        if seat == self.human and action == A.DRAW_STOCK:
            drawn = (g.hands[seat] & ~before).bit_length() - 1
            move = f"You draw {_card(drawn, self.symbols)} from the stock"
        if move:
            _say(move)
        if finished:
            _say("", *_hand_summary(finished[0].record, g, self.names, self.symbols))
            if not g.is_over:
                _say("", f"=== Hand {g.hand_number}: player_{g.dealer} deals, "
                         f"upcard {_card(g.discard_top, self.symbols)} ===")

    def run(self, resumed_from: str | None = None) -> bool:
        """Play until the match ends (True) or the human quits / input ends (False).

        ``resumed_from`` names the saved match the game was loaded from: the greeting then
        says where the match stands instead of announcing the first deal.
        """
        g = self.game
        _say(f"Hollywood Gin, rules '{get_rules(g.rules).name}', seed {g.seed}. "
             f"You are player_{self.human}; {self.names[1 - self.human]} is your opponent.",
             "Type 'help' for the moves.")
        if resumed_from is None:
            _say(f"=== Hand 1: player_{g.dealer} deals, upcard {_card(g.discard_top, self.symbols)} ===")
        else:
            _say(f"Resuming {resumed_from} in hand {g.hand_number} (player_{g.dealer} deals), after "
                 f"{len(g.hand_history)} finished hand(s) and {len(g.action_history)} moves.",
                 str(g.scoreboard))
        policies = [self.agent_policy, self.agent_policy]
        policies[self.human] = self.human_policy
        try:
            self.match.play(policies, on_move=self.after_move)
        except _Quit as q:  # the match stays at its last applied move (it can be saved)
            _say(f"Match abandoned ({q.reason}) in hand {g.hand_number}, after "
                 f"{len(g.hand_history)} finished hand(s).", str(g.scoreboard))
            return False
        _say("", _winner_line(g, self.names))
        return True


def _make_opponent(spec: str, seed: int, rules: Rules) -> tuple[Any, str]:
    """Build the opponent agent from ``random|simple|expert``, ``ppo``, ``ppo:PATH`` or a PATH."""
    from agents.base import known_agents, make_agent

    if spec in BUILTIN_OPPONENTS or (":" in spec and not Path(spec).exists()):
        name, label = spec, spec
    elif spec == "ppo":
        name, label = "ppo:", "ppo"
    else:
        path = Path(spec)
        if not path.exists():
            raise CliError(f"unknown opponent {spec!r}: not one of {', '.join(BUILTIN_OPPONENTS)} "
                           f"and no such checkpoint file")
        name, label = f"ppo:{path}", f"ppo {path.name}"
    try:
        agent = make_agent(name, seed=seed, layout=ObservationLayout.for_rules(rules))
    except ImportError as exc:
        raise CliError(f"cannot load {spec!r}: {exc}; PPO opponents need the training extras "
                       "(pip install 'hgin_env[train]')") from None
    except ValueError as exc:
        if name.startswith("ppo:") or "unknown agent" not in str(exc):
            raise CliError(f"cannot load opponent {spec!r}: {exc}") from None
        raise CliError(f"unknown opponent {spec!r}; known: {', '.join(known_agents())} or a PATH") from None
    reset = getattr(agent, "reset", None)
    if reset is not None:
        with contextlib.suppress(TypeError):
            reset(seed=seed)
    return agent, label


def _resume(args: argparse.Namespace) -> tuple[Match, int, str, list[str]]:
    """The saved match of ``--resume``: (match at its last move, human seat, opponent spec, labels)."""
    given = [flag for flag, value in (("--seed", args.seed), ("--rules", args.rules), ("--seat", args.seat))
             if value is not None]
    if given:
        raise CliError(f"--resume takes the seed, rules and seat from {args.resume}; drop {', '.join(given)}")
    data, game = load_match(args.resume)
    if game.is_over:
        raise CliError(f"{args.resume}: the match is already finished; watch it with: hgin replay {args.resume}")
    players = data.get("players")
    if not (isinstance(players, list) and len(players) == 2 and players.count("human") == 1):
        raise CliError(f"{args.resume}: no human seat in the saved match (players {players!r}); "
                       "only matches saved by 'hgin play --save' can be resumed")
    human = players.index("human")
    label = players[1 - human]
    opponent = args.opponent
    if opponent is None:
        if not isinstance(label, str) or not (label in BUILTIN_OPPONENTS + ("ppo",) or label.startswith("ppo:")):
            raise CliError(f"{args.resume}: the opponent was {label!r}; say which agent to resume against "
                           "with --opponent (e.g. --opponent PATH.zip)")
        opponent = label
    return _duel_match(game), human, opponent, list(players)


def _duel_match(game: Game) -> Match:
    """The duel ``Match`` of a replayed saved ``game`` (its moves already checked by
    :func:`load_match`): the same seed and moves, so ``Match.play`` can play on."""
    match = Match(game.rules, seed=game.seed, first_dealer=game.first_dealer, single_hand=game.single_hand)
    for action in game.action_history:
        match.apply(action)
    return match


def cmd_play(args: argparse.Namespace) -> int:
    """``hgin play``: a new match, or (``--resume FILE``) the rest of a saved unfinished one.
    Three-hand and partnership matches are played by :mod:`hgin_cli.cli_formats`."""
    from .cli_formats import is_format_match_file, play_format

    if args.resume is not None:
        data = _peek_json(args.resume)
        if is_format_match_file(data):
            return play_format(args, data)
    elif get_rules(args.rules or "hollywood").format != "duel":
        return play_format(args)
    if args.seat not in (None, "0", "1", "random"):
        raise CliError(f"--seat {args.seat}: the duel has seats 0 and 1")
    if args.resume is not None:
        duel, human, opponent, _ = _resume(args)
        rules = get_rules(duel.rules)
        seed = duel.seed if duel.seed is not None else 0
        save = args.save if args.save is not None else args.resume
    else:
        rules = get_rules(args.rules or "hollywood")
        seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
        seat = args.seat or "0"
        human = random.Random(seed).randrange(2) if seat == "random" else int(seat)
        opponent = args.opponent or "expert"
        duel = Match(rules, seed=seed)
        save = args.save
    agent, label = _make_opponent(opponent, seed, rules)
    symbols = not args.ascii and _can_print_symbols()
    match = HumanMatch(duel, human, agent, label, symbols=symbols)
    try:
        finished = match.run(resumed_from=args.resume)
    except KeyboardInterrupt:
        _say("", "Interrupted.")
        finished = False
    if save:
        path = save_match(match.game, save, players=match.labels)
        _say(f"Saved the match to {path} (replay it with: hgin replay {path}"
             + ("" if finished else f"; play on with: hgin play --resume {path}") + ")")
    if not finished:
        _say("The match was not finished.")
    return 0


# =========================================================================== replay
def _peek_json(path: str | Path) -> Any:
    """The JSON of a saved match file, or None when it cannot be read (the loaders then
    report why)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def cmd_replay(args: argparse.Namespace) -> int:
    from .cli_formats import is_format_match_file, replay_format

    data = _peek_json(args.file)
    if is_format_match_file(data):
        return replay_format(args.file, data, args.moves, not args.ascii and _can_print_symbols())
    data, final = load_match(args.file)  # checks everything before printing anything
    symbols = not args.ascii and _can_print_symbols()
    rules = get_rules(final.rules)
    players = data.get("players")
    if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
        players = ["player_0", "player_1"]
    names = [f"player_{i} ({players[i]})" if players[i] != f"player_{i}" else players[i] for i in (0, 1)]
    _say(f"Replaying {args.file}: rules '{rules.name}', seed {data['seed']}, {len(data['actions'])} actions; "
         f"{names[0]} vs {names[1]}")
    game = Game(rules=rules, seed=data["seed"], single_hand=final.single_hand,
                first_dealer=data["first_dealer"])
    _say("", f"=== Hand 1: player_{game.dealer} deals, upcard {_card(game.discard_top, symbols)} ===")
    if args.moves:
        _say(f"  {names[0]}: {grouped_hand(game.hands[0], symbols)}",
             f"  {names[1]}: {grouped_hand(game.hands[1], symbols)}")
    for action in data["actions"]:
        p = game.current_player
        text = describe_move(game, action, names[p], symbols)
        before = game.hands[p]
        record = game.apply(action)
        if args.moves:
            if action == A.DRAW_STOCK:
                text += f" ({_card((game.hands[p] & ~before).bit_length() - 1, symbols)})"
            elif A.KNOCK <= action < A.DRAW_STOCK:
                text += f" [{_card(A.action_card(action), symbols)}]"
            _say("  " + text)
        if record is not None:
            _say("", *_hand_summary(record, game, names, symbols))
            if not game.is_over:
                _say("", f"=== Hand {game.hand_number}: player_{game.dealer} deals, "
                         f"upcard {_card(game.discard_top, symbols)} ===")
                if args.moves:
                    _say(f"  {names[0]}: {grouped_hand(game.hands[0], symbols)}",
                         f"  {names[1]}: {grouped_hand(game.hands[1], symbols)}")
    if game.is_over:
        _say("", _winner_line(game, names))
    else:
        _say("", f"The saved match stops in hand {game.hand_number} (it was not finished).")
    return 0


# =========================================================================== rules
def _differences(rules: Rules) -> dict[str, Any]:
    base = Rules().to_dict()
    return {k: v for k, v in rules.to_dict().items() if k != "name" and base.get(k) != v}


def cmd_rules(args: argparse.Namespace) -> int:
    if args.profile:
        rules = get_rules(args.profile)
        _say(f"Profile '{args.profile}' (rules version {RULES_VERSION}):")
        for key, value in rules.to_dict().items():
            if key != "name":
                _say(f"  {key:<22} {value!r}")
        return 0
    _say(f"Rules profiles (rules version {RULES_VERSION}); use with --rules PROFILE. "
         "'hgin rules PROFILE' lists every option; the rule book is docs/RULES.md.")
    for name, rules in PROFILES.items():
        diff = _differences(rules)
        text = ", ".join(f"{k}={v!r}" for k, v in diff.items()) or "the default (docs/RULES.md)"
        _say(f"  {name:<24} {text}")
    return 0


# =========================================================================== forwarded scripts
@contextlib.contextmanager
def _prog_name(name: str) -> Iterator[None]:
    """Scripts whose argparse uses ``sys.argv[0]`` as prog show ``hgin <cmd>`` in their help."""
    saved = sys.argv[0] if sys.argv else ""
    if sys.argv:
        sys.argv[0] = name
    else:
        sys.argv.append(name)
    try:
        yield
    finally:
        sys.argv[0] = saved


def forward(command: str, argv: Sequence[str]) -> int:
    """Run ``hgin <command> ARGS`` as ``<module>.main(ARGS)``; returns an exit code."""
    module_name = FORWARDED[command][0]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        parts = module_name.split(".")
        own = {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
        if exc.name in own:
            raise CliError(f"'hgin {command}' needs the module {module_name}, which is not available in "
                           f"this installation (run it from a checkout of the project)") from None
        raise CliError(f"'hgin {command}' cannot start: missing package {exc.name!r} "
                       "(install the training extras: pip install 'hgin_env[train]')") from None
    main_fn = getattr(module, "main", None)
    if main_fn is None:
        raise CliError(f"{module_name} has no main(argv) entry point")
    with _prog_name(f"hgin {command}"):
        result = main_fn(list(argv))
    return result if isinstance(result, int) else 0


# =========================================================================== parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hgin",
        description="Hollywood Gin (gin rummy with three-column Hollywood scoring): play against an "
                    "agent in the terminal, replay saved matches, run tournaments, training and "
                    "benchmarks.",
        epilog="Examples:\n"
               "  hgin play --opponent expert --seed 7 --save match.json\n"
               "  hgin play --resume match.json\n"
               "  hgin replay match.json --moves\n"
               "  hgin rules\n"
               "  hgin tournament --agents expert simple random --matches 200 --workers 2\n"
               "  hgin train --help\n"
               "Run 'hgin COMMAND --help' for the options of a command.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "play", help="play a match against an agent in the terminal",
        description="Play a whole Hollywood Gin match against an agent. On each turn the table shows "
                    "your hand grouped into melds with its deadwood, the discard top, the stock, the "
                    "cards the opponent picked up, the three-column scoreboard and your legal moves. "
                    "Type moves as: draw, take, pass, 7H (discard 7H), knock 7H, big gin; also help, "
                    "show, quit. End of input (Ctrl-D) also ends the match.")
    p.add_argument("--opponent", default=None, metavar="AGENT",
                   help="random, simple, expert (default), ppo (the shipped policy), or the PATH of a "
                        "PPO checkpoint .zip (also ppo:PATH); with --resume, the saved opponent")
    p.add_argument("--seed", type=int, default=None,
                   help="match seed: the same seed deals the same cards (default: a random seed, printed)")
    p.add_argument("--rules", default=None, choices=sorted(PROFILES), metavar="PROFILE",
                   help="rules profile (default: hollywood); one of: " + ", ".join(sorted(PROFILES)))
    p.add_argument("--seat", default=None, choices=("0", "1", "2", "3", "random"),
                   help="your seat: 0 (player_0, default), 1, or random (drawn from the seed); "
                        "2 in three-hand, 2 and 3 in a partnership (--rules hollywood_three_hand, "
                        "hollywood_partnership, gin_three_hand, gin_partnership)")
    p.add_argument("--save", metavar="FILE", default=None,
                   help="save the match (also an unfinished one) as JSON when it ends, for 'hgin replay' "
                        "and 'hgin play --resume'")
    p.add_argument("--resume", metavar="FILE", default=None,
                   help="play on from an unfinished match saved with --save (its seed, rules, seat and "
                        "opponent); saves back to FILE unless --save says otherwise")
    p.add_argument("--ascii", action="store_true", help="suit letters C D H S instead of ♣ ♦ ♥ ♠")
    p.set_defaults(func=cmd_play)

    p = sub.add_parser(
        "replay", help="replay a saved match hand by hand",
        description="Replay a match saved by 'hgin play --save' (or save_match): each hand's melds, "
                    "lay-offs and points, the scoreboard after each hand and the winner. A corrupt "
                    "file or one saved under another rules version is refused (exit code 2).")
    p.add_argument("file", help="saved match (JSON, format hgin-match)")
    p.add_argument("--moves", action="store_true", help="also show the deal and every move")
    p.add_argument("--ascii", action="store_true", help="suit letters C D H S instead of ♣ ♦ ♥ ♠")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("rules", help="list the rules profiles and their options",
                       description="List the rules profiles (how each differs from the default), or "
                                   "every option of one profile.")
    p.add_argument("profile", nargs="?", choices=sorted(PROFILES), metavar="PROFILE",
                   help="show every option of this profile")
    p.set_defaults(func=cmd_rules)

    from hgin_web.cli import add_parser as add_web_parser  # hgin web: the web table

    add_web_parser(sub)
    for name, (module, what) in FORWARDED.items():
        p = sub.add_parser(name, add_help=False, help=f"{what} (python -m {module}; "
                                                      f"'hgin {name} --help' for its options)",
                           description=f"Forwards every argument to python -m {module}.")
        p.add_argument("args", nargs=argparse.REMAINDER, help=f"arguments of {module}")
        p.set_defaults(func=None, forward=name)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``hgin`` console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in FORWARDED:  # forwarded as is, so '--help' reaches the script
            return forward(argv[0], argv[1:])
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help()
            return 0
        return int(args.func(args))
    except CliError as exc:
        print("hgin: error: " + " ".join(str(exc).split()), file=sys.stderr)  # always one line
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
