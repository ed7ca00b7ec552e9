"""Merge and remove ctxmode's hook handlers in the text of a Claude Code settings.json.

Pure text in, text out: no file I/O (``ctxmode.hosts.claude_code.install`` reads, backs up and writes).

The file belongs to the user, so the edits are surgical: the text is scanned for the
spans of the few containers ctxmode touches (root object → ``hooks`` → event arrays →
matcher groups → handler arrays) and only ctxmode's own elements are inserted, replaced
or cut out; every other byte stays where it was. An insertion and the later removal of
the same element are exact inverses (an element appended after a sibling is written as
``,<newline><indent><element>``, and removing an element takes its leading separator
with it), so ``unmerge(merge(text)) == text`` for any file that had no ctxmode entries
and no empty ``hooks``/event containers of its own.

ctxmode's handlers are recognised by their command (``is_ctxmode_command``): the path of
one of its hook shims, ``.../ctxmode/hooks/<shim>.py``. That marker survives a move of
the interpreter or of the virtual environment, so an upgrade replaces a stale entry in
place instead of adding a second one.

Files with comments or trailing commas (JSONC) are refused, never rewritten: a faithful
edit would need a JSONC writer, and Claude Code itself expects plain JSON.

Long on purpose (~630 lines): the scanner, the edits, their exact inverses and the test
that a file is "its backup plus ctxmode's entries" (:func:`restores`) are one piece: a
change to one must be checked against the others.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The JSON whitespace characters (RFC 8259); anything else between tokens is an error.
_WS = " \t\n\r"
_BOM = "\ufeff"

# Shim file names of ctxmode/hooks/ and the events they serve.
SHIMS: Mapping[str, str] = {
    "PostToolUse": "post_tool_use",
    "PostToolUseFailure": "post_tool_use_failure",
    "UserPromptSubmit": "user_prompt_submit",
    "PreCompact": "pre_compact",
    "SessionStart": "session_start",
    "SessionEnd": "session_end",
    "PostCompact": "post_compact",
    "Stop": "stop",
}


def _host_shims() -> tuple[str, ...]:
    """The shims of hosts' own events (a host's ``SHIMS``: Gemini's BeforeModel), from the
    registry: found in their settings like the rest."""
    from ctxmode import hosts

    own = set(SHIMS.values())
    found = {
        shim
        for name in hosts.NAMES
        for shim in getattr(hosts.get(name), "SHIMS", {}).values()
        if shim not in own
    }
    return tuple(sorted(found))


HOST_SHIMS = _host_shims()
_SHIM_NAMES = "|".join(sorted((*SHIMS.values(), *HOST_SHIMS), key=len, reverse=True))
# A command runs a shim by its path (``.../ctxmode/hooks/<shim>.py``), or, in a shared
# project file, through the per-user launcher (``ctxmode-hook <shim>``, see
# ``ctxmode.hosts.claude_code.install.team_command``).
_MARKER = re.compile(
    r"[/\\]ctxmode[/\\]hooks[/\\](" + _SHIM_NAMES + r")\.py\b"
    r"|\bctxmode-hook['\"]?[ \t]+['\"]?(" + _SHIM_NAMES + r")\b"
)


@dataclass(frozen=True)
class HookSpec:
    """One handler ctxmode registers: event, matcher (None: no matcher key), command."""

    event: str
    command: str
    timeout: int
    matcher: str | None = None
    # "async": true — the client runs it in the background (hosts.claude_code.BACKGROUND_EVENTS)
    background: bool = False
    # The handler's "name" (Gemini CLI shows it, and runs one handler per name:command)
    name: str | None = None

    def group(self) -> dict[str, Any]:
        """The matcher group written to settings.json, keys in a fixed order."""
        group: dict[str, Any] = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        handler: dict[str, Any] = {"type": "command"}
        if self.name is not None:
            handler["name"] = self.name
        handler.update(command=self.command, timeout=self.timeout)
        if self.background:
            handler["async"] = True
        group["hooks"] = [handler]
        return group


@dataclass(frozen=True)
class Registration:
    """A ctxmode handler found in a settings file."""

    event: str
    command: str
    timeout: Any
    matcher: Any
    shim: str  # the shim named by the command ("session_start", ...)
    own_group: bool  # True when its matcher group holds nothing but ctxmode handlers
    background: bool = False  # registered with "async": true
    name: str | None = None  # its "name" (Gemini CLI's handlers have one)

    def spec(self) -> HookSpec:
        """The spec that writes this handler as it is (an earlier install's)."""
        timeout = self.timeout if isinstance(self.timeout, int) else 0
        matcher = self.matcher if isinstance(self.matcher, str) else None
        return HookSpec(self.event, self.command, timeout, matcher, self.background, self.name)


# Claude Code's managed (policy) settings file, per platform: it merges with the user's
# and the project's files and can switch hooks off (``disableAllHooks``,
# ``allowManagedHooksOnly``). Paths from Claude Code's settings documentation.
MANAGED_SETTINGS = {
    "darwin": "/Library/Application Support/ClaudeCode/managed-settings.json",
    "win32": "C:\\ProgramData\\ClaudeCode\\managed-settings.json",
    "linux": "/etc/claude-code/managed-settings.json",  # and WSL
}


def managed_settings_path(platform: str | None = None) -> str:
    """The managed settings file Claude Code reads on ``platform`` (default: this one)."""
    import sys

    name = platform or sys.platform
    return MANAGED_SETTINGS.get(name, MANAGED_SETTINGS["linux"])


class SettingsError(ValueError):
    """The settings text cannot be edited safely; the message says why and where."""


def is_ctxmode_command(command: object) -> bool:
    """Whether a handler command runs one of ctxmode's hook shims."""
    return isinstance(command, str) and _MARKER.search(command) is not None


def runs_launcher(command: object) -> bool:
    """Whether a ctxmode command runs the per-user launcher (a shared project file's form)."""
    found = _MARKER.search(command) if isinstance(command, str) else None
    return found is not None and found.group(2) is not None


def shim_of(command: str) -> str | None:
    """The shim name a ctxmode command runs (``session_start``), else None."""
    found = _MARKER.search(command)
    return (found.group(1) or found.group(2)) if found else None


# --------------------------------------------------------------------------- parsing


def _prev_token(text: str, pos: int) -> str:
    i = pos - 1
    while i >= 0 and text[i] in _WS:
        i -= 1
    return text[i] if i >= 0 else ""


def _jsonc_hint(text: str, pos: int) -> tuple[str, int] | None:
    """Name the JSONC construct at a parse error position, and where it starts.

    A trailing comma is reported where the comma is (the parser stops at the bracket
    after it, often lines later), as editors and linters point at it.
    """
    if text.startswith("//", pos) or text.startswith("/*", pos):
        return "a comment", pos
    if pos < len(text) and text[pos] in "}]" and _prev_token(text, pos) == ",":
        return "a trailing comma", text.rindex(",", 0, pos)
    return None


def _line_column(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of ``pos``, counted as ``json.JSONDecodeError`` does."""
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


def parse(text: str, name: str = "settings.json") -> Any:
    """Parse settings text as strict JSON; raise SettingsError with line and column."""
    body = text[1:] if text.startswith(_BOM) else text
    if not body.strip(_WS):
        return {}
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        found = _jsonc_hint(body, exc.pos)
        where = f"{name}: line {exc.lineno}, column {exc.colno}"
        if found:
            hint, pos = found
            line, column = _line_column(body, pos)
            raise SettingsError(
                f"{name}: line {line}, column {column}: {hint} "
                "(JSON with comments/trailing commas is not supported); "
                "ctxmode leaves the file untouched: remove it, or add the hooks by hand"
            ) from None
        raise SettingsError(
            f"{where}: invalid JSON ({exc.msg}); the file was left untouched"
        ) from None
    except RecursionError:
        raise SettingsError(f"{name}: nested too deeply to edit safely") from None


@dataclass
class _Node:
    """A container in the text: its span and its elements' spans (and keys, for objects)."""

    start: int  # index of "{" or "["
    end: int  # index just past "}" or "]"
    items: list[tuple[str | None, int, int, int]]  # (key, member start, value start, value end)


_DECODER = json.JSONDecoder()


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    return int(_DECODER.raw_decode(text, i)[1])


def _scan(text: str, start: int) -> _Node:
    """Scan the object or array at ``start`` (the text is known to be valid JSON)."""
    is_object = text[start] == "{"
    close = "}" if is_object else "]"
    items: list[tuple[str | None, int, int, int]] = []
    i = _skip_ws(text, start + 1)
    if text[i] == close:
        return _Node(start, i + 1, items)
    while True:
        member_start = i
        key: str | None = None
        if is_object:
            key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
            i = _skip_ws(text, i)
            i = _skip_ws(text, i + 1)  # past ":"
        value_start = i
        i = _value_end(text, i)
        items.append((key, member_start, value_start, i))
        i = _skip_ws(text, i)
        if text[i] == close:
            return _Node(start, i + 1, items)
        i = _skip_ws(text, i + 1)  # past ","


def _member(text: str, node: _Node, key: str) -> int | None:
    """Index in ``node.items`` of the member named ``key`` (the last one, as JSON.parse keeps)."""
    found = None
    for index, item in enumerate(node.items):
        if item[0] == key:
            found = index
    return found


# --------------------------------------------------------------------------- formatting


@dataclass(frozen=True)
class _Style:
    indent: str  # one level: "  ", "    ", "\t"
    newline: str  # "\n" or "\r\n"
    pretty: bool  # False for one-line (minified) files
    colon: str  # ": " or ":" in compact files
    comma: str  # ", " or "," in compact files


def _detect_style(text: str, root: _Node) -> _Style:
    newline = "\r\n" if "\r\n" in text else "\n"
    # An empty root ("{}", a fresh file) is written out pretty, as Claude Code does.
    pretty = "\n" in text[root.start : root.end] or not root.items
    indent = "  "
    for line in text[root.start : root.end].split("\n")[1:]:
        stripped = line.lstrip(" \t")
        if stripped and stripped[0] not in "\r":
            lead = line[: len(line) - len(stripped)]
            if lead:
                indent = "\t" if lead.startswith("\t") else lead
                break
    compact = not pretty and '":' in text and '": ' not in text
    return _Style(
        indent=indent,
        newline=newline,
        pretty=pretty,
        colon=":" if compact else ": ",
        comma="," if compact else ", ",
    )


def _render(value: Any, style: _Style, base: str, pretty: bool) -> str:
    if not pretty:
        return json.dumps(value, ensure_ascii=False, separators=(style.comma, style.colon))
    lines = json.dumps(value, ensure_ascii=False, indent=style.indent).split("\n")
    return (style.newline + base).join(lines)


def _line_indent(text: str, pos: int) -> str | None:
    """The whitespace before ``pos`` on its line, or None when other text precedes it."""
    line_start = text.rfind("\n", 0, pos) + 1
    lead = text[line_start:pos]
    return lead if lead.strip(" \t") == "" else None


def _container_indent(text: str, node: _Node) -> str:
    """Indentation of the line holding the container's opening bracket."""
    line_start = text.rfind("\n", 0, node.start) + 1
    line = text[line_start : node.start]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _append(text: str, node: _Node, element: Any, style: _Style, key: str | None = None) -> str:
    """Append an element (a member when ``key`` is given) at the end of a container."""

    def render(base: str, pretty: bool) -> str:
        body = _render(element, style, base, pretty)
        if key is None:
            return body
        colon = ": " if pretty else style.colon
        return json.dumps(key, ensure_ascii=False) + colon + body

    if node.items:
        last_start, last_end = node.items[-1][1], node.items[-1][3]
        lead = _line_indent(text, last_start)
        if lead is not None and style.pretty:
            insert = "," + style.newline + lead + render(lead, True)
        else:
            insert = style.comma + render("", False)
        return text[:last_end] + insert + text[last_end:]
    # An empty container: write it open in a pretty file, inline in a minified one.
    if style.pretty:
        outer = _container_indent(text, node)
        inner = outer + style.indent
        interior = style.newline + inner + render(inner, True) + style.newline + outer
    else:
        interior = render("", False)
    return text[: node.start + 1] + interior + text[node.end - 1 :]


def _replace(text: str, node: _Node, index: int, element: Any, style: _Style) -> str:
    _, start, value_start, end = node.items[index]
    lead = _line_indent(text, start)
    pretty = lead is not None and style.pretty
    return text[:value_start] + _render(element, style, lead or "", pretty) + text[end:]


def _delete(text: str, node: _Node, index: int) -> str:
    """Cut one element out with its separator: the inverse of :func:`_append`."""
    items = node.items
    if len(items) == 1:
        return text[: node.start + 1] + text[node.end - 1 :]
    if index > 0:
        return text[: items[index - 1][3]] + text[items[index][3] :]
    return text[: items[0][1]] + text[items[1][1] :]


# --------------------------------------------------------------------------- the model walk


@dataclass
class _Doc:
    """The containers of one state of the text that ctxmode may edit."""

    text: str
    root: _Node
    hooks: _Node | None  # None when there is no "hooks" member
    hooks_index: int | None


def _load(text: str) -> _Doc:
    i = _skip_ws(text, 0)
    root = _scan(text, i)
    index = _member(text, root, "hooks")
    if index is None:
        return _Doc(text, root, None, None)
    value_start = root.items[index][2]
    if text[value_start] != "{":
        raise SettingsError('"hooks" is not a JSON object; ctxmode leaves the file untouched')
    return _Doc(text, root, _scan(text, value_start), index)


def _value(text: str, start: int, end: int) -> Any:
    return json.loads(text[start:end])


def _handlers(text: str, group_start: int) -> tuple[_Node, list[int]] | None:
    """The handler array of a matcher group and the indexes of ctxmode's handlers in it."""
    if text[group_start] != "{":
        return None
    group = _scan(text, group_start)
    index = _member(text, group, "hooks")
    if index is None or text[group.items[index][2]] != "[":
        return None
    array = _scan(text, group.items[index][2])
    ours = [
        i
        for i, (_, _, start, end) in enumerate(array.items)
        if text[start] == "{" and is_ctxmode_command(_value(text, start, end).get("command"))
    ]
    return array, ours


def _event_array(doc: _Doc, event: str) -> tuple[int, _Node] | None:
    if doc.hooks is None:
        return None
    index = _member(doc.text, doc.hooks, event)
    if index is None:
        return None
    start = doc.hooks.items[index][2]
    if doc.text[start] != "[":
        return None
    return index, _scan(doc.text, start)


def _strip_event(text: str, event: str, keep: int | None = None) -> str:
    """Remove ctxmode's handlers from one event, except the group at index ``keep``.

    Groups holding only ctxmode handlers go whole; in a mixed group only the handler
    goes. Returns the new text; the caller re-scans.
    """
    while True:
        doc = _load(text)
        found = _event_array(doc, event)
        if found is None:
            return text
        _, array = found
        for gi in range(len(array.items) - 1, -1, -1):
            if gi == keep:
                continue
            handlers = _handlers(text, array.items[gi][2])
            if handlers is None or not handlers[1]:
                continue
            node, ours = handlers
            if len(ours) == len(node.items):
                if keep is not None and gi < keep:
                    keep -= 1
                text = _delete(text, array, gi)
            else:
                text = _delete(text, node, ours[-1])
            break
        else:
            return text


def _check_event_value(doc: _Doc, event: str) -> None:
    if doc.hooks is None:
        return
    index = _member(doc.text, doc.hooks, event)
    if index is not None and doc.text[doc.hooks.items[index][2]] != "[":
        raise SettingsError(
            f'"hooks.{event}" is not a JSON array; ctxmode leaves the file untouched'
        )


def _drop_if_emptied(text: str, event: str, was_nonempty: bool) -> str:
    doc = _load(text)
    found = _event_array(doc, event)
    if found is None or not was_nonempty or found[1].items:
        return text
    assert doc.hooks is not None
    return _delete(text, doc.hooks, found[0])


def _split_bom(text: str) -> tuple[str, str]:
    return (_BOM, text[1:]) if text.startswith(_BOM) else ("", text)


def _fresh(specs: Sequence[HookSpec]) -> str:
    hooks = {spec.event: [spec.group()] for spec in specs}
    return json.dumps({"hooks": hooks}, ensure_ascii=False, indent=2) + "\n"


def _events_present(doc: _Doc) -> list[str]:
    if doc.hooks is None:
        return []
    return [key for key, *_ in doc.hooks.items if key is not None]


def merge(text: str, specs: Sequence[HookSpec]) -> str:
    """Return ``text`` with exactly ``specs`` as ctxmode's handlers; all else untouched.

    Idempotent: merging the same specs again returns the text unchanged.
    """
    root_value = parse(text)
    if not isinstance(root_value, dict):
        raise SettingsError("settings.json is not a JSON object; ctxmode leaves it untouched")
    bom, body = _split_bom(text)
    if not body.strip(_WS):
        return bom + _fresh(specs)
    wanted = {spec.event: spec for spec in specs}
    doc = _load(body)
    for event in wanted:
        _check_event_value(doc, event)
    style = _detect_style(body, doc.root)

    # Events ctxmode no longer registers (an older version's): take our handlers out.
    for event in _events_present(doc):
        if event not in wanted:
            found = _event_array(doc, event)
            was_nonempty = bool(found and found[1].items)
            body = _strip_event(body, event)
            body = _drop_if_emptied(body, event, was_nonempty)
            doc = _load(body)

    for spec in wanted.values():
        body = _merge_event(body, spec, style)
    return bom + body


def _merge_event(text: str, spec: HookSpec, style: _Style) -> str:
    doc = _load(text)
    group = spec.group()
    if doc.hooks is None:
        return _append(text, doc.root, {spec.event: [group]}, style, key="hooks")
    found = _event_array(doc, spec.event)
    if found is None:
        return _append(text, doc.hooks, [group], style, key=spec.event)
    _, array = found
    # Reuse the first group that is wholly ctxmode's: an upgrade rewrites it in place.
    keep = None
    for gi, (_, _, start, _) in enumerate(array.items):
        handlers = _handlers(text, start)
        if handlers and handlers[1] and len(handlers[1]) == len(handlers[0].items):
            keep = gi
            break
    text = _strip_event(text, spec.event, keep)
    doc = _load(text)
    found = _event_array(doc, spec.event)
    assert found is not None
    _, array = found
    if keep is None:
        return _append(text, array, group, style)
    _, _, start, end = array.items[keep]
    if _value(text, start, end) == group:
        return text
    return _replace(text, array, keep, group, style)


def unmerge(text: str) -> str:
    """Return ``text`` without ctxmode's handlers (and the containers that emptied)."""
    root_value = parse(text)
    if not isinstance(root_value, dict):
        raise SettingsError("settings.json is not a JSON object; ctxmode leaves it untouched")
    if not isinstance(root_value.get("hooks"), dict):
        return text  # nothing of ctxmode's can be in there
    bom, body = _split_bom(text)
    doc = _load(body)
    assert doc.hooks is not None
    hooks_nonempty = bool(doc.hooks.items)
    for event in _events_present(doc):
        found = _event_array(_load(body), event)
        if found is None:
            continue
        was_nonempty = bool(found[1].items)
        body = _strip_event(body, event)
        body = _drop_if_emptied(body, event, was_nonempty)
    doc = _load(body)
    if hooks_nonempty and doc.hooks is not None and not doc.hooks.items:
        assert doc.hooks_index is not None
        body = _delete(body, doc.root, doc.hooks_index)
    return bom + body


# --------------------------------------------------------------------------- inspection


def _iter_registrations(value: Any) -> Iterator[Registration]:
    hooks = value.get("hooks") if isinstance(value, dict) else None
    if not isinstance(hooks, dict):
        return
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        for group in groups:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            ours = [
                h for h in handlers if isinstance(h, dict) and is_ctxmode_command(h.get("command"))
            ]
            for handler in ours:
                command = handler["command"]
                yield Registration(
                    event=event,
                    command=command,
                    timeout=handler.get("timeout"),
                    matcher=group.get("matcher"),
                    shim=shim_of(command) or "",
                    own_group=len(ours) == len(handlers),
                    background=handler.get("async") is True,
                    name=handler["name"] if isinstance(handler.get("name"), str) else None,
                )


def registrations(text: str) -> list[Registration]:
    """ctxmode's handlers registered in a settings text, in file order."""
    return list(_iter_registrations(parse(text)))


def restores(current: str, backup: str | None) -> bool:
    """Whether ``current`` is exactly ``backup`` plus ctxmode's handlers (so that putting
    the backup back removes them and nothing else). A backup holding ctxmode's handlers
    itself is an earlier install's, not the user's: never revived."""
    if backup is None:
        return False
    try:
        if registrations(backup):
            return False
        specs = [reg.spec() for reg in registrations(current)]
        return bool(specs) and merge(backup, specs) == current
    except SettingsError:
        return False


def enabled_plugins(text: str, name: str = "ctxmode") -> list[str]:
    """Keys of ``enabledPlugins`` that enable the plugin ``name`` (``name@marketplace``)."""
    value = parse(text)
    plugins = value.get("enabledPlugins") if isinstance(value, dict) else None
    if not isinstance(plugins, dict):
        return []
    return [key for key, on in plugins.items() if on is True and key.split("@", 1)[0] == name]
