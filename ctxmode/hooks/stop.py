"""The Stop hook: record the turn's reply in ctxmode's store (see ctxmode.hookrun).

Claude Code, Codex and Qwen Code call it Stop; the Gemini CLI's AfterAgent runs it too."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
from ctxmode.hookrun import main

main("Stop")
