"""`python -m passhat` runs the CLI."""

import sys

from passhat.cli import main

sys.exit(main())
