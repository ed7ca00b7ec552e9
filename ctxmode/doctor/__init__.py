"""``ctxmode doctor``'s checks: plain functions that look, never change, and explain.

Each check takes a :class:`Context` and returns :class:`Check` records (``ok``/``warn``/
``fail``, a one-line summary, a one-line fix, optional detail lines); ``ctxmode.cli.doctor``
only formats them. The inputs (environment, project, clock, the settings files'
locations) are parameters, so the tests run every check against a temp HOME and a temp
data root.

:func:`checks` is the registry, in display order, one module per group:

- ``environment``: the interpreter and packages; SQLite and FTS5;
- ``data_root``: the data root and its permissions;
- ``configuration``: the configuration files;
- each host's own checks, in the order of ``ctxmode.hosts.NAMES``: ``checks`` of
  ``ctxmode/hosts/<name>/doctor.py`` (Claude Code: which settings files register which
  hooks, what switches them off; Codex: hooks.json and the trust entries; Gemini:
  settings.json and the folder trust; a host not set up reports nothing);
- ``project_store``: the project's store;
- ``hook_log``: recent errors in the hook log;
- ``transcripts``: the clients' own history of this project not imported yet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ctxmode import hosts
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
from ctxmode.sizes import file_size, human_size


def _host_checks(name: str) -> Callable[[Context], list[Check]]:
    """The checks of one host, its doctor module imported when they run."""

    def run(ctx: Context) -> list[Check]:
        found: list[Check] = hosts.part(name, "doctor").checks(ctx)
        return found

    run.__name__ = f"check_{name}"
    return run


# The checks around the hosts' own, in display order.
BEFORE_HOSTS: tuple[Callable[[Context], list[Check]], ...] = (
    check_python,
    check_package,
    check_sqlite,
    check_data_root,
    check_config,
)
AFTER_HOSTS: tuple[Callable[[Context], list[Check]], ...] = (
    check_store,
    check_log,
    check_transcripts,
)


def checks() -> tuple[Callable[[Context], list[Check]], ...]:
    """Every check, in display order: the hosts' own, in registry order, in the middle."""
    return (*BEFORE_HOSTS, *(_host_checks(name) for name in hosts.NAMES), *AFTER_HOSTS)


def run_all(ctx: Context) -> list[Check]:
    """Every check, in display order."""
    found: list[Check] = []
    for step in checks():
        found.extend(step(ctx))
    return found


def exit_code(checks: Iterable[Check]) -> int:
    return 1 if any(check.status == FAIL for check in checks) else 0


__all__ = [
    "AFTER_HOSTS",
    "BEFORE_HOSTS",
    "FAIL",
    "LOG_FRESH_SECONDS",
    "LOG_WINDOW_SECONDS",
    "MIN_PYTHON",
    "OK",
    "ROOT_SOURCES",
    "STALE_COMPACT_SECONDS",
    "STATUSES",
    "TRIGRAM_SQLITE",
    "WARN",
    "Check",
    "Context",
    "age",
    "check_config",
    "check_data_root",
    "check_log",
    "check_package",
    "check_python",
    "check_sqlite",
    "check_store",
    "check_transcripts",
    "checks",
    "exit_code",
    "file_size",
    "fts5_status",
    "human_size",
    "run_all",
    "store_files",
    "unsafe_paths",
]
