"""The snapshot as Qwen Code's model reads it: an outline with no angle brackets. Pure.

Qwen Code 0.24.4 replaces every ``<`` and ``>`` of a hook's ``additionalContext`` with
``&lt;`` and ``&gt;`` (``DefaultHookOutput.getAdditionalContext``), and leaves ``&`` as it is.
The ``<session_resume>`` XML would arrive as ``&lt;file path="a.py"/&gt;`` on every line:
a quarter of the bytes markup, the escaped escapes (``&amp;lt;``) unreadable. So the same
snapshot, element for element, is written as an outline whose structure is words, colons,
dashes and indentation::

    session_resume session=54a54534-… compaction=1 events=14 from=… to=…
    preface: Facts recorded by ctxmode …
    search: ctxmode search
    requests (lookup: --session 54a54534 --category prompt):
      - prompt intent=implement: create hello.py and commit it
    files_changed (lookup: --session 54a54534 --type file_edit,file_write,file_delete):
      - file path=hello.py change=create,edit count=2

Text and attribute values are unescaped: a ``<`` the session held (``2>&1``, ``a < b``) is
escaped by Qwen once, as ``&gt;``, which models read as the character. A value with a space
is put in double quotes. Anything that is not one well-formed element of ctxmode's XML
(a plain-text context) is returned as it is.
"""

from __future__ import annotations

_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'"}
INDENT = "  "


class _Element:
    __slots__ = ("attrs", "children", "name", "text")

    def __init__(self, name: str, attrs: list[tuple[str, str]]) -> None:
        self.name = name
        self.attrs = attrs
        self.children: list[_Element] = []
        self.text = ""


def unescape(text: str) -> str:
    """XML's five entities and numeric references → characters (others kept as written)."""
    if "&" not in text:
        return text
    out: list[str] = []
    i = 0
    while True:
        amp = text.find("&", i)
        semi = text.find(";", amp + 1) if amp != -1 else -1
        if amp == -1 or semi == -1:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:amp])
        name = text[amp + 1 : semi]
        if name in _ENTITIES:
            out.append(_ENTITIES[name])
        elif (
            name.startswith("#x")
            and name[2:]
            and all(c in "0123456789abcdefABCDEF" for c in name[2:])
        ):
            out.append(chr(int(name[2:], 16)))
        elif name.startswith("#") and name[1:].isdigit():
            out.append(chr(int(name[1:])))
        else:
            out.append(text[amp : semi + 1])
        i = semi + 1


def _attrs(body: str) -> list[tuple[str, str]] | None:
    """``a="1" b='x y'`` → [(a, 1), (b, x y)], or None if it is not that."""
    found: list[tuple[str, str]] = []
    i, n = 0, len(body)
    while True:
        while i < n and body[i] in " \t\r\n":
            i += 1
        if i >= n:
            return found
        eq = body.find("=", i)
        if eq == -1:
            return None
        name = body[i:eq].strip()
        j = eq + 1
        while j < n and body[j] in " \t\r\n":
            j += 1
        if not name or j >= n or body[j] not in "\"'":
            return None
        end = body.find(body[j], j + 1)
        if end == -1:
            return None
        found.append((name, unescape(body[j + 1 : end])))
        i = end + 1


def parse(xml: str) -> _Element | None:
    """ctxmode's snapshot XML → its element tree, or None when it is not one element."""
    root: _Element | None = None
    stack: list[_Element] = []
    i, n = 0, len(xml)
    while i < n:
        lt = xml.find("<", i)
        if lt == -1:
            lt = n
        text = xml[i:lt]
        if text.strip():
            if not stack:
                return None  # text outside the root
            stack[-1].text += unescape(text)
        if lt == n:
            break
        if xml.startswith("<!--", lt):
            end = xml.find("-->", lt)
            if end == -1:
                return None
            i = end + 3
            continue
        if xml.startswith("<?", lt):
            end = xml.find("?>", lt)
            if end == -1:
                return None
            i = end + 2
            continue
        gt = xml.find(">", lt)
        if gt == -1:
            return None
        tag = xml[lt + 1 : gt]
        i = gt + 1
        if tag.startswith("/"):
            if not stack or stack[-1].name != tag[1:].strip():
                return None
            stack.pop()
            continue
        closed = tag.endswith("/")
        if closed:
            tag = tag[:-1]
        name, _, rest = tag.strip().partition(" ")
        attrs = _attrs(rest)
        if not name or attrs is None:
            return None
        element = _Element(name, attrs)
        if stack:
            stack[-1].children.append(element)
        elif root is None:
            root = element
        else:
            return None  # a second root
        if not closed:
            stack.append(element)
    if stack or root is None or xml[i:].strip():
        return None
    return root


def _value(value: str) -> str:
    """An attribute value as the outline writes it: quoted when it holds a space or is empty."""
    value = " ".join(value.split())
    if not value or " " in value or "=" in value:
        return '"' + value.replace('"', '\\"') + '"'
    return value


def _head(element: _Element) -> str:
    parts = [element.name] + [f"{k}={_value(v)}" for k, v in element.attrs]
    return " ".join(parts)


def _text_lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").split("\n") if line.strip()]


def _lines(element: _Element, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    lookup = next((c for c in element.children if c.name == "lookup" and not c.children), None)
    children = [c for c in element.children if c is not lookup]
    head = _head(element)
    if lookup is not None:
        head += f" (lookup: {' '.join(lookup.text.split())})"
    text = _text_lines(element.text)
    bullet = "- " if depth > 1 else ""
    if not children:
        if not text:
            out.append(f"{pad}{bullet}{head}")
        elif len(text) == 1:
            out.append(f"{pad}{bullet}{head}: {text[0].strip()}")
        else:
            out.append(f"{pad}{bullet}{head}:")
            out.extend(f"{pad}{INDENT}{line}" for line in text)
        return
    out.append(f"{pad}{bullet}{head}:")
    out.extend(f"{pad}{INDENT}{line}" for line in text)
    for child in children:
        _lines(child, depth + 1, out)


def outline(text: str) -> str:
    """A snapshot (``<session_resume>…``) as an outline without angle brackets; any other
    text unchanged."""
    if not text.lstrip().startswith("<"):
        return text
    root = parse(text)
    if root is None:
        return text
    out = [_head(root)]
    out.extend(_text_lines(root.text))
    for child in root.children:
        _lines(child, 1, out)
    return "\n".join(out) + "\n"
