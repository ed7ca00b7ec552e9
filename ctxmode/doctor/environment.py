"""Environment checks: the interpreter, the installed package and its hook scripts, and
whether this SQLite builds the trigram FTS5 index that search uses."""

from __future__ import annotations

import os
import sys

import ctxmode
from ctxmode import settings
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context

MIN_PYTHON = (3, 10)
# SQLite 3.34 brought FTS5's trigram tokenizer (the search index); older ones fall back
# to LIKE. WAL and everything else the store uses are much older.
TRIGRAM_SQLITE = (3, 34, 0)


def check_python(ctx: Context) -> list[Check]:
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        return [
            Check(
                "environment",
                "python",
                FAIL,
                f"Python {version} is too old (ctxmode needs 3.10 or newer)",
                "reinstall with a newer interpreter: CTXMODE_PYTHON=/path/to/python3.12 ./install.sh",
            )
        ]
    return [Check("environment", "python", OK, f"Python {version} at {ctx.python}")]


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def check_package(ctx: Context) -> list[Check]:
    deps = []
    missing = []
    for name in ("click", "orjson", "platformdirs"):
        found = _dist_version(name)
        if found is None:
            missing.append(name)
        else:
            deps.append(f"{name} {found}")
    summary = f"ctxmode {ctxmode.__version__} in {ctx.package_dir}"
    if deps:
        summary += f" ({', '.join(deps)})"
    hooks_dir = os.path.join(ctx.package_dir, "hooks")
    shims = [
        name + ".py"
        for name in settings.SHIMS.values()
        if not os.path.isfile(os.path.join(hooks_dir, name + ".py"))
    ]
    if shims:
        return [
            Check(
                "environment",
                "package",
                FAIL,
                f"hook scripts missing from {hooks_dir}: {', '.join(shims)}",
                "reinstall ctxmode: ./install.sh (or pip install --force-reinstall ctxmode)",
            )
        ]
    if missing:
        return [
            Check(
                "environment",
                "package",
                WARN,
                f"{summary}; not installed as a distribution: {', '.join(missing)}",
                "install ctxmode with pip or ./install.sh so its dependencies are pinned",
            )
        ]
    return [Check("environment", "package", OK, summary)]


def fts5_status() -> tuple[bool, str]:
    """Whether this SQLite builds the trigram FTS5 index, and why not if it cannot."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(data, tokenize='trigram')")
    except sqlite3.OperationalError as exc:
        return False, str(exc)
    finally:
        conn.close()
    return True, "trigram"


def check_sqlite(ctx: Context) -> list[Check]:
    import sqlite3

    version = sqlite3.sqlite_version
    available, why = fts5_status()
    if ctx.env.get("CTXMODE_NO_FTS", "") not in ("", "0"):
        return [
            Check(
                "environment",
                "sqlite",
                WARN,
                f"SQLite {version}; FTS5 turned off by CTXMODE_NO_FTS: new stores search with LIKE",
                "unset CTXMODE_NO_FTS (it exists for tests)",
            )
        ]
    if not available:
        return [
            Check(
                "environment",
                "sqlite",
                WARN,
                f"SQLite {version} without FTS5 trigram ({why}): search falls back to LIKE",
                "use a Python built against SQLite 3.34+ with FTS5 (python.org, uv, pyenv builds)",
            )
        ]
    return [Check("environment", "sqlite", OK, f"SQLite {version} with FTS5 (trigram)")]
