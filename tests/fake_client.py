"""A stand-in for a client process (Claude Code): it runs the hook calls it is sent, each
as the client runs a hook, and ends when its input ends, running no SessionEnd hook.

    python tests/fake_client.py

Each input line is ``[event, payload]`` (JSON); the hook runs through ``sh -c`` leading a
process group of its own (the client's ``spawn(…, {shell: true, detached: true})``), and
one line ``{"stdout": …, "stderr": …}`` answers it once the hook is done. Run as a script
by tests (tests/test_abrupt_end.py), not imported by the suite.
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
    for line in sys.stdin:
        event, payload = json.loads(line)
        done = subprocess.run(
            ["sh", "-c", shlex.join(hook_command(event))],
            input=json.dumps(payload).encode(),
            capture_output=True,
            start_new_session=True,
            check=False,
        )
        answer = {"stdout": done.stdout.decode(), "stderr": done.stderr.decode()}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    os.umask(0o077)
    main()
