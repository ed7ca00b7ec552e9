"""How long the shell parser takes on huge and adversarial commands, run by hand.

    python3 benchmarks/shell_bench.py

tests/test_shell.py checks that each of these parses (bounded output); the time each
takes is a figure to read here, not a limit to assert in the suite (a loaded machine
would fail it). Each should stay well under a second.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ctxmode.extract.shell import parse

INPUTS = {
    "1M letters": "a" * 1_000_000,
    "20k cd &&": "cd a && " * 20_000,
    "40k $(": "$(" * 40_000,
    "60k backticks": "`" * 60_000,
    "40k quote pairs": "'\"" * 40_000,
    "10k operators": "&&||;;|&" * 10_000,
    "8k heredocs": "cat <<EOF " * 8_000 + "\n" + "x\n" * 20_000,
    "40k true;": "true;" * 40_000,
}


def main() -> None:
    for name, text in INPUTS.items():
        started = time.perf_counter()
        commands = parse(text)
        took = time.perf_counter() - started
        print(
            f"[shell] {name:16} {len(text):>9,} chars: {took * 1000:8.1f} ms, {len(commands)} commands"
        )


if __name__ == "__main__":
    main()
