"""THE observation: what a player sees, as one flat float32 vector with named slices, and the
dict every agent gets. One package, one job per module:

- :mod:`~hgin_env.observation.layout`: the layout (named slices, scales, versions,
  :class:`ObservationLayout`), the only place that knows offsets and scales;
- :mod:`~hgin_env.observation.encoders`: a ``Hand`` player's vector, on either engine
  (the Python reference or the compiled path, passed in as ``engine``);
- :mod:`~hgin_env.observation.context`: the match-context rows (the sheet slices and a
  format's slices), for one seat or k at once (the batched engine);
- :mod:`~hgin_env.observation.cache`: what the observer keeps per state (the engine keeps none);
- :mod:`~hgin_env.observation.observer`: :func:`observe` (THE observation dict) and
  :func:`encode_seat` (a seat of any format);
- :mod:`~hgin_env.observation.decoding`: a vector read back (:func:`decode`).

``from hgin_env.observation import observe, ObservationLayout`` is the public path; the
names below are the package's API.
"""

from .cache import CONTEXT_CACHE, StateCache
from .context import format_context_rows, scoreboard_context, sheet_arrays, sheet_context, sheet_context_rows
from .decoding import decode, hand_from_observation
from .encoders import DEFAULT_ENGINE, encode, encoder, mask_bits, take_deadwood
from .layout import (
    COLUMN_CLIP,
    COUNT_CLIP,
    COUNT_SCALE,
    DEADWOOD_FRACTIONS,
    DEADWOOD_SCALE,
    FORMAT_OBSERVATION_VERSION,
    KNOCK_LIMIT_SCALE,
    LAYOUT_FORMATS,
    OBSERVATION_VERSION,
    PHASES,
    POINTS_SCALE,
    SCALES,
    STOCK_SCALE,
    TARGET_SCALED,
    WINS_CLIP,
    WINS_SCALE,
    ObservationLayout,
    context_start,
    observation_bounds,
)
from .observer import encode_seat, observation_dict, observe

__all__ = [
    "CONTEXT_CACHE", "COLUMN_CLIP", "COUNT_CLIP", "COUNT_SCALE", "DEADWOOD_FRACTIONS", "DEADWOOD_SCALE",
    "DEFAULT_ENGINE", "FORMAT_OBSERVATION_VERSION", "KNOCK_LIMIT_SCALE", "LAYOUT_FORMATS", "OBSERVATION_VERSION",
    "PHASES", "POINTS_SCALE", "SCALES", "STOCK_SCALE", "TARGET_SCALED", "WINS_CLIP", "WINS_SCALE",
    "ObservationLayout", "StateCache", "context_start", "decode", "encode", "encode_seat", "encoder",
    "format_context_rows", "hand_from_observation", "mask_bits", "observation_bounds", "observation_dict", "observe",
    "scoreboard_context", "sheet_arrays", "sheet_context", "sheet_context_rows", "take_deadwood",
]
