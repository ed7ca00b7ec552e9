"""The suite's own guard: a test that waits for ever fails, and the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BLOCKED = """
import os

def test_waits_for_a_byte_that_never_comes():
    read_fd, write_fd = os.pipe()
    os.read(read_fd, 1)

def test_after_it():
    pass
"""


def test_a_test_blocked_for_ever_fails_and_the_run_goes_on(tmp_path: Path) -> None:
    probe = tmp_path / "test_probe.py"
    probe.write_text(BLOCKED)
    # The suite's conftest loaded as a plugin (from the repository, the working folder).
    argv = [sys.executable, "-m", "pytest", str(probe), "-q", "-p", "tests.conftest"]
    result = subprocess.run(
        [*argv, "-p", "no:cacheprovider", "--rootdir", str(tmp_path)],
        cwd=REPO,
        env={**os.environ, "CTXMODE_TEST_HANG_LIMIT": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1, result.stdout
    assert "TestHung: still running after 1 s" in result.stdout
    assert "os.read(read_fd, 1)" in result.stdout  # the traceback shows the wait
    assert "1 failed, 1 passed" in result.stdout


def test_no_test_sees_the_users_pointer_home_or_settings() -> None:
    """The suite runs with a HOME of its own (conftest): after ``./install.sh`` the user's
    per-user pointer, data root and Claude Code settings are out of every test's reach."""
    import pwd

    from ctxmode import paths

    real = pwd.getpwuid(os.getuid()).pw_dir
    env = {k: v for k, v in os.environ.items() if k != "CTXMODE_HOME"}
    assert os.path.realpath(os.environ["HOME"]) != os.path.realpath(real)
    assert paths.pointer_dir(env) != paths.pointer_dir({"HOME": real})
    assert paths.resolve_root(env)[1] != paths.ROOT_FROM_POINTER
    assert not os.path.expanduser("~/.claude").startswith(os.path.join(real, ".claude"))
