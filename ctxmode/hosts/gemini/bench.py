"""``ctxmode bench``: the Gemini CLI's hook calls, as Gemini makes them (``--host gemini``).

AfterTool of a failed command, and BeforeModel, which runs before *every* model request
with the whole conversation on stdin: on a 1 MiB request without a compression summary
(nothing to do: about one interpreter start, issue 24) and with one (the snapshot, built
once, then served from the cache). CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os
from collections.abc import Set
from typing import Any

from ctxmode.bench.cases import TOOL_TARGET, Case, HostCommands
from ctxmode.bench.results import Sample

# A case's "event" for Gemini's hook command of that event (Gemini's event names).
GEMINI = "gemini:"
# Payloads made at run time, too big for the bundled file: BeforeModel's stdin is the whole
# conversation (GEMINI_REQUEST_BYTES of it), without and with a compression summary.
GEMINI_PLAIN = "gemini_model_plain"
GEMINI_SUMMARY = "gemini_model_summary"
GEMINI_REQUEST_BYTES = 1 * 1024 * 1024
# Gemini's BeforeModel runs before every model request: with nothing to add it should cost
# about one interpreter start (issue 24).
MODEL_TARGET = (1.3, 1.8)

# In the order of a session. BeforeModel with a summary claims the session's compaction
# snapshot once (building it in the first round, serving it from the cache after).
CASES: tuple[Case, ...] = (
    Case("Gemini BeforeModel, no summary", GEMINI + "BeforeModel", GEMINI_PLAIN, *MODEL_TARGET),
    Case("Gemini BeforeModel, snapshot", GEMINI + "BeforeModel", GEMINI_SUMMARY, 3.5),
    Case("Gemini AfterTool run_shell_command", GEMINI + "AfterTool", "gemini_shell", *TOOL_TARGET),
)

# Gemini CLI 0.61.0's AfterTool of a failed command (tests/fixtures/gemini-cli-0.61.0/
# AfterTool.run_shell_command.exit3.json, its command numbered): the failure is known from
# "Exit Code: N" in the text only.
GEMINI_SHELL: dict[str, Any] = {
    "session_id": "@SESSION@",
    "transcript_path": "@PROJECT@/.gemini-session.jsonl",
    "cwd": "@PROJECT@",
    "hook_event_name": "AfterTool",
    "timestamp": "2026-12-05T07:01:19.123Z",
    "tool_name": "run_shell_command",
    "tool_input": {"command": "pytest tests/test_ledger_@N@.py", "description": "run the tests"},
    "tool_response": {
        "llmContent": "<untrusted_context>\nOutput: 1 failed in 0.02s\nExit Code: 1\n"
        "Process Group PGID: 3576\n</untrusted_context>",
        "returnDisplay": "1 failed in 0.02s",
    },
}
PAYLOADS: dict[str, dict[str, Any]] = {"gemini_shell": GEMINI_SHELL}


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The commands ``ctxmode install --host gemini`` would write, run by ``python``
    (Gemini's event names; BeforeModel has a shim of its own)."""
    from ctxmode.hosts.gemini.install import hook_specs

    found = {GEMINI + spec.event: spec.command for spec in hook_specs(python)}
    return HostCommands(found, python)


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    """The BeforeModel requests the run needs, written to files (sent as they are)."""
    files = {}
    for key, summary in ((GEMINI_PLAIN, False), (GEMINI_SUMMARY, True)):
        if key not in wanted:
            continue
        files[key] = os.path.join(scratch, f"{key}.json")
        with open(files[key], "wb") as handle:
            handle.write(gemini_request(project, session, summary))
    return files


def check(case: Case, sample: Sample) -> list[str]:
    """The proof BeforeModel did its work: one snapshot after the summary, nothing else."""
    if case.payload == GEMINI_SUMMARY and sample.stdout.count(b"<session_resume ") != 1:
        return ["appended no <session_resume> snapshot (or more than one)"]
    if case.payload == GEMINI_PLAIN and sample.stdout:
        return [f"printed {sample.stdout[:80]!r} for a request with no summary"]
    return []


def gemini_request(project: str, session: str, summary: bool, size: int | None = None) -> bytes:
    """A BeforeModel stdin of ``size`` bytes: a long conversation (turns of prose and code),
    with the compression's ``<state_snapshot>`` summary first when ``summary``."""
    size = size or GEMINI_REQUEST_BYTES
    first = "<session_context>\nThis is the Gemini CLI.\n</session_context>"
    if summary:
        first += (
            "<state_snapshot>\nThe user and the assistant worked on the ledger.\n</state_snapshot>"
        )
    messages = [
        {"role": "user", "content": first},
        {"role": "model", "content": "Got it. Thanks for the additional context!"},
    ]
    turn = 0
    body = len(first) + 200
    while body < size:
        turn += 1
        text = (
            f"Step {turn}: read src/ledger/part_{turn}.py and fix the rounding.\n"
            + "def total(entries):\n    return round(sum(e.amount for e in entries), 2)\n" * 20
        )
        messages.append({"role": "user" if turn % 2 else "model", "content": text})
        body += len(text) + 40
    document = {
        "session_id": session,
        "transcript_path": f"{project}/.gemini-session.jsonl",
        "cwd": project,
        "hook_event_name": "BeforeModel",
        "timestamp": "2026-12-05T07:01:18.428Z",
        "llm_request": {
            "model": "gemini-3.8-flash",
            "messages": messages,
            "config": {"temperature": 1, "topP": 0.95, "topK": 64},
        },
    }
    return json.dumps(document).encode("utf-8")
