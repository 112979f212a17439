"""`python -m copilot_nb acp` (or `serve`): the `copilot-nb` command without its script."""

from __future__ import annotations

import sys

from .serve.cli import main

if __name__ == "__main__":  # importing the module (to list them all) runs nothing
    sys.exit(main())
