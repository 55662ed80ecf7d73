"""The table drawn for people: :mod:`hgin_env.render.text` (the ``ansi``/``human`` modes, the
CLI, notebook HTML) and :mod:`hgin_env.render.image` (``rgb_array``, GIFs).

The engine draws nothing: importing this package installs the notebook display of a
``Match`` (its ``_repr_html_`` hook, :func:`hgin_env.render.text.match_html`); importing
``hgin_env`` does so.
"""

from ..match import Match
from .text import (
    deal_text,
    grouped_hand,
    grouped_hand_html,
    hand_groups,
    hand_order,
    match_html,
    render_hand_result,
    render_seat_table,
    render_table,
    turn_text,
)

__all__ = ["deal_text", "grouped_hand", "grouped_hand_html", "hand_groups", "hand_order", "match_html",
           "render_hand_result", "render_seat_table", "render_table", "turn_text"]

# The engine draws nothing: its notebook display is this package's.
Match._repr_html_ = match_html
