"""Claude Code Stop hook: record the turn's reply in ctxmode's store (see ctxmode.hookrun)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
from ctxmode.hookrun import main

main("Stop")
