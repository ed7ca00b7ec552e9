"""The one way the tests make a project, a hook payload, an extraction and a CLI run.

Subprocess runs of the hooks live beside these in ``tests/hooktools.py``; the recorded
payloads in ``tests/fixtures/`` (see ``FIXTURES``). Payloads built here have the shape of
Claude Code 2.1.197's (the fields its hooks send; see the recorded fixtures), so a test that
builds one feeds the code what the client feeds it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from ctxmode import payload
from ctxmode.extract import extract
from tests.hooktools import FIXTURES

PROJECT = "/home/dev/proj"
SESSION = "5f0c1d2e-0000-4000-8000-000000000001"


def make_project(parent: Path, name: str = "proj", *, git: bool = True) -> Path:
    """A project folder; with ``git`` a ``.git`` folder marks it as a repository's root."""
    folder = parent / name
    if git:
        (folder / ".git").mkdir(parents=True)
    else:
        folder.mkdir(parents=True)
    return folder


def hook_payload(
    event: str, *, session_id: str = SESSION, cwd: str = PROJECT, **fields: Any
) -> dict[str, Any]:
    """A hook's stdin as Claude Code sends it: the common fields, then the event's own."""
    return {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/-home-dev-proj/{session_id}.jsonl",
        "cwd": cwd,
        "permission_mode": "default",
        "hook_event_name": event,
        **fields,
    }


def tool_payload(
    tool: str,
    tool_input: Any,
    tool_response: Any = None,
    *,
    event: str = "PostToolUse",
    tool_use_id: str = "toolu_1",
    **fields: Any,
) -> dict[str, Any]:
    """A PostToolUse (or PostToolUseFailure: pass ``event`` and ``error``) payload."""
    extra: dict[str, Any] = {"tool_name": tool, "tool_input": tool_input}
    if event == "PostToolUse":
        extra["tool_response"] = tool_response
    extra["tool_use_id"] = tool_use_id
    return hook_payload(event, **extra, **fields)


def fixture(name: str) -> dict[str, Any]:
    """A recorded fixture file: ``{"event", "client", "hook_env", "payload"}``."""
    record: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return record


def extracted_from(
    raw: dict[str, Any], event: str, project: str = PROJECT
) -> list[tuple[str, dict[str, Any]]]:
    """What the extractors make of a payload: (event type, decoded data) in order."""
    inp = payload.from_dict(raw, event)
    inp.project_dir = project
    return [(e.type, json.loads(e.data)) for e in extract(inp)]


def extracted(
    tool: str,
    tool_input: Any,
    tool_response: Any = None,
    *,
    project: str = PROJECT,
    cwd: str = PROJECT,
    event: str = "PostToolUse",
) -> list[tuple[str, dict[str, Any]]]:
    """The extractors' events of one tool call."""
    raw = tool_payload(tool, tool_input, tool_response, event=event, cwd=cwd, session_id="s")
    return extracted_from(raw, event, project)


def extracted_fixture(name: str, project: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The extractors' events of a recorded payload (its own project dir unless given)."""
    record = fixture(name)
    if project is None:
        project = record.get("hook_env", {}).get("CLAUDE_PROJECT_DIR", PROJECT)
    return extracted_from(record["payload"], record["event"], project)


def cli(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """``ctxmode ARGS`` in-process (click's runner), exceptions raised, not swallowed."""
    from ctxmode.cli import main

    return CliRunner().invoke(main, list(args), input=input, env=env, catch_exceptions=False)


def generation_seed() -> int:
    """The seed of a test that generates its values: fixed by default, so the suite cannot
    flake on a rare draw; ``CTXMODE_RANDOM_SEEDS=1`` (scripts/soak.sh sets it) draws a new
    one each run, and ``CTXMODE_SEED=N`` replays the one a failure printed."""
    import os
    import secrets

    if os.environ.get("CTXMODE_SEED"):
        return int(os.environ["CTXMODE_SEED"])
    if os.environ.get("CTXMODE_RANDOM_SEEDS"):
        return secrets.randbits(32)
    return 20261206
