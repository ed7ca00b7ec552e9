"""Words shared by every command's output: counts of things, and a snapshot's state.

One helper for "1 event" / "2 events", so that no output says "1 events" or hedges
with "event(s)"; and one vocabulary for what happened to a stored snapshot, used alike
by ``dump``, ``sessions``, ``show-snapshot``, ``stats``, ``doctor`` and the README:

- **unclaimed**: stored, not handed to any session yet (``consumed = 0``);
- **claimed**: handed to a session, exactly once (``consumed = 1``, ``consumed_by`` the
  id of the session that received it);
- **retired**: set aside unread, never to be handed out (``consumed = 1``,
  ``consumed_by`` one of :data:`ctxmode.store.RETIRE_REASONS`: ``clear``, ``resumed``,
  ``superseded``).

``consumed`` is only the store's column (and the ``dump --json`` field): "no longer
unclaimed", i.e. claimed or retired. Cheap to import (the hook log uses :func:`plural`).
"""

from __future__ import annotations

from ctxmode.store import RETIRE_REASONS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

UNCLAIMED = "unclaimed"
CLAIMED = "claimed"
RETIRED = "retired"
SNAPSHOT_STATES = (UNCLAIMED, CLAIMED, RETIRED)

_IRREGULAR = {"match": "matches", "directory": "directories", "this": "these"}


def plural(count: int, noun: str, plural_form: str | None = None, *, grouped: bool = False) -> str:
    """``"1 event"``, ``"0 events"``, ``"2 events"`` (``grouped``: ``"1,000 events"``)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun_for(count, noun, plural_form)}"


def noun_for(count: int, noun: str, plural_form: str | None = None) -> str:
    """The noun alone, singular for exactly one."""
    if count == 1:
        return noun
    if plural_form is not None:
        return plural_form
    return _IRREGULAR.get(noun, noun + "s")


def snapshot_state(resume: Mapping[str, object]) -> str:
    """``unclaimed``, ``claimed`` or ``retired``, from a ``session_resume`` row."""
    if not resume.get("consumed"):
        return UNCLAIMED
    return RETIRED if resume.get("consumed_by") in RETIRE_REASONS else CLAIMED
