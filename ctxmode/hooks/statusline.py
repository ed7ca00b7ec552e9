"""Claude Code statusLine command: print ctxmode's status line (see ctxmode.statusline)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
from ctxmode.statusline import main

main()
