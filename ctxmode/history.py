"""What a host's history reader hands ``ctxmode import``: the neutral records of a file.

A client keeps its own history of each session (Claude Code's transcripts, Codex's
rollouts, ...); the host's ``history`` module (``ctxmode/hosts/<name>/history.py``, see
``ctxmode.hosts.contract.History``) reads a window of such a file into a :class:`Chunk` of
:class:`Call` items (the neutral input of a hook that would have fired) and
:class:`Boundary` items (a compaction, with the client's summary), and ``ctxmode.importer``
stores them as the hooks would have. Plain records, no I/O.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ctxmode.payload import HookInput

# How far into a history file its first records are looked for (the cwd and session id
# that place the file in a project): a first prompt can hold a pasted image or document
# (a line of megabytes), and a file placed nowhere is not imported at all.
HEAD_LIMIT = 32 * 1024 * 1024


def head_records(path: str, markers: tuple[bytes, ...], limit: int = HEAD_LIMIT) -> Iterator[Any]:
    """The records of the JSONL file at ``path`` from its start, in order, parsed: those
    whose line holds one of ``markers`` (bytes the wanted records must contain), within
    the file's first ``limit`` bytes; lines that are no JSON left out. Nothing when the
    file cannot be read. Line by line, however long a line is."""
    import orjson

    try:
        with open(path, "rb") as fh:
            seen = 0
            for line in fh:
                if seen >= limit:
                    return
                seen += len(line)
                if not any(marker in line for marker in markers):
                    continue
                try:
                    record = orjson.loads(line)
                except ValueError:
                    continue
                yield record
    except OSError:
        return


# The event of a neutral input no hook ever gets: what one of the client's own commands
# printed for the person (``/cost``, a plugin's install), read from its history only
# (``tool_input.command``, ``tool_response.stdout``; extract.client).
CLIENT_OUTPUT_EVENT = "ClientOutput"


class Call:
    """A hook that would have fired: its neutral input and when (the record's timestamp)."""

    __slots__ = ("at", "inp")

    def __init__(self, inp: HookInput, at: str) -> None:
        self.inp = inp
        self.at = at


class Boundary:
    """A compaction of ``session_id``: its trigger, when, and the client's summary (or None)."""

    __slots__ = ("at", "session_id", "summary", "trigger")

    def __init__(self, session_id: str, trigger: str, at: str) -> None:
        self.session_id = session_id
        self.trigger = trigger
        self.at = at
        self.summary: str | None = None


class Chunk:
    """What a host's ``read`` made of a file from ``start`` on.

    ``offset``: where the next read starts — a line end, never past a ``tool_use`` whose
    result was not read yet (so a pair split across two runs is still paired), nor past a
    compaction whose summary may still come (nothing but bookkeeping read after it yet:
    the summary is the next user record). ``records``,
    ``skipped``, ``unknown`` count the lines before ``offset`` only; the lines after it
    are read again next time (and what they yield is deduplicated by the store).
    ``truncated``: an unfinished last line was left for later. ``boundaries_before``: the
    compactions before ``start``; ``boundaries``: those between ``start`` and ``offset``
    (the next read's ``boundaries_before`` is the sum). ``cwd``, ``branch``: the
    first the records name (what the hooks keep: a session's first call sets them);
    ``first_at``, ``last_at``: the earliest and latest record times.
    """

    __slots__ = (
        "boundaries",
        "boundaries_before",
        "branch",
        "cwd",
        "first_at",
        "items",
        "last_at",
        "offset",
        "records",
        "session_id",
        "skipped",
        "truncated",
        "unknown",
        "unknown_types",
    )

    def __init__(self, start: int) -> None:
        self.items: list[Call | Boundary] = []
        self.offset = start
        self.records = 0
        self.skipped = 0
        self.unknown = 0
        self.unknown_types: dict[str, int] = {}  # record type → lines (of ``unknown``)
        self.truncated = False
        self.session_id = ""
        self.cwd = ""
        self.branch = ""
        self.first_at = ""
        self.last_at = ""
        self.boundaries_before = 0
        self.boundaries = 0
