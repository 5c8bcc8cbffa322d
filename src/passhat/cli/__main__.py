"""`python -m passhat.cli` runs the CLI (as `passhat` and `python -m passhat` do)."""

import sys

from passhat.cli import main

sys.exit(main())
