#!/usr/bin/env python3
"""Coverage-guided fuzzing of the hook entry point with atheris (libFuzzer for Python).

    pip install atheris
    python fuzz/fuzz_hooks.py -atheris_runs=100000
    python fuzz/fuzz_hooks.py fuzz/corpus -max_total_time=600   # keeps a corpus

Every input is turned into one hook call: its first bytes choose the event and, most of
the time, a real Claude Code payload to mutate (fuzz/payloads.py, the same
structure-aware mutations the hypothesis tests use); otherwise the bytes go to stdin as
they are. ``hookrun.run_hook`` runs in process with a private data root. The run fails
(and libFuzzer saves the input) when the output breaks the hook contract or when an
ERROR record reaches the log: run_hook swallows every exception by design, so an ERROR
is how an exception that escaped a module shows.

``scripts/soak.sh`` runs this for a while when atheris is installed.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile

import atheris

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

with atheris.instrument_imports(include=["ctxmode"]):
    # Everything a hook may import, up front: only modules imported here are instrumented.
    import ctxmode.config
    import ctxmode.extract
    import ctxmode.handlers
    import ctxmode.snapshot
    import ctxmode.spool
    import ctxmode.store  # noqa: F401
    from ctxmode import hookrun

from fuzz.payloads import BytesChooser, check_output, environment, hook_input, load_seeds

SEEDS = load_seeds()
ROOT = tempfile.mkdtemp(prefix="ctxmode-fuzz-")
ENV = environment(ROOT)
LOG = os.path.join(ROOT, "logs", "ctxmode.log")
_state = {"log_size": 0, "runs": 0}


def _new_errors() -> str:
    try:
        size = os.path.getsize(LOG)
    except OSError:
        return ""
    start = _state["log_size"] if size >= _state["log_size"] else 0  # rotated meanwhile
    with open(LOG, "rb") as handle:
        handle.seek(start)
        text = handle.read().decode("utf-8", "replace")
    _state["log_size"] = size
    return "\n".join(line for line in text.splitlines() if "\tERROR\t" in line)


def test_one_input(data: bytes) -> None:
    event, stdin = hook_input(BytesChooser(data), SEEDS)
    out = hookrun.run_hook(event, io.BytesIO(stdin), ENV)
    check_output(event, out)
    errors = _new_errors()
    if errors:
        raise AssertionError(f"{event}: an exception escaped into the log:\n{errors}")
    _state["runs"] += 1


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
