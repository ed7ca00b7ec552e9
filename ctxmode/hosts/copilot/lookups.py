"""Copilot's ``permissionRequest``: allow ctxmode's own lookups, and nothing else.

The snapshot's hints ask the model to run ``<ctxmode> search --project DIR …`` (see
``ctxmode.handlers.search_command``). Under Copilot's default permissions a shell command
asks first, and in prompt mode (``-p``) no one answers: "Permission denied because no
interactive user response was available". Copilot 1.0.102 runs a ``permissionRequest`` hook
exactly then (verified: not for tools it runs without asking), and a hook that prints
``{"behavior": "allow"}`` lets that one call run (``{}`` or nothing leaves the decision to
Copilot). So this hook answers "allow" for a ``bash`` call whose command is ctxmode's search
and nothing more:

- the program is the ``ctxmode`` beside this interpreter, by its absolute path (bare or in
  single quotes), never a bare ``ctxmode`` that PATH could resolve to anything; optionally
  after ``CTXMODE_HOME=…`` (the hint's prefix with ``CTXMODE_LOOKUP_HOME=1``);
- then ``search``, then words made of safe characters, single-quoted text, or double-quoted
  text without ``$``, backquotes or backslashes. Any operator (``;``, ``&&``, ``|``,
  redirections, ``$(…)``, a second line) and the call is not ours: no answer, Copilot asks
  as it would have.

Pure but for :func:`program` (the interpreter's folder); the shim
(``ctxmode/hooks/permission_request.py``) owns stdin and stdout.
"""

from __future__ import annotations

import os
import sys

# Characters a word may hold unquoted (no shell meaning: no expansion, no operator).
_SAFE = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-")
ALLOW = b'{"behavior":"allow"}\n'
HOME_PREFIX = "CTXMODE_HOME="


def program(executable: str | None = None) -> str:
    """The absolute path of the ``ctxmode`` the hints name (beside the interpreter)."""
    return os.path.join(os.path.dirname(executable or sys.executable), "ctxmode")


def _word(text: str, i: int) -> int:
    """The end of the shell word starting at ``text[i]``, or -1 if it holds anything but
    safe characters and plain quoted text."""
    n = len(text)
    start = i
    while i < n and text[i] not in " \t":
        ch = text[i]
        if ch == "'":
            close = text.find("'", i + 1)
            if close == -1 or "\n" in text[i:close]:
                return -1
            i = close + 1
        elif ch == '"':
            close = text.find('"', i + 1)
            if close == -1 or any(c in "$`\\!\n" for c in text[i + 1 : close]):
                return -1
            i = close + 1
        elif ch in _SAFE or (ch.isalnum() and ch.isprintable()):
            i += 1
        else:
            return -1
    return i if i > start else -1


def _program_forms(path: str) -> tuple[str, ...]:
    forms = [f"'{path}'"]
    if all(ch in _SAFE for ch in path):
        forms.append(path)
    return tuple(forms)


def is_lookup(command: str, ctxmode_path: str) -> bool:
    """Whether ``command`` is ctxmode's search run by ``ctxmode_path``, with nothing else."""
    text = command.strip(" \t")
    if text.startswith(HOME_PREFIX):
        end = _word(text, len(HOME_PREFIX))
        if end == -1 or end == len(HOME_PREFIX):
            return False
        text = text[end:].lstrip(" \t")
    for form in _program_forms(ctxmode_path):
        if text.startswith(form + " search"):
            rest = text[len(form) + len(" search") :]
            break
    else:
        return False
    if rest and rest[0] not in " \t":
        return False  # "searchx", or an operator glued to it
    i = 0
    while i < len(rest):
        if rest[i] in " \t":
            i += 1
            continue
        i = _word(rest, i)
        if i == -1:
            return False
    return True


def answer(tool_name: str, tool_input: object, ctxmode_path: str) -> bytes:
    """The hook's stdout: ``ALLOW`` for a lookup, else b"" (Copilot decides)."""
    if tool_name != "bash" or not isinstance(tool_input, dict):
        return b""
    command = tool_input.get("command")
    if isinstance(command, str) and is_lookup(command, ctxmode_path):
        return ALLOW
    return b""
