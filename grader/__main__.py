"""`python -m grader`: see grader/cli.py."""

import atexit
import os
import sys

from .cli import main

code = main()
# Leave without the interpreter's teardown of torch's modules (~0.4 s of a 4 s run): the exit handlers
# (the warm sandbox server's recycling among them) run, the output is flushed, then the process ends.
atexit._run_exitfuncs()
sys.stdout.flush()
sys.stderr.flush()
os._exit(int(code or 0))
