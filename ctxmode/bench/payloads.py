"""The sandbox a run works in: the bundled payloads (filled in for a throwaway project),
the 20 MB Write, the environment Claude Code gives a hook, and a session seeded with
1,000 events by the real extractors."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

import ctxmode
from ctxmode.bench.cases import BIG_PAYLOAD_BYTES, SEED_EVENTS, SEED_SOURCE, SESSION_ID

PAYLOADS_FILE = os.path.join(os.path.dirname(ctxmode.__file__), "data", "bench_payloads.json")


def load_payloads() -> dict[str, Any]:
    with open(PAYLOADS_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    data["payloads"].setdefault("gemini_shell", GEMINI_SHELL)
    return data


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


def gemini_request(project: str, session: str, summary: bool, size: int | None = None) -> bytes:
    """A BeforeModel stdin of ``size`` bytes: a long conversation (turns of prose and code),
    with the compression's ``<state_snapshot>`` summary first when ``summary``."""
    from ctxmode.bench.cases import GEMINI_REQUEST_BYTES

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


def render(template: Mapping[str, Any], project: str, session: str, n: int) -> bytes:
    """A bundled payload with its placeholders filled in, as the bytes sent on stdin."""
    text = json.dumps(template, ensure_ascii=False)
    text = (
        text.replace("@PROJECT@", json.dumps(project)[1:-1])
        .replace("@SESSION@", session)
        .replace("@N@", str(n))
    )
    return text.encode("utf-8")


def big_payload(project: str, session: str, size: int = BIG_PAYLOAD_BYTES) -> bytes:
    """A Write of a ``size``-byte file: the payload that tests the memory bound."""
    head = json.dumps(
        {
            "session_id": session,
            "transcript_path": f"{project}/.transcript.jsonl",
            "cwd": project,
            "permission_mode": "default",
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": f"{project}/data/big.csv", "content": ""},
        }
    )
    # Splice the content in as bytes: building a 20 MB str through json would cost more.
    cut = head.rindex('""')
    body = head[: cut + 1].encode() + b"x" * size + head[cut + 1 :].encode()
    return body[:-1] + b', "tool_response": {"type": "create"}, "tool_use_id": "toolu_big"}'


def hook_env(home: str, project: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment Claude Code gives a hook, pointed at the throwaway data root."""
    source = os.environ if base is None else base
    env = {
        k: v for k, v in source.items() if not k.startswith(("CLAUDE_", "CLAUDECODE", "CTXMODE_"))
    }
    env.update(CTXMODE_HOME=home, CLAUDE_PROJECT_DIR=project, CLAUDECODE="1")
    return env


def seed_session(
    env: Mapping[str, str], project: str, payloads: Mapping[str, Any], events: int = SEED_EVENTS
) -> int:
    """Fill the bench session with ``events`` events made by the real extractors.

    In-process (not through hooks: 1,000 processes would take a minute); timestamps a
    few seconds apart ending now. Returns the session's event count.
    """
    from ctxmode import paths, payload
    from ctxmode.extract import extract
    from ctxmode.store import Store, iso_utc

    path = paths.store_path(project, env)
    templates = [payloads["payloads"][name] for name in payloads["seed"]]
    start = time.time() - events * 5.0
    store = Store.open(path)
    try:
        n = 0
        count = 0
        while count < events and n < events * 10:
            raw = json.loads(render(templates[n % len(templates)], project, SESSION_ID, n))
            inp = payload.from_dict(raw)
            inp.project_dir = project
            batch = extract(inp)
            for event in batch:
                # Not the hook's name: the check after the run counts what hooks stored.
                event.source_hook = SEED_SOURCE
            store.add_events(
                SESSION_ID,
                batch,
                source_hook=SEED_SOURCE,
                project_dir=project,
                now=iso_utc(start + n * 5.0),
                max_events=events,
            )
            count = store.event_count(SESSION_ID)
            n += 1
    finally:
        store.close()
    return count
