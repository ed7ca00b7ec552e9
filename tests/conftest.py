"""Shared test set-up: no test may touch the real home or the real data root."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.helpers import make_project
from tests.hooktools import FIXTURES

# Property tests: the same examples on every CI run (a failure there is reproducible and
# never a matter of luck), new ones on every local run (the search goes on). Example
# counts stay those each test asks for; no deadline (a loaded machine is not a bug).
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile(
    os.environ.get("CTXMODE_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)

REPO = Path(__file__).resolve().parents[1]

# A test blocked for ever (a wait for a signal that never comes) would hold CI until its
# own time-out, with nothing in the log to say where. After this long it fails instead,
# with the traceback of the wait, and the suite goes on. It bounds a hang; it is never
# used to wait for anything (the slowest test takes well under a minute). The `-m slow`
# soaks are left without it; CTXMODE_TEST_HANG_LIMIT=seconds sets it (0: no limit).
HANG_LIMIT = float(os.environ.get("CTXMODE_TEST_HANG_LIMIT") or 600)


class TestHung(Exception):
    """A test ran past HANG_LIMIT: most likely a wait for something that never happens."""


@pytest.fixture(autouse=True)
def _hang_limit(request: pytest.FixtureRequest) -> Iterator[None]:
    if (
        HANG_LIMIT <= 0
        or request.node.get_closest_marker("slow") is not None  # soaks run as long as asked
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TestHung(f"still running after {HANG_LIMIT:.0f} s (CTXMODE_TEST_HANG_LIMIT)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, HANG_LIMIT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(autouse=True)
def _isolated_data_root(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """Every test gets its own CTXMODE_HOME, CODEX_HOME, GEMINI_CLI_HOME and HOME;
    Claude Code's own variables are removed.

    HOME too: the user's per-user pointer (``~/.local/share/ctxmode/ctxmode-data-root``,
    written by ``install.sh``; paths.resolve_root), Claude Code's settings and the
    platform's XDG folders all hang off it, and no test may read or write the user's
    (tests/test_suite_guards.py checks it). The XDG data and config overrides go; the
    cache stays the user's (the e2e suites keep their npm packages there: no data, no
    settings)."""
    real_home = os.path.expanduser("~")
    if not os.environ.get("XDG_CACHE_HOME"):
        monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(real_home, ".cache"))
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path_factory.mktemp("ctxmode-home")
    monkeypatch.setenv("CTXMODE_HOME", str(home))
    # Nor the user's Codex folder (doctor and install --host codex read it).
    monkeypatch.setenv("CODEX_HOME", str(tmp_path_factory.mktemp("codex-home")))
    # Nor the user's ~/.gemini (GEMINI_CLI_HOME is the home Gemini CLI and ctxmode take
    # .gemini from).
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path_factory.mktemp("gemini-home")))
    # Nor the user's ~/.copilot (COPILOT_HOME moves Copilot CLI's folder).
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path_factory.mktemp("copilot-home")))
    # Nor the user's ~/.qwen: QWEN_HOME would name another folder than HOME's.
    monkeypatch.delenv("QWEN_HOME", raising=False)
    for name in list(os.environ):
        if name.startswith(("CLAUDE_", "CLAUDECODE")) or name == "CTXMODE_DISABLE":
            monkeypatch.delenv(name, raising=False)
    return home


@pytest.fixture
def data_root() -> Path:
    return Path(os.environ["CTXMODE_HOME"])


@pytest.fixture
def fixtures_dir() -> Path:
    """The recorded payloads of the pinned Claude Code version (tests/fixtures/...)."""
    return FIXTURES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Long soak and fuzz runs (``@pytest.mark.slow``) run only when ``-m`` names them."""
    if "slow" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow (or scripts/soak.sh)")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project: ``tmp_path/proj`` with a ``.git`` folder (a repository's root)."""
    return make_project(tmp_path)
