"""The turn's reply on every host whose hook carries it: one text, one reference.

Each host test runs its own recorded end-of-turn payload (Codex's and Qwen's Stop, Gemini's
AfterAgent) through ctxmode's installed command with :data:`REPLY` as the reply, and holds
what it stored to :func:`claude_code_reply`: what Claude Code's Stop hook stores for the
same text. So "masked and bounded exactly like Claude Code's" is one equality, checked
against the real hook rather than a copy of its rules.
"""

from __future__ import annotations

import json
from pathlib import Path

from ctxmode.extract import replies
from tests.helpers import make_project
from tests.hooktools import FIXTURES, hook_env, run_hook
from tests.test_shell_calls import GH_TOKEN, OPENAI_KEY, assert_no_secret, of_type, stored

# A reply longer than what is kept of it, with a secret in the head and one in the tail:
# the excerpt must keep both ends, cut between them, and mask both.
_BODY = "\n".join(f"- step {n}: module_{n} checked, nothing to change" for n in range(200))
REPLY = (
    f"Done: the port is 5173.\nI used the key {OPENAI_KEY} from .env.\n{_BODY}\n"
    f"The deploy token was {GH_TOKEN}; rotate it.\nRun the tests next."
)
assert len(REPLY) > replies.REPLY_HEAD + replies.REPLY_TAIL


def stored_replies(project: Path) -> list[str]:
    """The ``assistant_reply`` texts of ``project``'s store, read with sqlite3; none of
    the test corpus's secrets is anywhere in the store."""
    rows = stored(project)
    assert_no_secret(rows)
    return [data["text"] for data in of_type(rows, "assistant_reply")]


def claude_code_reply(parent: Path, text: str = REPLY) -> str:
    """What Claude Code's Stop hook (its recorded 2.1.197 payload) stores for ``text``,
    in a project of its own under ``parent``."""
    project = make_project(parent, "claude-code-reference")
    recorded = json.loads((FIXTURES / "Stop.json").read_text())["payload"]
    payload = {**recorded, "cwd": str(project), "last_assistant_message": text}
    proc = run_hook("Stop", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    (reply,) = stored_replies(project)
    return reply


def assert_kept_like_claude_codes(project: Path, parent: Path) -> None:
    """``project`` holds one reply: :data:`REPLY`, masked and bounded as Claude Code's."""
    (reply,) = stored_replies(project)
    assert reply.startswith("Done: the port is 5173.\nI used the key [REDACTED"), reply[:80]
    assert reply.endswith("; rotate it.\nRun the tests next."), reply[-80:]
    assert len(reply) <= replies.REPLY_HEAD + replies.REPLY_TAIL + 3
    assert reply == claude_code_reply(parent)
