"""Compaction loops: the same snapshot is handed over at most twice, then a pointer (pure).

A session can compact again and again with nothing recorded in between (an auto-compaction
that leaves the context nearly as full as before fires the next one). Giving back the same
full snapshot each time would feed the loop: ~4 KB more per round, for facts the model
already received. The policy:

- The *state* of a snapshot is its text without the compaction's number (``compaction="N"``
  on the root): the same events give the same text, and any new event changes it (the
  root counts the events and names the newest one's time).
- The session's earlier compaction snapshots are walked newest first, pointers skipped:
  while they have the state of the new one, each that was *handed over* (claimed by a
  session, not retired unread nor still waiting) counts once.
- Counted :data:`FULL_DELIVERIES` (2) times already: the new snapshot is replaced by a
  one-line pointer, ``<session_resume session=".." unchanged_since="K">…</session_resume>``,
  K being the first compaction of that state; it names the search command of the full
  snapshot (its ``<search>``) and the session, so the facts stay one command away. The pointer is the same bytes on
  every repeat (it carries no compaction number), so nothing grows while nothing happens.
- One new event makes a new state: the next compaction gets the full snapshot again.
"""

from __future__ import annotations

from ctxmode import hashing

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

# How many times a session receives the full snapshot of one state before the pointer.
FULL_DELIVERIES = 2
POINTER_ATTR = "unchanged_since"
_SEQ_ATTR = ' compaction="'
_ROOT = "<session_resume"


def _root(xml: str) -> str:
    end = xml.find(">")
    return xml[: end + 1] if xml.startswith(_ROOT) and end > 0 else ""


def is_pointer(xml: str) -> bool:
    """Whether a stored compaction snapshot is a pointer (see :func:`pointer`)."""
    return f" {POINTER_ATTR}=" in _root(xml)


def pointer_since(xml: str) -> int | None:
    """The compaction a pointer refers to (its ``unchanged_since``), else None."""
    root = _root(xml)
    mark = f' {POINTER_ATTR}="'
    start = root.find(mark)
    if start < 0:
        return None
    value = root[start + len(mark) : root.find('"', start + len(mark))]
    return int(value) if value.isdecimal() else None


def state_of(xml: str) -> str:
    """A short hash of the snapshot's text without its compaction number."""
    root = _root(xml)
    start = root.find(_SEQ_ATTR)
    if start >= 0:
        end = root.find('"', start + len(_SEQ_ATTR))
        xml = xml[:start] + xml[end + 1 :]
    return hashing.sha256_hex(xml)[:16]


def repeats(history: Iterable[tuple[int, str, bool]], xml: str) -> int | None:
    """The compaction whose full snapshot ``xml`` repeats for the :data:`FULL_DELIVERIES`
    + 1-th time (the pointer's ``unchanged_since``), or None: give ``xml`` in full.

    ``history``: the session's earlier compaction snapshots, newest first, as
    ``(compact_seq, text, handed over)``.
    """
    state = state_of(xml)
    delivered = 0
    since: int | None = None
    for seq, text, handed in history:
        if is_pointer(text):
            continue
        if state_of(text) != state:
            break
        since = seq
        delivered += 1 if handed else 0
    return since if delivered >= FULL_DELIVERIES else None


def _search_command(xml: str) -> str:
    start = xml.find("<search>")
    end = xml.find("</search>", start)
    return xml[start + len("<search>") : end] if 0 <= start < end else ""


def pointer(xml: str, session_id: str, since: int, search_command: str) -> str:
    """The one-line pointer that stands for ``xml`` (the full snapshot of compaction
    ``since``'s state, already handed over :data:`FULL_DELIVERIES` times)."""
    from ctxmode.snapshot.render import esc, esc_attr, session_option

    command = _search_command(xml) or esc(search_command)
    scope = esc(session_option(session_id))
    return (
        f'<session_resume session="{esc_attr(session_id[:64])}" {POINTER_ATTR}="{since:d}">'
        f"Nothing new was recorded in this session since compaction {since:d}; its "
        f"snapshot was given in full {FULL_DELIVERIES} times and is not repeated. "
        f"Its facts can be looked up with: {command} {scope} and a few words"
        "</session_resume>\n"
    )
