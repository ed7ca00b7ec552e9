"""The clients' own history of this project that ``ctxmode import`` has not read (all) of.

For every host with a ``history`` part (``ctxmode.importer.readers``). Cheap on purpose:
the host lists only the files that could be this project's (Claude Code: the transcript
folders whose lossy name fits), a file's project is confirmed from the cwd its first
records name, and its size is compared with the offset ``import_progress`` holds. A
session the store does not know at all (no hook saw it, nothing imported) is the history
that is lost when the client deletes the transcript (``cleanupPeriodDays``): that warns.
"""

from __future__ import annotations

import os

from ctxmode.doctor.core import OK, WARN, Check, Context
from ctxmode.wording import plural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType


def check_transcripts(ctx: Context) -> list[Check]:
    from ctxmode import importer

    mine = []
    folders = []
    for reader in importer.readers().values():
        folder = reader.folder(ctx.env)
        folders.append(_home_short(folder, ctx.env.get("HOME", "")))
        for path in reader.project_files(folder, ctx.project_dir):
            cwd, session_id = reader.head_cwd(path)
            if cwd and importer.locate(cwd, ctx.env)[1] == ctx.store_path:
                mine.append((path, session_id, reader))
    if not mine:
        shown = ", ".join(folders)
        return [Check("import", "transcripts", OK, f"no transcripts of this project in {shown}")]
    done, known = _read_store(ctx.store_path)
    behind = [
        (p, sid) for p, sid, reader in mine if done.get(os.path.abspath(p), -1) < _size(reader, p)
    ]
    unknown = [sid for _, sid in behind if sid and sid not in known]
    if not behind:
        return [
            Check(
                "import",
                "transcripts",
                OK,
                f"all {plural(len(mine), 'transcript')} of this project imported",
            )
        ]
    summary = f"{plural(len(behind), 'transcript')} of this project not imported (ctxmode import)"
    if not unknown:
        return [Check("import", "transcripts", OK, summary + "; their sessions are in the store")]
    return [
        Check(
            "import",
            "transcripts",
            WARN,
            f"{summary}; {plural(len(unknown), 'session')} of them not in the store at all",
            "run `ctxmode import` before the client deletes old transcripts "
            "(cleanupPeriodDays, 30 days by default)",
        )
    ]


def _home_short(path: str, home: str) -> str:
    if home and (path + os.sep).startswith(home.rstrip(os.sep) + os.sep):
        return "~" + path[len(home.rstrip(os.sep)) :]
    return path


def _size(reader: ModuleType, path: str) -> int:
    """The history file's size (the reader's own ``stat`` for a virtual one: OpenCode)."""
    from ctxmode import importer

    try:
        return importer.stat(reader, path)[0]
    except OSError:
        return 0


def _read_store(path: str) -> tuple[dict[str, int], set[str]]:
    """``({path: offset imported}, {session ids known})`` of the store (empty without one)."""
    if not os.path.exists(path):
        return {}, set()
    from ctxmode.store import Store, StoreError
    from ctxmode.store import imports as store_imports

    try:
        store = Store.open(path, readonly=True)
    except StoreError:
        return {}, set()
    try:
        known = {str(row["session_id"]) for row in store.sessions()}
        return store_imports.offsets(store), known
    except StoreError:
        return {}, set()
    finally:
        store.close()
