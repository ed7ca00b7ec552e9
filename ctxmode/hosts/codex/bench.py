"""``ctxmode bench``: the Codex CLI's hook calls, as Codex makes them (``--host codex``).

The cases run the same shims as Claude Code's with ``--host codex``, on Codex 0.169.0's
payloads (``codex_*`` in ``data/bench_payloads.json``) and a rollout file the late outcomes
are read from (:func:`prepare`). CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os
from collections.abc import Set

from ctxmode.bench.cases import TOOL_TARGET, Case, HostCommands
from ctxmode.bench.results import Sample

# A case's "event" for Codex's hook command of that event.
CODEX = "codex:"

CASES: tuple[Case, ...] = (
    Case("Codex PostToolUse Bash", CODEX + "PostToolUse", "codex_bash", *TOOL_TARGET),
    Case("Codex PostToolUse apply_patch", CODEX + "PostToolUse", "codex_patch", *TOOL_TARGET),
    Case("Codex UserPromptSubmit", CODEX + "UserPromptSubmit", "codex_prompt", 2.5),
)
# Its payload templates are in the bundled file (benchmarks/make_bench_payloads.py).
PAYLOADS: dict[str, dict[str, object]] = {}


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The commands ``ctxmode install --host codex`` would write, run by ``python``."""
    from ctxmode.hosts.codex.install import hook_specs

    found = {CODEX + spec.event: spec.command for spec in hook_specs(python)}
    return HostCommands(found, python)


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    """The rollout file the payloads name (``transcript_path``); no payload made now."""
    _write_rollout(os.path.join(project, ".codex-rollout.jsonl"))
    return {}


def check(case: Case, sample: Sample) -> list[str]:
    return []


def _write_rollout(path: str, calls: int = 50) -> None:
    """A Codex rollout file for the Codex cases: each call and its output, a failure among
    them. The first Codex hook reads it whole (one MAX_READ at most), later ones find
    nothing new: the incremental read's steady state is a stat and an empty read."""
    lines = []
    for i in range(calls):
        call_id = f"call_rollout_{i}"
        code = 2 if i == calls // 2 else 0
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": json.dumps({"cmd": f"pytest tests/test_{i}.py"}),
                    "call_id": call_id,
                },
            }
        )
        lines.append(
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": call_id,
                    "output": f"Process exited with code {code}\nOutput:\nok\n",
                },
            }
        )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(line) + "\n" for line in lines))
