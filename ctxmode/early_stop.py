"""The client's stop, noted from the first instant of a background capture.

At the end of `claude -p` the client sends SIGTERM to the background captures still
running (see :func:`ctxmode.inflight.stopping`). Python's default for SIGTERM is to die,
and a capture spends about a third of its life importing the hook harness before
:func:`ctxmode.hookrun.main` installs the handler that stores its events: on a busy
machine the stop can land in that time and the call's payload dies unread in the pipe.
The capture shims import this module before the harness; it only notes the stop, and
``main`` acts on it once its own handler is in place.
"""

import sys

# The signals received before hookrun.main took over (one entry per signal).
received: list[int] = []


def _note(signum: int, frame: object) -> None:
    received.append(signum)


if "--background" in sys.argv:  # = hookrun.BACKGROUND_FLAG; foreground hooks are waited for
    import _signal  # type: ignore[import-not-found]  # (signal imports enum)

    _signal.signal(_signal.SIGTERM, _note)
