"""``python -m hgin_cli`` runs the ``hgin`` command."""

import sys

from hgin_cli.cli import main

sys.exit(main())
