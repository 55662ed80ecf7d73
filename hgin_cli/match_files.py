"""Saved duels moved to :mod:`arena.records` (one format for the CLI and the web table);
this path re-exports them for one release."""

from arena.records import MATCH_FORMAT, MatchFileError, load_match, save_match  # noqa: F401  (old import path)
