"""The table drawn for people: :mod:`hgin_env.render.text` (the ``ansi``/``human`` modes, the
CLI, notebook HTML) and :mod:`hgin_env.render.image` (``rgb_array``, GIFs).

The engine draws nothing: importing this package installs the notebook display of
``Game`` (its ``_repr_html_`` hook, :func:`hgin_env.render.text.game_html`); importing
``hgin_env`` does so.
"""

from .text import (
    deal_text,
    game_html,
    grouped_hand,
    grouped_hand_html,
    hand_groups,
    hand_order,
    render_hand_result,
    render_seat_table,
    render_table,
    turn_text,
)

__all__ = ["deal_text", "game_html", "grouped_hand", "grouped_hand_html", "hand_groups", "hand_order",
           "render_hand_result", "render_seat_table", "render_table", "turn_text"]
