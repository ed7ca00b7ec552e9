"""File tools → ``file`` events (and ``rule`` events for instruction files).

Paths and small counts, and of what a tool wrote an excerpt (``excerpt``: the head and
tail of the new text, a few hundred characters, masked), so that "which rounding mode did
we switch to" or "what did we put in config.json" is one search away. Whole files never
reach an extractor: ``extract.masked`` keeps only a masked head of a write's ``content``
and an edit's ``new_string`` (``HEAD_CHARS``), and drops ``originalFile`` and the rest.
"""

from __future__ import annotations

from ctxmode.extract.common import (
    as_dict,
    as_int,
    clip,
    id_str,
    is_output_file,
    is_rule_file,
    masked_excerpt,
    output_excerpt,
    rel_path,
    s,
    trim,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

# At most this many files are recorded from one patch (the rest are one event's worth).
MAX_PATCH_FILES = 50
PATTERN_CHARS = 200
# The excerpt of what a write, an edit or a patch put in a file: its head and tail.
EXCERPT_HEAD = 240
EXCERPT_TAIL = 120
GIVEN_CHARS = 400  # a path as the call gave it (its stored form is bounded the same way)


def excerpt(text: str) -> str:
    """The head and tail of the text a tool wrote (:func:`_cut`)."""
    return _cut(text, EXCERPT_HEAD, EXCERPT_TAIL)


def _path(inp: HookInput, raw: str) -> str:
    return rel_path(raw, inp.project_dir, inp.cwd)


def _with_rule(drafts: list[Draft], path: str, rule_type: str) -> list[Draft]:
    if path and is_rule_file(path):
        drafts.append((rule_type, {"path": path}))
    return drafts


def _input_path(inp: HookInput, *keys: str) -> tuple[str, str]:
    """The first path found under ``keys`` in tool_input, then in tool_response, as it
    is stored (relative inside the project, ``/``-separated) and as the call gave it
    when that differs (``""`` when not): what the session shows, which is what an agent
    later quotes and asks about (``C:\\Users\\…``, ``/home/me/proj/src/app.py``)."""
    response = as_dict(inp.tool_response)
    for source in (inp.tool_input, response, as_dict(response.get("file"))):
        for key in keys:
            value = s(source.get(key))
            if value.strip():
                path = _path(inp, value)
                given = value.strip()
                return path, (clip(given, GIVEN_CHARS) if given != path else "")
    return "", ""


def _located(path: str, given: str) -> dict[str, object]:
    """A file event's data to start with: its path, and the path as given when it differs."""
    return {"path": path, "given": given} if given else {"path": path}


def read(inp: HookInput) -> list[Draft]:
    """Read → ``file_read {path, [offset], [limit], [excerpt]}`` (+ ``rule_read``)."""
    path, given = _input_path(inp, "file_path", "filePath", "path")
    if not path:
        return []
    data = _located(path, given)
    for key in ("offset", "limit"):
        value = as_int(inp.tool_input.get(key))
        if value is not None:
            data[key] = value
    # A log is what a command printed; a source file's head is what is asked about.
    returned = output_read(inp) if is_output_file(path) else result_excerpt(inp, "content")
    if returned:
        data["excerpt"] = returned
    return _with_rule([("file_read", data)], path, "rule_read")


def output_read(inp: HookInput) -> str:
    """The excerpt of a log or a captured output a read returned, as of a command's output
    (extract.bash's bounds: head, tail, and the lines from between that look like an
    error or say what was done): the choke point kept it whole, masked, for this."""
    from ctxmode.extract.bash import OUTPUT_HEAD, OUTPUT_MIDDLE, OUTPUT_TAIL

    response = inp.tool_response
    text = response if isinstance(response, str) else ""
    if not text:
        for source in (as_dict(response), as_dict(as_dict(response).get("file"))):
            value = source.get("content")
            if isinstance(value, str):
                text = value
                break
    return masked_excerpt(unnumbered(text), OUTPUT_HEAD, OUTPUT_TAIL, OUTPUT_MIDDLE)


def unnumbered(text: str) -> str:
    """``text`` without the line numbers a read's result shows the model (``  12\tx`` or
    ``12→x``: a transcript's text, where the hooks get the file's own lines), when every
    line has one; else ``text`` as it is."""
    out = []
    for line in text.split("\n"):
        head = line.lstrip(" ")
        digits = len(head) - len(head.lstrip("0123456789"))
        rest = head[digits:]
        if digits == 0 or not (rest == "" or rest[0] in "\t→"):
            return text
        out.append(rest[1:])
    return "\n".join(out)


def result_excerpt(
    inp: HookInput, *keys: str, head: int = EXCERPT_HEAD, tail: int = EXCERPT_TAIL
) -> str:
    """The excerpt of what a read, a search or a fetch returned: the first text under
    ``keys`` in its response (or in the response's ``file``), a string response itself;
    a list (a glob's files) one item per line. The choke point kept a masked head of it
    (extract.RESULT_FIELDS)."""
    response = inp.tool_response
    if isinstance(response, str):
        return _cut(unnumbered(response), head, tail) if response.strip() else ""
    for source in (as_dict(response), as_dict(as_dict(response).get("file"))):
        for key in keys:
            value = source.get(key)
            if isinstance(value, list):
                value = "\n".join(item for item in value if isinstance(item, str))
            if isinstance(value, str) and value.strip():
                return _cut(value, head, tail)
    return ""


def _cut(text: str, head: int, tail: int) -> str:
    """An excerpt of what a tool wrote or returned: cut, not masked again. Extractors get
    the payload masked (extract.masked masked the head it kept whole, before any cut),
    so a write or a read costs one masking pass over it, not two."""
    return trim(output_excerpt(text, head, tail), head + tail + 60)


def write(inp: HookInput) -> list[Draft]:
    """Write → ``file_write {path, [kind]}`` (+ ``rule_edit``)."""
    path, given = _input_path(inp, "file_path", "filePath", "path")
    if not path:
        return []
    data = _located(path, given)
    # The response says whether the file existed; older clients send no response.
    kind = {"create": "create", "update": "overwrite"}.get(
        s(as_dict(inp.tool_response).get("type"))
    )
    if kind:
        data["kind"] = kind
    written = excerpt(s(inp.tool_input.get("content")))
    if written:
        data["excerpt"] = written
    return _with_rule([("file_write", data)], path, "rule_edit")


def _patch_summary(response: dict[str, object]) -> str:
    """``+A -R`` lines from a structuredPatch: what changed, without the text itself."""
    hunks = response.get("structuredPatch")
    if not isinstance(hunks, list) or not hunks:
        return ""
    added = removed = 0
    for hunk in hunks:
        lines = hunk.get("lines") if isinstance(hunk, dict) else None
        if not isinstance(lines, list):
            continue
        for line in lines:
            if isinstance(line, str) and line:
                if line[0] == "+":
                    added += 1
                elif line[0] == "-":
                    removed += 1
    return f"+{added} -{removed}" if added or removed else ""


def edit(inp: HookInput) -> list[Draft]:
    """Edit / MultiEdit → ``file_edit {path, [summary], [edits], [replace_all]}`` (+ ``rule_edit``)."""
    path, given = _input_path(inp, "file_path", "filePath", "path")
    if not path:
        return []
    data = _located(path, given)
    summary = _patch_summary(as_dict(inp.tool_response))
    if summary:
        data["summary"] = summary
    edits = inp.tool_input.get("edits")
    new = s(inp.tool_input.get("new_string"))
    if isinstance(edits, list):  # MultiEdit
        data["edits"] = len(edits)
        if any(isinstance(e, dict) and e.get("replace_all") is True for e in edits):
            data["replace_all"] = True
        new = "\n…\n".join(
            s(e.get("new_string")).strip("\n") for e in edits[:8] if isinstance(e, dict)
        )
    elif inp.tool_input.get("replace_all") is True:
        data["replace_all"] = True
    written = excerpt(new)
    if written:
        data["excerpt"] = written
    return _with_rule([("file_edit", data)], path, "rule_edit")


def notebook_edit(inp: HookInput) -> list[Draft]:
    """NotebookEdit → ``file_edit {path, summary}`` naming the cell operation."""
    path, given = _input_path(inp, "notebook_path", "file_path", "path")
    if not path:
        return []
    response = as_dict(inp.tool_response)
    mode = s(inp.tool_input.get("edit_mode")) or s(response.get("edit_mode")) or "replace"
    cell_type = s(inp.tool_input.get("cell_type")) or s(response.get("cell_type"))
    # For an insert the response names the new cell; the input names its neighbour.
    cell = id_str(response.get("cell_id")) or id_str(inp.tool_input.get("cell_id"))
    words = [mode, cell_type, "cell", cell] if cell_type else [mode, "cell", cell]
    data = _located(path, given)
    data["summary"] = clip(" ".join(w for w in words if w), 120)
    return _with_rule([("file_edit", data)], path, "rule_edit")


# -- apply_patch-style tools ---------------------------------------------------------------

_PATCH_HEADERS = (
    ("*** Update File:", "file_edit"),
    ("*** Add File:", "file_write"),
    ("*** Delete File:", "file_delete"),
)
_MOVE = "*** Move to:"


def patch_text(tool_input: dict[str, object]) -> str:
    """The patch text inside an apply_patch-style input (any string field holding one)."""
    candidates: list[object] = list(tool_input.values())
    for value in candidates:
        if isinstance(value, list):  # e.g. {"command": ["apply_patch", "<patch>"]}
            candidates.extend(v for v in value if isinstance(v, str))
        elif (
            isinstance(value, str)
            and "*** " in value
            and (
                "*** Update File:" in value
                or "*** Add File:" in value
                or "*** Delete File:" in value
            )
        ):
            return value
    return ""


def _patch_files(text: str) -> list[tuple[str, str]]:
    """``(event type, raw path)`` for every file header in a patch, in order.

    Walks header lines with ``str.find`` so a large patch is scanned once, in C, without
    splitting it into lines.
    """
    found: list[tuple[str, str]] = []
    pos = 0
    n = len(text)
    while pos < n and len(found) < MAX_PATCH_FILES:
        start = text.find("*** ", pos)
        if start < 0:
            break
        end = text.find("\n", start)
        end = n if end < 0 else end
        pos = end + 1
        if start and text[start - 1] != "\n":
            continue  # not at the start of a line: patch content, not a header
        line = text[start:end].rstrip("\r")
        if line.startswith(_MOVE) and found and found[-1][0] == "file_edit":
            # "*** Update File: a" + "*** Move to: b": a rename; the file now lives at b.
            found[-1] = ("file_edit", line[len(_MOVE) :].strip())
            continue
        for header, type_ in _PATCH_HEADERS:
            if line.startswith(header):
                raw = line[len(header) :].strip()
                if raw:
                    found.append((type_, raw))
                break
    return found


def _patch_added(text: str, limit: int = 1024) -> dict[str, str]:
    """The lines a patch adds to each file (without their ``+``), at most ``limit``
    characters per file; read from the patch's first 64 KB."""
    added: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text[: 64 * 1024].split("\n"):
        if line.startswith(_MOVE) and current is not None:
            added[line[len(_MOVE) :].strip()] = current  # the file now lives there
        elif line.startswith("*** "):
            current = None
            for header, _type in _PATCH_HEADERS:
                if line.startswith(header):
                    current = added.setdefault(line[len(header) :].strip(), [])
        elif current is not None and line.startswith("+") and sum(map(len, current)) < limit:
            current.append(line[1:].rstrip("\r"))
    return {path: "\n".join(lines) for path, lines in added.items() if lines}


def apply_patch(inp: HookInput) -> list[Draft]:
    """A patch in ``*** Begin Patch`` form → one file event per file it touches, with an
    excerpt of the lines it adds."""
    drafts: list[Draft] = []
    seen: set[tuple[str, str]] = set()
    text = patch_text(inp.tool_input)
    added = _patch_added(text) if "\n+" in text else {}
    for type_, raw in _patch_files(text):
        path = _path(inp, raw)
        if not path or (type_, path) in seen:
            continue
        seen.add((type_, path))
        data: dict[str, object] = {"path": path}
        if type_ == "file_write":
            data["kind"] = "create"
        written = excerpt(added.get(raw, ""))
        if written:
            data["excerpt"] = written
        drafts.append((type_, data))
        _with_rule(drafts, path, "rule_edit")
    return drafts


# -- searches --------------------------------------------------------------------------


def glob(inp: HookInput) -> list[Draft]:
    """Glob → ``file_search {tool: Glob, pattern, [path], [matches]}``."""
    return _search(inp, inp.tool_name or "glob", ("numFiles",))


def grep(inp: HookInput) -> list[Draft]:
    """Grep → ``file_search {tool: Grep, pattern, [path], [matches]}``."""
    # What a "match" is depends on the output mode: files, counted matches, or lines.
    mode = s(inp.tool_input.get("output_mode")) or s(as_dict(inp.tool_response).get("mode"))
    keys = {
        "count": ("numMatches", "numFiles"),
        "content": ("numLines", "numFiles"),
    }.get(mode, ("numFiles",))
    return _search(inp, inp.tool_name or "grep", keys)


def _search(inp: HookInput, tool: str, count_keys: tuple[str, ...]) -> list[Draft]:
    pattern = s(inp.tool_input.get("pattern"))
    if not pattern.strip():
        return []
    data: dict[str, object] = {"tool": tool, "pattern": clip(pattern, PATTERN_CHARS)}
    where = s(inp.tool_input.get("path"))
    if where.strip():
        data["path"] = _path(inp, where)
    response = as_dict(inp.tool_response)
    for key in count_keys:
        count = as_int(response.get(key))
        if count is not None:
            data["matches"] = count
            break
    found = result_excerpt(inp, "content", "filenames")
    if found:
        data["excerpt"] = found
    return [("file_search", data)]
