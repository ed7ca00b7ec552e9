"""Copilot CLI permissionRequest hook: let ctxmode's own lookups run (ctxmode.hosts.copilot.lookups).

It touches no store: it reads the request, and prints ``{"behavior":"allow"}`` for a
``ctxmode search`` the snapshot handed the model, nothing otherwise. Like every hook it
exits 0 and writes nothing to stderr, whatever it is fed; an unexpected error goes to the
hooks' log.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))


def _main() -> bytes:
    from ctxmode import hookrun

    if hookrun.disabled(os.environ):
        return b""
    data = sys.stdin.buffer.read(1024 * 1024)
    from ctxmode import fastjson
    from ctxmode.hosts.copilot import lookups

    try:
        request = fastjson.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return b""
    if not isinstance(request, dict):
        return b""
    name = request.get("toolName")
    tool = name if isinstance(name, str) else ""
    return lookups.answer(tool, request.get("toolInput"), lookups.program())


try:
    _out = _main()
except BaseException as _exc:  # fail open: no answer, Copilot decides; the error is logged
    _out = b""
    try:
        from ctxmode import hooklog, paths

        _root = paths.data_root(os.environ)
        if not paths.root_problem(_root):
            hooklog.write(
                os.path.join(_root, "logs"), "ERROR", "permissionRequest", type(_exc).__name__
            )
    except BaseException:
        pass
try:
    if _out:
        sys.stdout.buffer.write(_out)
        sys.stdout.buffer.flush()
except BaseException:
    pass
os._exit(0)
