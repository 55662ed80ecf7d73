"""The web table: play any agent, watch agents play and replay matches in a browser.

``hgin web`` (:mod:`hgin_web.cli`) serves :func:`hgin_web.app.create_app`; the page is
plain HTML/CSS/JS in ``static/``. The server is a thin layer over the engine: one
:class:`hgin_env.match.Match` per game, the seat's observation for what its page shows,
the agents of :mod:`agents`, and the match files of :mod:`arena.records` (those of
``hgin play --save``). It never imports :mod:`hgin_cli` (the CLI imports it for ``hgin web``).
"""
