"""JSON for the hook hot path without importing :mod:`json`.

``import json`` pulls in ``re``, ``enum`` and friends: about 10 ms per process, as
much as the bare interpreter start. The C accelerator ``_json`` ships the same
scanner and string encoder, so we drive it directly. Behaviour matches
``json.loads``/``json.dumps(ensure_ascii=False, separators=(",", ":"))`` for the
types hooks handle (dict, list, str, int, float, bool, None); the CLI uses orjson.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs ~20 ms to import: never at run time here
    from typing import Any


def _accelerator() -> Any:
    try:  # CPython always has it; the fallback keeps other interpreters working.
        return __import__("_json")
    except ImportError:  # pragma: no cover
        return None


_c: Any = _accelerator()


class JSONDecodeError(ValueError):
    pass


def _parse_constant(name: str) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _Context:
    # The attributes ``_json.make_scanner`` reads from its context object.
    strict = False  # control characters inside strings happen in real tool output
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_parse_constant)
    memo: dict[str, str] = {}  # noqa: RUF012 - the scanner's key cache, cleared per call


_WS = " \t\n\r"
_scanner: Any = _c.make_scanner(_Context()) if _c is not None else None


def loads(text: str | bytes) -> Any:
    """Parse one JSON document; raise :class:`JSONDecodeError` on anything else."""
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JSONDecodeError(f"not UTF-8: {exc}") from None
    if _scanner is None:  # pragma: no cover
        import json

        try:
            return json.loads(text, strict=False)
        except json.JSONDecodeError as exc:
            raise JSONDecodeError(str(exc)) from None
    n = len(text)
    i = 0
    while i < n and text[i] in _WS:
        i += 1
    try:
        value, end = _scanner(text, i)
    except StopIteration:
        raise JSONDecodeError(f"expected a value at {i}") from None
    except (ValueError, RecursionError) as exc:
        raise JSONDecodeError(str(exc)) from None
    except SystemError:
        # The C scanner builds its error from json.decoder.JSONDecodeError, looked up in
        # sys.modules; without the json package loaded it returns NULL with no exception
        # set, which CPython reports as SystemError. It still means "malformed".
        raise JSONDecodeError(f"malformed JSON near {i}") from None
    finally:
        _Context.memo.clear()
    while end < n and text[end] in _WS:
        end += 1
    if end != n:
        raise JSONDecodeError(f"extra data at {end}")
    return value


def loads_data(text: str) -> Any:
    """:func:`loads` for a str that starts with its value, as an event's stored ``data``
    does: the scanner is called at once. A snapshot reads a thousand of them, and the
    checks :func:`loads` makes first cost twice the scan (``ctxmode bench``)."""
    if _scanner is None:  # pragma: no cover
        return loads(text)
    try:
        value, end = _scanner(text, 0)
    except (StopIteration, ValueError, RecursionError, SystemError):
        return loads(text)  # white space first, or malformed: loads says which
    finally:
        _Context.memo.clear()
    if end != len(text):
        return loads(text)  # white space after it is fine; anything else is an error
    return value


def _encode_str(s: str) -> str:
    if _c is not None:
        encoded: str = _c.encode_basestring(s)
        return encoded
    import json  # pragma: no cover

    return json.dumps(s, ensure_ascii=False)  # pragma: no cover


def dumps(obj: Any) -> str:
    """Compact JSON, non-ASCII kept as is, keys in insertion order."""
    parts: list[str] = []
    _write(obj, parts.append)
    return "".join(parts)


def _write(obj: Any, out: Any) -> None:
    if isinstance(obj, str):
        out(_encode_str(obj))
    elif obj is None:
        out("null")
    elif obj is True:
        out("true")
    elif obj is False:
        out("false")
    elif isinstance(obj, int):
        out(int.__repr__(obj))
    elif isinstance(obj, float):
        if obj != obj or obj in (float("inf"), float("-inf")):
            out("null")  # not representable in JSON; never worth failing a hook over
        else:
            out(float.__repr__(obj))
    elif isinstance(obj, dict):
        out("{")
        first = True
        for key, value in obj.items():
            if not first:
                out(",")
            first = False
            out(_encode_str(key if isinstance(key, str) else str(key)))
            out(":")
            _write(value, out)
        out("}")
    elif isinstance(obj, (list, tuple)):
        out("[")
        for index, value in enumerate(obj):
            if index:
                out(",")
            _write(value, out)
        out("]")
    else:
        out(_encode_str(str(obj)))


def scan_string(text: str, start: int) -> str | None:
    """Decode the JSON string whose body starts at ``start`` (after the quote).

    Returns None when the string is cut off (e.g. at the end of a truncated head).
    """
    try:
        if _c is not None:
            value: str = _c.scanstring(text, start, False)[0]
            return value
        import json  # pragma: no cover

        fallback: str = json.decoder.scanstring(text, start, False)[0]  # type: ignore[attr-defined]  # pragma: no cover
        return fallback  # pragma: no cover
    except (ValueError, IndexError, SystemError):  # SystemError: see loads()
        return None
