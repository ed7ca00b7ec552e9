"""Gemini CLI BeforeModel hook: the snapshot after a compression (see ctxmode.hosts.gemini).

It runs before *every* model request with the whole conversation on stdin, and almost
always has nothing to do: only a request whose history holds a compression summary
(``<state_snapshot>``) needs the snapshot appended. So this entry reads stdin as bytes and
looks for that tag before importing anything (run as ``python -I -S``: no site, no
ctxmode); without it the process ends at once, printing nothing.
"""

try:
    import sys

    _data = sys.stdin.buffer.read()
except BaseException:  # no stdin, or a closed one: nothing to do, and nothing to print
    _data = b""
if b"<state_snapshot>" in _data:
    import os

    sys.path.insert(
        0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    )
    from ctxmode.hookrun import main

    main("BeforeModel", host="gemini", stdin=_data)
