"""Agent specs: one grammar and one registry for every caller (tournaments, training
opponents, the command line, the web table).

Why one place: tournaments run agents in worker processes, a training run names its
opponents in a flag, the web table names a seat's agent in a request; each must describe
an agent as a picklable text and build it where it runs, in its scalar form
(``agent(obs) -> action``) or its batched form (``agent.act(obs, masks) -> actions``).

The grammar::

    [LABEL=]KIND[:ARG]                 one agent: expert, ppo:runs/x/model.zip, search:rollouts=64,
                                       strong=expert (LABEL names a variant in tables)
    SPEC[:WEIGHT],SPEC[:WEIGHT],...    a mixture (training opponents): simple:0.5,expert:0.5,
                                       ppo:runs/x.zip:0.2 (a last part that reads as a number is
                                       the weight; the weight defaults to 1)
    KIND:KEY=VALUE;KEY=VALUE           options, where a kind takes them (search; ``,`` also works
                                       outside a mixture): values read as JSON when they parse

The registry: a kind registers its scalar form (:func:`register_agent` for a plain name,
:func:`register_agent_prefix` for ``KIND:ARG``) and, where it has one, its batched form
(:func:`register_batched`); a kind without a batched form plays row by row. Kinds that
need heavy imports (``ppo``, ``rllib``, ``openspiel``) register themselves when first named.
An unknown or malformed spec is refused with one ``ValueError`` naming it and the known kinds.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

#: name -> factory(seed=..., **kwargs).
_NAMES: dict[str, Callable[..., Any]] = {}
#: kind -> factory(arg, seed=..., **kwargs), for ``KIND:ARG``.
_PREFIXES: dict[str, Callable[..., Any]] = {}
#: kind -> factory(arg, seed=..., layout=...) -> a batched agent (arg "" for a plain name).
_BATCHED: dict[str, Callable[..., Any]] = {}
#: The wrapper that plays a scalar agent row by row over a batch (agents.batched.RowByRow).
_ROW_BY_ROW: list[Callable[[Any], Any]] = []
#: Modules that register a kind when imported (imported on first use: they are heavy).
LOADER_MODULES = {"ppo": "agents.ppo", "rllib": "agents.rllib_agent", "openspiel": "agents.openspiel"}


# --------------------------------------------------------------------------- the grammar
def split_label(text: str) -> tuple[str, str]:
    """``"strong=expert"`` -> ``("strong", "expert")``; a text without a label is its own
    label. A ``=`` after the kind's ``:`` belongs to the options (``search:rollouts=64``)."""
    label, sep, name = text.partition("=")
    if sep and ":" not in label:
        return label, name
    return text, text


def split_kind(name: str) -> tuple[str, str]:
    """``"ppo:runs/x.zip"`` -> ``("ppo", "runs/x.zip")``; ``"expert"`` -> ``("expert", "")``."""
    kind, _, arg = name.partition(":")
    return kind, arg


def split_weight(part: str) -> tuple[str, float]:
    """``"expert:0.3"`` -> ``("expert", 0.3)``; ``"ppo:PATH:0.2"`` -> ``("ppo:PATH", 0.2)``;
    a spec whose last part is no number weighs 1."""
    name, _, weight = part.rpartition(":")
    try:
        return (name, float(weight)) if name else (part, 1.0)
    except ValueError:
        return part, 1.0


def parse_mixture(text: str) -> tuple[list[str], list[float]]:
    """``"simple:0.5,expert:0.5"`` -> ``(["simple", "expert"], [0.5, 0.5])``."""
    pairs = [split_weight(part) for part in filter(None, (p.strip() for p in text.split(",")))]
    if not pairs:
        raise ValueError(f"no opponents in {text!r}")
    return [name for name, _ in pairs], [weight for _, weight in pairs]


def parse_options(arg: str, what: str) -> dict[str, Any]:
    """``"temperature=1,prior_k=2"`` (or ``;`` between them) -> ``{"temperature": 1, "prior_k": 2}``:
    values read as JSON when they parse (numbers, ``true``, ``null``), else as text."""
    options: dict[str, Any] = {}
    for item in filter(None, arg.replace(";", ",").split(",")):
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{what} spec {arg!r}: {item!r} is not key=value")
        try:
            options[key.strip()] = json.loads(text)
        except json.JSONDecodeError:
            options[key.strip()] = text
    return options


# --------------------------------------------------------------------------- the registry
def register_agent(name: str, factory: Callable[..., Any]) -> None:
    """Make ``make_agent(name)`` build agents with ``factory(seed=..., **kwargs)``."""
    _NAMES[name] = factory


def register_agent_prefix(kind: str, factory: Callable[..., Any]) -> None:
    """Make ``make_agent("KIND:ARG")`` call ``factory("ARG", seed=..., **kwargs)`` (the hook
    for trained-policy loaders: ``register_agent_prefix("ppo", load)``)."""
    _PREFIXES[kind] = factory


def register_batched(kind: str, factory: Callable[..., Any]) -> None:
    """Make ``make_batched_agent("KIND[:ARG]")`` call ``factory("ARG", seed=..., layout=...)``."""
    _BATCHED[kind] = factory


def register_row_by_row(wrap: Callable[[Any], Any]) -> None:
    """The wrapper that plays a scalar agent over a batch, row by row (set by agents.batched)."""
    _ROW_BY_ROW[:] = [wrap]


def known_agents() -> list[str]:
    """Registered names, and kinds that take an argument as ``"KIND:ARG"``."""
    return sorted(_NAMES) + sorted(f"{p}:ARG" for p in {*_PREFIXES, *LOADER_MODULES})


def _load_kind(kind: str) -> None:
    """Import the module of a heavy kind so that it registers itself (once)."""
    if kind in LOADER_MODULES and kind not in _PREFIXES:
        try:
            importlib.import_module(LOADER_MODULES[kind])
        except ImportError:
            pass


def unknown(name: str) -> ValueError:
    return ValueError(f"unknown agent {name!r}; known: {known_agents()}")


def make_agent(name: str, seed: int | None = None, **kwargs: Any) -> Any:
    """The scalar agent of ``name`` (``"random"``, ``"simple"``, ``"expert"``, ``"search"``,
    ``"KIND:ARG"``); unknown names raise ``ValueError`` listing the known ones."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"an agent spec is a non-empty text such as 'expert', got {name!r}")
    if name in _NAMES:
        return _NAMES[name](seed=seed, **kwargs)
    kind, arg = split_kind(name)
    if ":" in name:
        _load_kind(kind)
        if kind in _PREFIXES:
            return _PREFIXES[kind](arg, seed=seed, **kwargs)
    raise unknown(name)


def make_batched_agent(spec: str, seed: int | None = None, columns: int | None = None,
                       layout: Any = None) -> Any:
    """The batched agent of ``spec``: the kind's batched form where it registered one
    (``random``, ``simple``, ``expert``, ``ppo:PATH``, ``rllib:PATH``), else its scalar agent
    row by row. It reads ``layout`` (any format's; ``ObservationLayout.for_rules(rules)``),
    or the duel layout of ``columns`` (default 3); a checkpoint trained for another layout is
    refused."""
    from hgin_env.observation import ObservationLayout

    if layout is None:
        layout = ObservationLayout(3 if columns is None else columns)
    elif columns is not None and columns != layout.columns:
        raise ValueError(f"columns={columns} disagrees with the layout ({layout.columns} columns)")
    kind, arg = split_kind(spec)
    if ":" in spec:
        _load_kind(kind)
    if kind in _BATCHED and (":" in spec or spec in _NAMES):
        return _BATCHED[kind](arg, seed=seed, layout=layout)
    # The duel's scalar agents as before (columns); a format's read its layout.
    kwargs: dict = {"columns": layout.columns} if layout.format == "duel" else {"layout": layout}
    assert _ROW_BY_ROW, "agents.batched registers the row-by-row wrapper when the agents package loads"
    return _ROW_BY_ROW[0](make_agent(spec, seed=seed, **kwargs))
