"""Stop → ``assistant_reply {text, [notes]}``: what the agent answered at the end of a
turn, and what it wrote in the turn before that.

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
    notes = "\n".join(clip(one_line(n), NOTE_CHARS) for n in inp.turn_notes if n.strip())
    if notes:
        data["notes"] = masked_excerpt(notes, NOTES_HEAD, NOTES_TAIL)
    return [("assistant_reply", data)]
