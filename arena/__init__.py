"""Playing agents against each other: specs, matches, duplicate pairs, intervals, ratings
and the evaluation of a policy. The library below ``train`` and the ``eval`` scripts
(see :mod:`arena.matches`)."""
