"""The batched engine: N matches as numpy arrays, stepped by one call, and the vector envs
on it.

- :mod:`hgin_env.batch.core`: :class:`BatchGame`, the N-match engine (proven equal to
  ``Game`` + ``Match`` step by step, ``tests/test_batch.py``, ``python -m eval.differential``);
- :mod:`hgin_env.batch.load`: rows set to given states of any format (a search's worlds);
- :mod:`hgin_env.batch.vector`: :class:`LearnerBatch` (one learner seat per match, batched
  opponents) and :class:`HollywoodVectorEnv`, its Gymnasium ``VectorEnv`` face.

``from hgin_env.batch import BatchGame`` is the public path.
"""

from .core import (
    HAND_KINDS,
    PRIVILEGED_SIZE,
    PRIVILEGED_SLICES,
    BatchGame,
    StepResult,
    cards_of_masks,
    privileged_size,
    privileged_slices,
)
from .load import MatchState, batch_of_matches, load_matches

__all__ = ["HAND_KINDS", "PRIVILEGED_SIZE", "PRIVILEGED_SLICES", "BatchGame", "StepResult", "cards_of_masks",
           "privileged_size", "privileged_slices", "MatchState", "batch_of_matches", "load_matches"]
