"""Data root checks: where the root comes from, whether the hooks may use it (no links,
nothing of another user), whether it can be made and written, that it stays private, and
the backups install keeps there of the user's files."""

from __future__ import annotations

import contextlib
import os
import shlex
import stat

from ctxmode import hooklog, paths, writable
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
    return checks_first + _check_data_root_folder(ctx, root, source) + backup_checks(ctx)


def _elsewhere(ctx: Context, source: str) -> str:
    """How to move the data root to a folder that works."""
    if source == paths.ROOT_FROM_ENV:
        env = {k: v for k, v in ctx.env.items() if k != "CTXMODE_HOME"}
        return (
            "point CTXMODE_HOME at a folder you can write (or unset it: then "
            f"{paths.data_root(env)})"
        )
    return "set CTXMODE_HOME to a folder you can write (where Claude Code starts too)"


def _probe(folder: str) -> str | None:
    """Make and remove a file in ``folder`` (a folder of ctxmode's own): why that fails."""
    probe = os.path.join(folder, f".doctor-probe-{os.getpid()}")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as exc:
        return f"no new file can be made in {folder} ({exc.strerror or exc})"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return None


def _check_data_root_folder(ctx: Context, root: str, source: str) -> list[Check]:
    if not os.path.exists(root):
        # Look, don't make: the nearest folder that exists must take a new one.
        why = writable.problem(root)
        if why:
            return [
                Check(
                    "data",
                    "data root",
                    FAIL,
                    f"{root} does not exist and cannot be made ({why}): hooks record nothing",
                    _elsewhere(ctx, source)
                    if "not writable" not in why
                    else f"create it: mkdir -p -m 700 {shlex.quote(root)}; or "
                    + _elsewhere(ctx, source),
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
    folders = [
        folder
        for folder in (root, os.path.join(root, "sessions"), os.path.join(root, "logs"))
        if os.path.isdir(folder)
    ]
    can_write = all(os.access(folder, os.W_OK | os.X_OK) for folder in folders)
    # os.access says yes to root everywhere: a file made and removed again in ctxmode's
    # own folders tells (a read-only mount, an immutable folder, a full inode table).
    refused = next((why for why in map(_probe, folders) if why), None) if can_write else None
    stores = store_files(root)
    total = sum(file_size(path) for path in stores)
    summary = f"{root} ({len(stores)} store{'s' if len(stores) != 1 else ''}, {human_size(total)})"
    if refused:
        checks.append(
            Check(
                "data",
                "data root",
                FAIL,
                f"{refused}: hooks cannot record",
                _elsewhere(ctx, source),
            )
        )
    elif not can_write:
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


def backup_checks(ctx: Context) -> list[Check]:
    """Where install keeps the user's files as they were before ctxmode changed them (the
    bytes before its entries came in, which uninstall restores; after an uninstall that
    could only cut them out, the bytes before it): said when there are any, so that one
    can be copied back by hand."""
    from ctxmode.config_files import Ledger, display_path

    kept = Ledger.load(ctx.env).backups()
    if not kept:
        return []
    folder = os.path.dirname(kept[0][1])
    return [
        Check(
            "data",
            "backups",
            OK,
            f"{plural(len(kept), 'file')} of yours as {'it was' if len(kept) == 1 else 'they were'} "
            f"before ctxmode last changed {'it' if len(kept) == 1 else 'them'}, kept in {folder}",
            details=tuple(f"{display_path(file)}: {backup}" for file, backup in kept),
        )
    ]
