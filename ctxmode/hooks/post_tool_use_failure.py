"""Claude Code PostToolUseFailure hook: record the call in ctxmode's store (see ctxmode.hookrun)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
from ctxmode import early_stop  # noqa: F401  (first: a stop during the imports below is kept)
from ctxmode.hookrun import main

main("PostToolUseFailure")
