"""What a hook handler needs besides its input: environment, paths, clock, deadline.

Its own module so that the harness (``hookrun``) and the handlers both import it and
neither imports the other: ``hookrun`` calls ``handlers.handle``, never the reverse.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping


class Context:
    """What a handler needs besides the input: environment, paths, clock, deadline."""

    __slots__ = ("deadline", "env", "log_dir", "root", "started", "store_path")

    def __init__(self, env: Mapping[str, str], root: str, store_path: str, deadline: float):
        self.env = env
        self.root = root
        self.store_path = store_path
        self.log_dir = os.path.join(root, "logs")
        self.started = time.monotonic()
        self.deadline = deadline

    def remaining(self) -> float:
        return self.deadline - (time.monotonic() - self.started)
