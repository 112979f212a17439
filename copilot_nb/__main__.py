"""`python -m copilot_nb acp` (or `serve`): the `copilot-nb` command without its script."""

from __future__ import annotations

import sys

from .serve.cli import main

sys.exit(main())
