"""The ``voxcap`` console script's entry point (pyproject); the commands are in ``voxcap.commands``."""

import sys

from .commands import main

if __name__ == "__main__":
    sys.exit(main())
