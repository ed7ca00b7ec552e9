"""Fixtures of the end-to-end suite: the real Claude Code CLI, ctxmode installed by install.sh
into a temporary HOME, a scripted mock of the Messages API, temporary git projects.

Nothing here touches the real home: HOME, CTXMODE_HOME and the client's config all live
under pytest's temporary directory. Only the npm package cache (see npm_cache.cache_root)
persists between runs, so the ~250 MB download happens once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e import claude_cli, codex_cli
from tests.e2e.claude_cli import ClaudeInstall, Unavailable
from tests.e2e.harness import CtxmodeInstall, Harness, install_ctxmode

# The install, or why there is none: Unavailable skips the suite, any other error fails it.
_claude: ClaudeInstall | Exception | None = None
_timings: list[tuple[str, float]] = []
_used = False  # whether any test asked for the CLI
_codex: codex_cli.CodexInstall | None = None  # the Codex CLI, once a test asked for it


def _get_claude() -> ClaudeInstall | Exception:
    """Install (or find in the cache) the CLI once per test session."""
    global _claude
    if _claude is None:
        try:
            _claude = claude_cli.ensure_claude()
        except Exception as exc:  # reported by the `claude` fixture, not as a crash here
            _claude = exc
    return _claude


def _describe(claude: ClaudeInstall | Exception) -> str:
    if isinstance(claude, Unavailable):
        return f"e2e: Claude Code unavailable, the e2e tests skip: {claude}"
    if isinstance(claude, Exception):
        return f"e2e: Claude Code could not be installed, the e2e tests fail: {claude}"
    return f"e2e: Claude Code {claude.version} ({claude.executable})"


def _is_e2e(item: pytest.Item) -> bool:
    return Path(__file__).parent in Path(str(item.fspath)).parents


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _is_e2e(item):
            item.add_marker(pytest.mark.e2e)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Name the client version up front, once e2e tests are known to be selected.

    (A ``pytest_report_header`` here would only run when tests/e2e is given on the command
    line: the default run loads this conftest after the header is printed.)
    """
    if not any(_is_e2e(item) for item in session.items):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    line = _describe(_get_claude())
    if reporter is not None:
        reporter.write_line(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _claude is None or not _used:
        return
    if isinstance(_claude, Exception):
        terminalreporter.write_line(_describe(_claude))
        return
    terminalreporter.write_line(f"e2e: ran against Claude Code {_claude.version}")
    if _codex is not None:
        terminalreporter.write_line(f"e2e: ran against Codex {_codex.version}")
    for name, seconds in _timings:
        terminalreporter.write_line(f"e2e: {seconds:6.1f}s  {name}")


@pytest.fixture(scope="session")
def claude() -> ClaudeInstall:
    global _used
    _used = True
    found = _get_claude()
    if isinstance(found, Unavailable):
        pytest.skip(f"Claude Code CLI unavailable: {found}")
    if isinstance(found, Exception):
        pytest.fail(f"Claude Code CLI could not be installed: {found!r}")
    return found


@pytest.fixture(autouse=True)
def _record_version(request: pytest.FixtureRequest, record_property: Any) -> Iterator[None]:
    """Time each scenario and put the client version into the JUnit report."""
    started = time.monotonic()
    yield
    if _codex is not None:
        record_property("codex_version", _codex.version)
    if isinstance(_claude, ClaudeInstall):
        record_property("claude_code_version", _claude.version)
        _timings.append((request.node.name, time.monotonic() - started))


@pytest.fixture(scope="session")
def codex() -> codex_cli.CodexInstall:
    """The Codex CLI (``CTXMODE_E2E_CODEX_VERSION``, else the pinned one), once per session."""
    global _codex
    try:
        _codex = codex_cli.ensure_codex()
    except Unavailable as exc:
        pytest.skip(f"Codex CLI unavailable: {exc}")
    return _codex


# -- ctxmode, installed the way a user installs it -------------------------------------------


@pytest.fixture(scope="session")
def ctxmode_installed(
    tmp_path_factory: pytest.TempPathFactory, claude: ClaudeInstall
) -> CtxmodeInstall:
    """``./install.sh`` into a temporary HOME, once per test session (it builds a venv),
    with the client on PATH as a user has it."""
    installed, seconds = install_ctxmode(
        tmp_path_factory.mktemp("e2e-install"), claude.executable.parent
    )
    _timings.append(("install.sh", seconds))
    return installed


@pytest.fixture
def e2e(
    claude: ClaudeInstall, ctxmode_installed: CtxmodeInstall, tmp_path: Path
) -> Iterator[Harness]:
    # Each scenario gets its own data root (stores and log); the venv and the hooks in
    # settings.json stay those install.sh made. The hooks find the data root through the
    # environment the client passes on, exactly as for a user who sets CTXMODE_HOME.
    data_root = tmp_path / "ctxmode-data"
    data_root.mkdir()
    harness = Harness(claude, ctxmode_installed, tmp_path, data_root)
    try:
        yield harness
    finally:
        if harness.api is not None:
            harness.api.stop()
