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
# A real session's transcript (2.1.332): where the Stop case reads the turn's notes from.
TRANSCRIPT_FILE = os.path.join(os.path.dirname(ctxmode.__file__), "data", "bench_transcript.jsonl")


def load_payloads() -> dict[str, Any]:
    """The bundled payload templates, and every host's own (``PAYLOADS`` of its bench part)."""
    from ctxmode import hosts

    with open(PAYLOADS_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    for name in hosts.NAMES:
        for key, template in hosts.part(name, "bench").PAYLOADS.items():
            data["payloads"].setdefault(key, template)
    return data


def render(template: Mapping[str, Any], project: str, session: str, n: int) -> bytes:
    """A bundled payload with its placeholders filled in, as the bytes sent on stdin."""
    text = json.dumps(template, ensure_ascii=False)
    text = (
        text.replace("@PROJECT@", json.dumps(project)[1:-1])
        .replace("@SESSION@", session)
        .replace("@N@", str(n))
        .replace("@TRANSCRIPT@", json.dumps(TRANSCRIPT_FILE)[1:-1])
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
