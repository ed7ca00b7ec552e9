"""What one of the client's own commands printed → ``command_output {[command], output}``.

A person's ``/cost``, ``/context``, ``/install-github-app``, a plugin's install, a
skill's ``!`` line that failed: the client runs them without the model and without any
hook, and writes what they printed into its history (Claude Code: a
``<local-command-stdout>`` turn after the command's). ``ctxmode import`` reads it from
there (``ctxmode.history.CLIENT_OUTPUT_EVENT``): "the GitHub app would not install: an
API key is required" is asked about later like any command's output.

Masked (the input is masked whole before this runs) and bounded: the output's head and
tail, as much as a shell call keeps (extract.bash).
"""

from __future__ import annotations

from ctxmode.extract.bash import OUTPUT_HEAD, OUTPUT_TAIL
from ctxmode.extract.common import clip, masked_excerpt, one_line, s

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

COMMAND_CHARS = 200
# What a client prints for nothing to say.
_NOTHING = frozenset({"", "(no content)"})


def command_output(inp: HookInput) -> list[Draft]:
    """The command (``tool_input.command``: ``/cost``, "" when the history does not say)
    and the head and tail of what it printed (``tool_response.stdout``); none when it
    printed nothing."""
    response = inp.tool_response if isinstance(inp.tool_response, dict) else {}
    printed = s(response.get("stdout")).strip()
    if printed in _NOTHING:
        return []
    data: dict[str, str] = {}
    command = clip(one_line(s(inp.tool_input.get("command"))), COMMAND_CHARS)
    if command:
        data["command"] = command
    data["output"] = masked_excerpt(printed, OUTPUT_HEAD, OUTPUT_TAIL)
    return [("command_output", data)]
