"""Stop → ``assistant_reply {text}``: what the agent answered at the end of a turn.

The text a person read last in a turn (a count it reported, the command it asked the
user to run, the cause it found, a limit the client hit) is often in no tool call at
all: without it, a question about "what did you find" has no event to find. Claude
Code's Stop hook hands it over as ``last_assistant_message``; ``ctxmode import`` takes
the same text from a transcript (the turn's last text before the next prompt).

Masked (the payload is masked whole before this runs; the excerpt masks again what it
keeps) and bounded: the head and tail of a long reply, cut at line ends.
"""

from __future__ import annotations

from ctxmode.extract.common import masked_excerpt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

# A reply's first and last this-many characters: a summary's findings come first, its
# conclusion and the question back to the user last.
REPLY_HEAD = 1600
REPLY_TAIL = 600


def assistant_reply(inp: HookInput) -> list[Draft]:
    """The turn's last assistant message as ``assistant_reply {text}`` (none when empty)."""
    text = (inp.last_assistant_message or "").strip()
    if not text:
        return []
    return [("assistant_reply", {"text": masked_excerpt(text, REPLY_HEAD, REPLY_TAIL)})]
