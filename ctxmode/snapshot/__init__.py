"""The resume snapshot: a session's events → a small, well-formed ``<session_resume>`` XML.

Pure and hot-path safe: it runs inside the PreCompact and SessionStart hooks, so it does
no I/O, reads no clock and imports nothing heavy (no ``json``, ``re``, ``typing`` or
``xml``). The XML is written by hand with our own escaping, which is all a document of
fixed shape needs.

The document is filled by importance (see ``selection._RANK``): when it exceeds the byte
budget, the least important section is shortened, then loses items (least important
first), then goes entirely (counted in ``<omitted_sections>``), and so on. Key items are
never dropped, only shortened, and their sections never go: the last request, the last
commit (message and sha), the newest unresolved error (the first ``<error>``: errors go
newest first, in the calls' order), and the branch and uncommitted work (``<git>``'s
attributes).
Every item is rendered whole, so the output always parses.

Shape (each section only when it has content; ``omitted`` only when items were left out)::

    <session_resume session=".." compaction="2" events="312" from="<first created_at>" to="..">
    <preface>Facts recorded by ctxmode …</preface>
    <search>/abs/bin/ctxmode search --project /abs/project</search>
    <requests omitted="9"><lookup>--session 1a2b3c4d --type user_prompt --limit 13</lookup>
      <goal>…</goal><prompt intent="fix">…
    <tasks completed="3"> <task id="2" status="in_progress">subject</task> …
    <files_changed> <file path="src/a.py" change="create,edit" count="3"/> …   (newest first)
    <files_read> <file path="README.md" count="2"/> …
    <errors resolved="2"> <error tool="Bash" key="pytest -q" count="2">first lines</error>
    <decisions> <role>…</role> <decision>…</decision>
    <plan> <text path="…">the approved plan</text>
    <rules> <rule path="CLAUDE.md" change="read"/>
    <git branch="feature/x" changed_since_commit="2"> <commit sha="abc1234">msg</commit> <op>push …
    <environment cwd="/abs/dir"> <setup kind="venv" tool="python">detail</setup>
    <subagents> <subagent type="reviewer" count="2">description</subagent>
    <mcp> <tool server="billing" name="lookup" count="3"/>
    <references> <url>…</url> <web_search>…</web_search>
    <omitted_sections git="15" references="5"/>   (sections removed whole to fit the budget)
    </session_resume>

The search command is written once, in ``<search>`` after the preface (``search_command``:
the absolute program and project, as the hook resolves them); a section's ``<lookup>``
holds the options that, added to it, list what the section leaves out:
``--session ID --type T1,T2 [--limit N] [--full]`` (this session's events of the types
the section is made of, newest first, enough of them for the section's total).

Two kinds, numbered separately per session (``session_resume.compact_seq``): a
compaction snapshot (``kind="compact"``, root ``compaction="N"``: the session's N-th
compaction, handed back to that same session) and an end-of-session snapshot
(``kind="end"``, root ``end="N"``: the N-th time the session ended, kept for a later
session). When a snapshot is handed to a *different* session (``inject_on_startup``,
``inject_on_clear``, a resume under a new id), :func:`provenance` rewrites its root and
preface to say so: where it comes from, when that session ended, why it is given::

    <session_resume source="previous-session" from_session=".." end="1"
        ended_at="2026-12-02T14:51:20.123Z" reason="inject_on_startup" events=".." ...>

The package, in the order a snapshot is made (each module pure):

- ``fold``: the events, folded in one pass into a ``State``;
- ``sections``: the state → the candidate sections, in display order, with their items;
- ``selection``: what fits the budget, by importance (``fit``);
- ``render``: XML escaping, elements and attributes, the lookup hints, root and preface;
- ``text``: cleaning, cutting and measuring text; ``handover``: :func:`provenance`.
"""

from __future__ import annotations

from ctxmode.snapshot.fold import State, fold_events, fold_prefixes
from ctxmode.snapshot.handover import (
    PROVENANCE_PREFACE,
    PROVENANCE_RESERVE,
    REASONS,
    provenance,
)
from ctxmode.snapshot.render import (
    CLOSE,
    END_PREFACE,
    PREFACE,
    esc,
    omitted_sections,
    preface_text,
    root_open,
    search_element,
    session_option,
    shell_quote,
)
from ctxmode.snapshot.sections import SECTIONS
from ctxmode.snapshot.selection import DEFAULT_BUDGET, MAX_CHARS, MIN_BUDGET, clamp_budget, fit
from ctxmode.snapshot.text import clean, nbytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxmode.events import SessionEvent

__all__ = [
    "DEFAULT_BUDGET",
    "END_PREFACE",
    "MAX_CHARS",
    "MIN_BUDGET",
    "PREFACE",
    "PROVENANCE_PREFACE",
    "PROVENANCE_RESERVE",
    "REASONS",
    "build_snapshot",
    "build_snapshots",
    "provenance",
    "shell_quote",
]


def _build(
    events: Sequence[SessionEvent],
    session_id: object,
    compact_seq: object,
    limit: int,
    search_command: object,
    kind: str,
    st: State | None = None,
) -> str:
    if st is None:
        st = fold_events(events)
    cmd = clean(search_command) if isinstance(search_command, str) else ""
    cmd = cmd or "ctxmode search"
    scope = session_option(session_id)
    sections = [s for s in (make(st, scope) for make in SECTIONS) if s is not None]
    head = (
        root_open(events, session_id, compact_seq, kind)
        + f"<preface>{esc(preface_text(session_id, kind))}</preface>\n"
        + (search_element(cmd) if sections else "")
    )
    fitted = fit(sections, limit - nbytes(head) - nbytes(CLOSE))
    if fitted is None:
        return _minimal(events, session_id, compact_seq, limit, kind)
    kept, gone = fitted
    body = "".join([s.render()[0] for s in kept])
    return head + body + omitted_sections(gone) + CLOSE


def _minimal(
    events: Sequence[SessionEvent],
    session_id: object,
    compact_seq: object,
    limit: int,
    kind: str,
) -> str:
    """The smallest honest document: root attributes (and the preface if it fits)."""
    try:
        head = root_open(events, session_id, compact_seq, kind)
    except Exception:
        head = "<session_resume>\n"
    doc = head + f"<preface>{esc(preface_text(session_id, kind))}</preface>\n" + CLOSE
    if nbytes(doc) <= limit:
        return doc
    doc = head + CLOSE
    return doc if nbytes(doc) <= limit else "<session_resume/>\n"


def build_snapshot(
    events: Sequence[SessionEvent],
    *,
    session_id: str,
    compact_seq: int,
    budget: int = DEFAULT_BUDGET,
    search_command: str = "ctxmode search",
    kind: str = "compact",
) -> str:
    """The ``<session_resume>`` XML for ``events`` (oldest first), at most ``budget`` bytes.

    ``budget`` is clamped to [MIN_BUDGET, MAX_CHARS]. Deterministic and never raises:
    malformed events are skipped, hostile text is escaped or removed. ``kind`` is
    ``"compact"`` (``compact_seq`` is the compaction's number) or ``"end"`` (the
    session's N-th end; such a snapshot keeps :data:`PROVENANCE_RESERVE` bytes free for
    :func:`provenance`, so it fits its budget in the form another session receives).
    """
    kind = "end" if kind == "end" else "compact"
    limit = clamp_budget(budget)
    if kind == "end":
        limit -= PROVENANCE_RESERVE
    try:
        if not isinstance(events, (list, tuple)):
            events = list(events)
        return _build(events, session_id, compact_seq, limit, search_command, kind)
    except Exception:  # a hook must never fail over its snapshot
        try:
            return _minimal(
                events if isinstance(events, (list, tuple)) else (),
                session_id,
                compact_seq,
                limit,
                kind,
            )
        except Exception:
            return "<session_resume/>\n"


def build_snapshots(
    events: Sequence[SessionEvent],
    points: Sequence[tuple[int, int]],
    *,
    session_id: str,
    budget: int = DEFAULT_BUDGET,
    search_command: str = "ctxmode search",
) -> list[str]:
    """The compaction snapshots of a session's history: for each ``(end, compact_seq)`` of
    ``points`` (ascending ends), exactly ``build_snapshot(events[:end], ...)``, folded in
    one pass over ``events`` (``ctxmode import`` replays every compaction of a session:
    folding each prefix anew would cost the square of its length)."""
    limit = clamp_budget(budget)
    if not isinstance(events, (list, tuple)):
        events = list(events)
    out: list[str] = []
    ends = [end for end, _seq in points]
    try:
        states = fold_prefixes(events, ends)
        for (end, seq), st in zip(points, states, strict=True):
            prefix = events[:end]
            try:
                out.append(_build(prefix, session_id, seq, limit, search_command, "compact", st))
            except Exception:  # as build_snapshot: never fails over one snapshot
                out.append(build_snapshot(prefix, session_id=session_id, compact_seq=seq,
                                          budget=budget, search_command=search_command))  # fmt: skip
    except Exception:
        out = [
            build_snapshot(events[:end], session_id=session_id, compact_seq=seq, budget=budget,
                           search_command=search_command)
            for end, seq in points
        ]  # fmt: skip
    return out
