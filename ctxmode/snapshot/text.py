"""Text as the snapshot takes it in: cleaned to one line (or lines) of characters XML
allows and a reader can see, cut to a length (at a word boundary, or keeping the tail),
measured in UTF-8 bytes. Pure."""

from __future__ import annotations

from ctxmode import redact

ELLIPSIS = "…"


def _legal(c: str) -> bool:
    """XML 1.0 Char, minus C1 controls and DEL (legal but never meaningful here)."""
    o = ord(c)
    return (
        0x20 <= o < 0x7F
        or 0xA0 <= o <= 0xD7FF
        or 0xE000 <= o <= 0xFFFD
        or o >= 0x10000
        or c == "\n"
        or c == "\t"
    )


def clean(s: str) -> str:
    """One line: whitespace runs become one space; characters XML 1.0 forbids are removed;
    invisible and direction-changing characters (bidi overrides, zero-width) are shown as
    ``\\uXXXX`` escapes, so the text reads as what it is."""
    s = " ".join(s.split())
    # ``isprintable`` runs at C speed and is False for every control character, surrogate
    # and non-character (U+FFFE/U+FFFF), so the per-character loop runs only when needed.
    if s.isprintable():
        return s
    return redact.visible("".join([c for c in s if _legal(c)]).strip())


def clean_lines(s: str) -> str:
    """Like :func:`clean`, but keeps line breaks (plans are Markdown); blank lines go."""
    return "\n".join([line for line in map(clean, s.splitlines()) if line])


def pre(s: str, cap: int) -> str:
    """Cut a raw value to a safe working length before cleaning (hostile values are huge)."""
    return s if len(s) <= cap * 4 + 256 else s[: cap * 4 + 256] + ELLIPSIS


def cut(s: str, n: int) -> str:
    """At most ``n`` characters, preferring a word boundary; a cut ends in an ellipsis."""
    if len(s) <= n:
        return s
    head = s[: redact.cut_at(s, n - 1)]  # never inside a [REDACTED:…] mask
    space = head.rfind(" ", (n * 3) // 4)
    if space > 0:
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def cut_tail(s: str, n: int) -> str:
    """At most ``n`` characters keeping the end: a path's file name says the most."""
    if len(s) <= n:
        return s
    return ELLIPSIS + s[redact.cut_from(s, len(s) - n + 1) :]


def nbytes(s: str) -> int:
    # ``isascii`` is O(1) on CPython: the common case costs no encoding.
    return len(s) if s.isascii() else len(s.encode("utf-8"))
