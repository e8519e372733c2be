"""``python -m schedopt``: the command line (see :mod:`schedopt.cli`)."""

import sys

from schedopt.cli import main

if __name__ == "__main__":
    sys.exit(main())
