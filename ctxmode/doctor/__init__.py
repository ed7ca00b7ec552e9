"""``ctxmode doctor``'s checks: plain functions that look, never change, and explain.

Each check takes a :class:`Context` and returns :class:`Check` records (``ok``/``warn``/
``fail``, a one-line summary, a one-line fix, optional detail lines); ``ctxmode.cli.doctor``
only formats them. The inputs (environment, project, clock, the settings files'
locations) are parameters, so the tests run every check against a temp HOME and a temp
data root.

:data:`CHECKS` is the registry, in display order, one module per group:

- ``environment``: the interpreter and packages; SQLite and FTS5;
- ``data_root``: the data root and its permissions;
- ``configuration``: the configuration files;
- ``registration`` (over ``settings_files``, ``hook_commands``, ``switches``): which
  Claude Code settings files register which ctxmode hooks (stale paths, duplicates,
  missing events, the SessionStart ``compact`` matcher, the plugin enabled as well, other
  memory tools on the same events), and what switches them off;
- ``codex``: the Codex CLI's hooks.json and the trust entries without which Codex skips
  the hooks (nothing when Codex is not set up);
- ``gemini``: the Gemini CLI's settings.json (events, exact-string matchers, millisecond
  timeouts) and, for a project's, the folder trust it needs (nothing when not set up);
- ``project_store``: the project's store;
- ``hook_log``: recent errors in the hook log;
- ``transcripts``: the client's transcripts of this project not imported yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ctxmode.doctor.configuration import check_config
from ctxmode.doctor.core import FAIL, OK, STATUSES, WARN, Check, Context, age
from ctxmode.doctor.data_root import ROOT_SOURCES, check_data_root, store_files, unsafe_paths
from ctxmode.doctor.environment import (
    MIN_PYTHON,
    TRIGRAM_SQLITE,
    check_package,
    check_python,
    check_sqlite,
    fts5_status,
)
from ctxmode.doctor.hook_log import LOG_FRESH_SECONDS, LOG_WINDOW_SECONDS, check_log
from ctxmode.doctor.project_store import STALE_COMPACT_SECONDS, check_store
from ctxmode.doctor.transcripts import check_transcripts
from ctxmode.hosts.claude_code.doctor import (
    CORE_EVENTS,
    OTHER_MEMORY_MARKERS,
    SESSION_START_SOURCES,
    check_hooks,
    hook_checks,
    other_tool_checks,
)
from ctxmode.hosts.claude_code.hook_commands import (
    command_paths,
    launcher_path,
    launcher_problem,
    matcher_matches,
    stale_paths,
)
from ctxmode.hosts.claude_code.settings_files import (
    SettingsFile,
    read_settings,
    settings_paths,
    user_settings_path,
)
from ctxmode.hosts.claude_code.switches import switch_checks
from ctxmode.hosts.codex.doctor import check_codex
from ctxmode.hosts.gemini.doctor import check_gemini
from ctxmode.sizes import file_size, human_size

CHECKS: tuple[Callable[[Context], list[Check]], ...] = (
    check_python,
    check_package,
    check_sqlite,
    check_data_root,
    check_config,
    check_hooks,
    check_codex,
    check_gemini,
    check_store,
    check_log,
    check_transcripts,
)


def run_all(ctx: Context) -> list[Check]:
    """Every check, in display order."""
    checks: list[Check] = []
    for step in CHECKS:
        checks.extend(step(ctx))
    return checks


def exit_code(checks: Iterable[Check]) -> int:
    return 1 if any(check.status == FAIL for check in checks) else 0


__all__ = [
    "CHECKS",
    "CORE_EVENTS",
    "FAIL",
    "LOG_FRESH_SECONDS",
    "LOG_WINDOW_SECONDS",
    "MIN_PYTHON",
    "OK",
    "OTHER_MEMORY_MARKERS",
    "ROOT_SOURCES",
    "SESSION_START_SOURCES",
    "STALE_COMPACT_SECONDS",
    "STATUSES",
    "TRIGRAM_SQLITE",
    "WARN",
    "Check",
    "Context",
    "SettingsFile",
    "age",
    "check_codex",
    "check_config",
    "check_data_root",
    "check_gemini",
    "check_hooks",
    "check_log",
    "check_package",
    "check_python",
    "check_sqlite",
    "check_store",
    "check_transcripts",
    "command_paths",
    "exit_code",
    "file_size",
    "fts5_status",
    "hook_checks",
    "human_size",
    "launcher_path",
    "launcher_problem",
    "matcher_matches",
    "other_tool_checks",
    "read_settings",
    "run_all",
    "settings_paths",
    "stale_paths",
    "store_files",
    "switch_checks",
    "unsafe_paths",
    "user_settings_path",
]
