"""Kept for its old name: the generated blocks now live in README.md and docs/.

python scripts/update_readme.py [--check]   # the same as scripts/update_docs.py
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

if __name__ == "__main__":
    sys.argv[0] = str(Path(__file__).with_name("update_docs.py"))
    runpy.run_path(sys.argv[0], run_name="__main__")
