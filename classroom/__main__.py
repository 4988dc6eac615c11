"""`python -m classroom ...`: see classroom/cli.py."""

import sys

from .cli import main

sys.exit(main())
