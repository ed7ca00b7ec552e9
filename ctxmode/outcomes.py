"""Tool outcomes a client reports late (Codex: from its rollout file), in order (pure).

Each late outcome is an input of an earlier call: a failure (``PostToolUseFailure``, whose
error events the handler extracted) or a success (``PostToolUse`` whose outcome is known). In
the order they happened, a failure opens its key and a success of the same key resolves it
(``error_resolved``) — the rule the immediate hooks follow on Claude Code.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from ctxmode.events import SessionEvent
    from ctxmode.payload import HookInput


def ordered(
    open_keys: set[str], late: Iterable[HookInput], failures: list[SessionEvent]
) -> list[SessionEvent]:
    """``failures`` (one per failed item, in order) with the resolutions between them.

    ``open_keys``: the session's open error keys before these outcomes; ``late``: the
    outcomes, masked, oldest first.
    """
    from ctxmode.extract.errors import failure_key, resolution

    keys = set(open_keys)
    pending = iter(failures)
    out: list[SessionEvent] = []
    for item in late:
        key = failure_key(item)
        if item.event == "PostToolUseFailure":
            event = next(pending, None)
            if event is not None:
                out.append(event)
            if key:
                keys.add(key)
        elif key and key in keys:
            keys.discard(key)
            out.append(resolution(item, key))
    out.extend(pending)  # none left, unless an extractor made more than one event
    return out
