"""Claude Code PostCompact hook: keep the compaction's summary (see ctxmode.hookrun)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
from ctxmode.hookrun import main

main("PostCompact")
