"""ctxmode's ``statusLine`` in the text of a Claude Code settings.json (pure text in, text out).

Claude Code has one status line per settings file: ``"statusLine": {"type": "command",
"command": "..."}``. ctxmode's command runs its shim ``.../ctxmode/hooks/statusline.py``.
A status line the user already has is composed, never replaced: only the ``command``
string changes, to ``<ctxmode's> --then '<theirs>'`` (the shim runs theirs first on the
same input and appends its own line, ``ctxmode.statusline``); every other key of the
object (``padding``, ``refreshInterval``, ...) and every other byte stays. Removing it is
the exact inverse: the command goes back to theirs, or, when the status line was
ctxmode's alone, the ``statusLine`` member goes with its separator.

The surgery is ``ctxmode.settings``' (the same scanner, the same append and delete);
this module only knows the one member it edits.
"""

from __future__ import annotations

import json
import re
import shlex

from ctxmode import settings
from ctxmode.settings import SettingsError

KEY = "statusLine"
SHIM = "statusline"
THEN = "--then"
_MARKER = re.compile(r"[/\\]ctxmode[/\\]hooks[/\\]statusline\.py\b")


def is_ours(command: object) -> bool:
    """Whether a status line command runs ctxmode's status line shim."""
    return isinstance(command, str) and _MARKER.search(command) is not None


def composed_with(command: str) -> str | None:
    """The user's own command ctxmode's composes with (its ``--then`` argument), if any."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) >= 2 and words[-2] == THEN:
        return words[-1]
    return None


def ours_alone(command: str) -> str:
    """ctxmode's part of a composed command (the command without ``--then '…'``)."""
    theirs = composed_with(command)
    suffix = f" {THEN} {_quote(theirs)}" if theirs is not None else ""
    return command[: -len(suffix)] if suffix and command.endswith(suffix) else command


def current(text: str) -> object:
    """The ``statusLine.command`` of a settings text (None when there is none)."""
    value = settings.parse(text)
    line = value.get(KEY) if isinstance(value, dict) else None
    return line.get("command") if isinstance(line, dict) else None


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _locate(body: str) -> tuple[settings._Doc, int | None, settings._Node | None]:
    """The document, the index of ``statusLine`` in the root, and its object's node."""
    doc = settings._load(body)
    index = settings._member(body, doc.root, KEY)
    if index is None:
        return doc, None, None
    start = doc.root.items[index][2]
    if body[start] != "{":
        raise SettingsError(f'"{KEY}" is not a JSON object; ctxmode leaves the file untouched')
    return doc, index, settings._scan(body, start)


def merge(text: str, command: str) -> str:
    """``text`` with ctxmode's status line ``command``, composed with one already there.

    Idempotent; an older ctxmode command (a moved installation) is replaced in place.
    """
    root_value = settings.parse(text)
    if not isinstance(root_value, dict):
        raise SettingsError("settings.json is not a JSON object; ctxmode leaves it untouched")
    bom, body = settings._split_bom(text)
    if not body.strip(" \t\r\n"):
        fresh = {KEY: {"type": "command", "command": command}}
        return bom + json.dumps(fresh, ensure_ascii=False, indent=2) + "\n"
    doc, index, node = _locate(body)
    style = settings._detect_style(body, doc.root)
    if index is None or node is None:
        element = {"type": "command", "command": command}
        return bom + settings._append(body, doc.root, element, style, key=KEY)
    line = root_value[KEY]
    existing = line.get("command")
    if line.get("type", "command") != "command" or not isinstance(existing, str):
        raise SettingsError(f'"{KEY}" is not a command status line; ctxmode leaves it untouched')
    if is_ours(existing):
        theirs = composed_with(existing)
        wanted = command if theirs is None else f"{command} {THEN} {_quote(theirs)}"
    else:
        wanted = f"{command} {THEN} {_quote(existing)}"
    if wanted == existing:
        return text
    at = settings._member(body, node, "command")
    assert at is not None
    return bom + settings._replace(body, node, at, wanted, style)


def unmerge(text: str) -> str:
    """``text`` without ctxmode's status line: theirs restored, or the member removed."""
    root_value = settings.parse(text)
    if not isinstance(root_value, dict) or not isinstance(root_value.get(KEY), dict):
        return text
    existing = root_value[KEY].get("command")
    if not is_ours(existing):
        return text
    bom, body = settings._split_bom(text)
    doc, index, node = _locate(body)
    assert index is not None and node is not None
    theirs = composed_with(existing)
    if theirs is None:
        return bom + settings._delete(body, doc.root, index)
    at = settings._member(body, node, "command")
    assert at is not None
    style = settings._detect_style(body, doc.root)
    return bom + settings._replace(body, node, at, theirs, style)
