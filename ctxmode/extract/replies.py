"""Stop → ``assistant_reply {text, [notes]}``: what the agent answered at the end of a
turn, and what it wrote in the turn before that (in a long turn, the notes the reply has
no room for as ``assistant_notes {text}``).

The text a person read last in a turn (a count it reported, the command it asked the
user to run, the cause it found, a limit the client hit) is often in no tool call at
all: without it, a question about "what did you find" has no event to find. Claude
Code's Stop hook hands it over as ``last_assistant_message``, and the host reads the
turn's earlier texts from its transcript (``turn_notes``); ``ctxmode import`` takes the
same texts from a transcript (the turn's last text before the next prompt, and those
before it).

Masked (the payload is masked whole before this runs; the excerpt masks again what it
keeps) and bounded: the head and tail of a long reply, cut at line ends.
"""

from __future__ import annotations

from ctxmode.extract.common import clip, masked_excerpt, one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

# A reply's first and last this-many characters: a summary's findings come first, its
# conclusion and the question back to the user last.
REPLY_HEAD = 1600
REPLY_TAIL = 600


# The turn's notes (what the agent wrote between its tool calls: "All 57 tests pass, 1
# skipped", "port 3000 was taken, the server is on 3001"), one per line, each cut to
# NOTE_CHARS, all of them to their head and tail: the last ones say what came of the turn.
NOTE_CHARS = 300
NOTES_HEAD = 500
NOTES_TAIL = 1000


def assistant_reply(inp: HookInput) -> list[Draft]:
    """The turn's last assistant message as ``assistant_reply {text, [notes]}`` (none
    when empty), ``notes`` what the agent wrote before it in the turn."""
    text = (inp.last_assistant_message or "").strip()
    if not text:
        return []
    data = {"text": masked_excerpt(text, REPLY_HEAD, REPLY_TAIL)}
    each = [clip(one_line(n), NOTE_CHARS) for n in inp.turn_notes if n.strip()]
    notes = "\n".join(each)
    if not notes:
        return [("assistant_reply", data)]
    data["notes"] = masked_excerpt(notes, NOTES_HEAD, NOTES_TAIL)
    # A long turn's notes from between the head and the tail the reply keeps: events of
    # their own ("Ground truth confirmed: all six golden values match"), a few at a time.
    rest = [note for note in each if note not in data["notes"]]
    return [("assistant_reply", data), *_grouped(rest)]


# The notes of a turn the reply has no room for: at most this many characters an event.
NOTES_GROUP = 900


def _grouped(notes: list[str]) -> list[Draft]:
    """``assistant_notes {text}`` events holding ``notes``, in order, one per line."""
    out: list[Draft] = []
    group: list[str] = []
    size = 0
    for note in notes:
        if group and size + len(note) > NOTES_GROUP:
            out.append(("assistant_notes", {"text": "\n".join(group)}))
            group, size = [], 0
        group.append(note)
        size += len(note) + 1
    if group:
        out.append(("assistant_notes", {"text": "\n".join(group)}))
    return out
