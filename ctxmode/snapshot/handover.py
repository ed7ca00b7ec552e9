"""A snapshot handed to a session other than the one it was built from:
:func:`provenance` rewrites its root and preface to say where it comes from, when that
session ended (or compacted), and why it is given. Pure."""

from __future__ import annotations

from ctxmode.snapshot.render import (
    CLOSE,
    LOOKUP_SENTENCE,
    SESSION_CHARS,
    TIME_CHARS,
    esc,
    esc_attr,
)
from ctxmode.snapshot.text import clean, cut, pre

# Handed to another session: where it comes from, when, and why (REASONS).
PROVENANCE_PREFACE = (
    "Facts recorded by ctxmode in an earlier session (id {session}, {when}), not in this "
    "one; given {why}. " + LOOKUP_SENTENCE
)
REASONS = {
    "inject_on_startup": "at this fresh start because the inject_on_startup setting is on",
    "inject_on_clear": "after /clear because the inject_on_clear setting is on",
    "resume": "because this session was resumed under a new id, with no history of its own",
    "fork": "because this session was forked under a new id, with no history of its own",
}
# Room an end snapshot leaves for provenance(): the longer root and preface it gets
# when handed to another session, so that it still fits its budget then.
PROVENANCE_RESERVE = 320


def _attributes(tag: str) -> list[tuple[str, str]]:
    """``(name, escaped value)`` pairs of an open tag written by :func:`root_open`."""
    pairs = []
    rest = tag
    while True:
        eq = rest.find('="')
        if eq < 0:
            break
        close = rest.find('"', eq + 2)
        if close < 0:
            break
        name = rest[:eq].rsplit(" ", 1)[-1].strip()
        pairs.append((name, rest[eq + 2 : close]))
        rest = rest[close + 1 :]
    return pairs


def provenance(
    xml: str,
    *,
    from_session: str,
    kind: str,
    seq: int,
    taken_at: str,
    reason: str,
) -> str:
    """``xml`` as handed to a session other than the one it was built from.

    The root says where it comes from (``source="previous-session"``, ``from_session``,
    ``end="N"`` with ``ended_at``, or ``compaction="N"`` with ``compacted_at``) and why
    it is given (``reason``: a key of :data:`REASONS`, e.g. ``inject_on_startup``); the
    preface says the same in words, instead of "the earlier part of this session". The
    sections are unchanged. ``taken_at`` is when the snapshot was stored (the session's
    end, for an end snapshot). Never raises: on a document it cannot read it returns
    ``xml`` unchanged.
    """
    try:
        if not xml.startswith("<session_resume"):
            return xml
        close = xml.find(">")
        if close < 0:
            return xml
        tag, rest = xml[: close + 1], xml[close + 1 :]
        if tag.endswith("/>"):
            tag, rest = tag[:-2] + ">", "\n" + CLOSE
        if rest.startswith("\n<preface>"):
            end = rest.find("</preface>")
            if end >= 0:
                rest = rest[end + len("</preface>") :]
        kept = [(n, v) for n, v in _attributes(tag) if n in ("events", "from", "to")]
        sid = cut(clean(pre(from_session, SESSION_CHARS)), SESSION_CHARS)
        stamp = cut(clean(pre(taken_at, TIME_CHARS)), TIME_CHARS)
        is_end = kind == "end"
        attrs = [
            ("source", "previous-session"),
            ("from_session", esc_attr(sid)),
            ("end" if is_end else "compaction", str(int(seq))),
            ("ended_at" if is_end else "compacted_at", esc_attr(stamp)),
            ("reason", esc_attr(clean(reason)[:SESSION_CHARS])),
            *kept,
        ]
        head = "<session_resume" + "".join(f' {n}="{v}"' for n, v in attrs) + ">"
        if is_end:
            when = f"ended {stamp}" if stamp else "ended"
        else:
            when = (f"compacted {stamp}" if stamp else "compacted") + (
                ", never taken up by that session"
            )
        why = REASONS.get(reason, f"because of {clean(reason)[:SESSION_CHARS]}")
        preface = PROVENANCE_PREFACE.format(session=sid, when=when, why=why)
        return f"{head}\n<preface>{esc(preface)}</preface>{rest}"
    except Exception:  # a hook must never fail over its snapshot
        return xml
