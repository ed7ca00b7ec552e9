"""Data root checks: where the root comes from, whether the hooks may use it (no links,
nothing of another user), whether it can be written, and that it stays private."""

from __future__ import annotations

import contextlib
import os
import shlex
import stat

from ctxmode import hooklog, paths
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.sizes import file_size, human_size
from ctxmode.wording import plural

ROOT_SOURCES = {
    paths.ROOT_FROM_ENV: "set by CTXMODE_HOME",
    paths.ROOT_FROM_INSTALL: "recorded by install.sh in the installed environment",
    paths.ROOT_FROM_POINTER: "named by the pointer install.sh left at {pointer}",
    paths.ROOT_FROM_DEFAULT: "the platform default",
}


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return None


def _private_problems(root: str) -> list[str]:
    """Folders not 0700 and files not 0600 among the data ctxmode writes."""
    problems = []
    for folder in (root, *(os.path.join(root, sub) for sub in ("sessions", "logs", "spool"))):
        mode = _mode(folder)
        if mode is None:
            continue
        if mode & 0o077:
            problems.append(f"{folder} is {mode:04o} (expected 0700)")
        if folder == root:
            continue
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            file_mode = _mode(path)
            if file_mode is None or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            if file_mode & 0o077:
                problems.append(f"{path} is {file_mode:04o} (expected 0600)")
    return problems


def store_files(root: str) -> list[str]:
    """Every store database under ``<root>/sessions`` (``*.db``), sorted."""
    folder = os.path.join(root, "sessions")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, name) for name in names if name.endswith(".db"))


def unsafe_paths(root: str) -> list[str]:
    """Why the hooks refuse to use this root: links and paths of another user.

    Loose modes are not listed here: the next hook tightens those (see
    :func:`paths.private_problem`); ``_private_problems`` reports them.
    """
    candidates = [
        root,
        *(os.path.join(root, sub) for sub in ("sessions", "spool", "logs")),
        os.path.join(root, "logs", hooklog.LOG_NAME),
    ]
    for sub in ("sessions", "spool"):
        folder = os.path.join(root, sub)
        with contextlib.suppress(OSError):
            if not os.path.islink(folder):
                candidates.extend(os.path.join(folder, name) for name in sorted(os.listdir(folder)))
    problems = []
    for path in candidates:
        problem = paths.private_problem(path, tighten=False)
        if problem and "open to others" not in problem:
            problems.append(problem)
    return problems


def check_data_root(ctx: Context) -> list[Check]:
    root, source = paths.resolve_root(ctx.env)
    pointer = os.path.join(paths.pointer_dir(ctx.env), paths.ROOT_MARKER)
    origin = ROOT_SOURCES[source].format(pointer=pointer)
    checks_first = [Check("data", "root from", OK, f"{root}: {origin}")]
    if source == paths.ROOT_FROM_ENV:
        # CTXMODE_HOME wins wherever it is set; a hook started without it (Claude Code
        # launched from elsewhere) falls back to the installed root.
        env = {k: v for k, v in ctx.env.items() if k != "CTXMODE_HOME"}
        fallback, fallback_source = paths.resolve_root(env)
        recorded = fallback_source in (paths.ROOT_FROM_INSTALL, paths.ROOT_FROM_POINTER)
        if recorded and os.path.normpath(fallback) != os.path.normpath(root):
            checks_first[0] = Check(
                "data",
                "root from",
                WARN,
                f"{root}: set by CTXMODE_HOME; processes without it use {fallback}",
                "set CTXMODE_HOME where Claude Code starts too, or re-run install.sh with it",
            )
    unsafe = unsafe_paths(root)
    if unsafe:
        return [
            *checks_first,
            Check(
                "data",
                "data root",
                FAIL,
                f"not used: the hooks record nothing while {unsafe[0]}",
                "make it a real folder of yours, e.g. set CTXMODE_HOME to the resolved path "
                "(realpath), or move the foreign or linked files away",
                tuple(unsafe),
            ),
        ]
    return checks_first + _check_data_root_folder(ctx, root)


def _check_data_root_folder(ctx: Context, root: str) -> list[Check]:
    if not os.path.exists(root):
        parent = os.path.dirname(root)
        while parent and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if parent and not os.access(parent, os.W_OK | os.X_OK):
            return [
                Check(
                    "data",
                    "data root",
                    FAIL,
                    f"{root} does not exist and {parent} is not writable: hooks cannot record",
                    f"create it: mkdir -p -m 700 {shlex.quote(root)}, or set CTXMODE_HOME",
                )
            ]
        return [
            Check(
                "data",
                "data root",
                OK,
                f"{root} does not exist yet; the first hook call creates it (0700)",
            )
        ]
    if not os.path.isdir(root):
        return [
            Check(
                "data",
                "data root",
                FAIL,
                f"{root} is not a directory",
                "move the file away, or set CTXMODE_HOME to a directory",
            )
        ]
    checks = []
    writable = all(
        os.access(folder, os.W_OK | os.X_OK)
        for folder in (root, os.path.join(root, "sessions"), os.path.join(root, "logs"))
        if os.path.isdir(folder)
    )
    stores = store_files(root)
    total = sum(file_size(path) for path in stores)
    summary = f"{root} ({len(stores)} store{'s' if len(stores) != 1 else ''}, {human_size(total)})"
    if not writable:
        checks.append(
            Check(
                "data",
                "data root",
                FAIL,
                f"{root} (or its sessions/logs folder) is not writable: hooks cannot record",
                f"chown -R $USER {shlex.quote(root)} && chmod -R u+rwX {shlex.quote(root)}",
            )
        )
    else:
        checks.append(Check("data", "data root", OK, summary))
    loose = _private_problems(root)
    if loose:
        checks.append(
            Check(
                "data",
                "permissions",
                WARN,
                f"{plural(len(loose), 'path')} readable by others: session records can hold code "
                "and prompts",
                f"chmod 700 on the folders and 600 on the files (e.g. chmod -R go-rwx "
                f"{shlex.quote(root)})",
                tuple(loose),
            )
        )
    else:
        checks.append(Check("data", "permissions", OK, "folders 0700, files 0600"))
    return checks
