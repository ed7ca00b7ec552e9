"""``ctxmode bench``: GitHub Copilot CLI's hook calls, as Copilot makes them (``--host copilot``).

postToolUse of a failed command (known only from the ``<shellId: N completed with exit code
C>`` line of its text), userPromptSubmitted, and permissionRequest for one of ctxmode's own
lookups (answered "allow" without opening the store). CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os
from collections.abc import Set
from typing import Any

from ctxmode.bench.cases import TOOL_TARGET, Case, HostCommands
from ctxmode.bench.results import Sample

# A case's "event" for Copilot's hook command of that event (Copilot's event names).
COPILOT = "copilot:"
LOOKUP = "copilot_lookup"  # made by prepare: it names the ctxmode beside the hooks' python

CASES: tuple[Case, ...] = (
    Case("Copilot postToolUse bash", COPILOT + "postToolUse", "copilot_bash", *TOOL_TARGET),
    Case("Copilot userPromptSubmitted", COPILOT + "userPromptSubmitted", "copilot_prompt", 2.5),
    Case("Copilot permissionRequest lookup", COPILOT + "permissionRequest", LOOKUP, 2.0),
)

SESSION_FIELDS: dict[str, Any] = {
    "sessionId": "@SESSION@",
    "timestamp": 1796512139717,
    "cwd": "@PROJECT@",
}
# Copilot CLI 1.0.102's payloads (tests/fixtures/copilot-cli-1.0.102/), the command numbered.
# Copilot's payloads name no event (the shim does); ``hook_event_name`` names it for the
# bench's own checks, and the parse ignores it.
PAYLOADS: dict[str, dict[str, Any]] = {
    "copilot_bash": {
        "hook_event_name": "postToolUse",
        **SESSION_FIELDS,
        "toolName": "bash",
        "toolArgs": {"command": "pytest tests/test_ledger_@N@.py", "description": "run tests"},
        "toolResult": {
            "resultType": "success",
            "textResultForLlm": "1 failed in 0.02s\n<shellId: 3 completed with exit code 1>",
        },
    },
    "copilot_prompt": {
        "hook_event_name": "userPromptSubmitted",
        **SESSION_FIELDS,
        "prompt": "fix the ledger rounding, step @N@",
    },
}
_PYTHON: list[str | None] = [None]  # the interpreter of the commands measured (commands)


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The commands ``ctxmode install --host copilot`` would write, run by ``python``."""
    from ctxmode.hosts.copilot.install import hook_specs

    _PYTHON[0] = python
    found = {COPILOT + spec.event: spec.command for spec in hook_specs(python)}
    return HostCommands(found, python)


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    """The permissionRequest of a lookup, naming the ctxmode the hints would name."""
    if LOOKUP not in wanted:
        return {}
    from ctxmode.handlers import shell_quote
    from ctxmode.hosts.copilot.lookups import program

    command = f"{shell_quote(program(_PYTHON[0]))} search --project {shell_quote(project)} ledger"
    request = {
        "hook_event_name": "permissionRequest",
        "hookName": "permissionRequest",
        **SESSION_FIELDS,
        "sessionId": session,
        "cwd": project,
        "toolName": "bash",
        "toolInput": {"command": command},
        "permissionSuggestions": [],
    }
    path = os.path.join(scratch, f"{LOOKUP}.json")
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(request, handle)
    return {LOOKUP: path}


def check(case: Case, sample: Sample) -> list[str]:
    """A permissionRequest for a lookup must answer "allow" (or it measured a no-op)."""
    if case.payload == LOOKUP and b'"allow"' not in sample.stdout:
        return [f"did not allow ctxmode's own lookup (printed {sample.stdout[:80]!r})"]
    return []
