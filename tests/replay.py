"""Replay a session's hook calls as a launcher other than the client would: each call a
fresh hook process, one after the other, the way given on the command line.

    python tests/replay.py CALLS.json MODE

``CALLS.json``: ``[[event, payload], …]`` (the last one's additionalContext is printed).
``MODE``: ``direct`` (hooks in this process's group), ``setsid`` (each hook a new session
and group), ``sh`` (through ``sh -c``, in this process's group), ``wait:FILE`` (direct,
but the first hook runs only once FILE exists: the replay starts, then waits on its
caller, as a slow host would). Run as a script (not imported by the suite).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.hooktools import hook_command  # noqa: E402


def main() -> None:
    calls = json.loads(Path(sys.argv[1]).read_text())
    mode = sys.argv[2]
    if mode.startswith("wait:"):
        # Blocks until the caller writes the file's other end (a FIFO): no sleep, no poll.
        with open(mode[5:], "rb") as gate:
            gate.read(1)
        mode = "direct"
    out = b""
    for event, payload in calls:
        argv = hook_command(event)
        if mode == "sh":
            argv = ["sh", "-c", shlex.join(argv)]
        done = subprocess.run(
            argv,
            input=json.dumps(payload).encode(),
            capture_output=True,
            start_new_session=mode == "setsid",
            check=True,
        )
        assert done.stderr == b"", done.stderr
        out = done.stdout
    text = json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""
    sys.stdout.write(text)


if __name__ == "__main__":
    os.umask(0o077)
    main()
