"""Background capture through the real client: install.sh registers the capture hooks
with ``"async": true`` (the client on PATH has background hooks), the agent goes on
without waiting for them, and still every call is stored, in the calls' order, and the
last one is in the snapshot of a compaction run right after ``claude -p`` ended (which
sends SIGTERM to the hooks still running, see ctxmode.inflight)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.harness import Harness
from tests.e2e.mock_api import Steps, call, say

pytestmark = pytest.mark.e2e

CALLS = 40
FAILING = "cat w/needed.txt"


def _capture_handlers(settings: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        handler
        for event in ("PostToolUse", "PostToolUseFailure")
        for group in settings["hooks"][event]
        for handler in group["hooks"]
    ]


def background_session(proj: Path) -> tuple[list[Any], list[str]]:
    """40 tool calls, one per request: writes, a failing check, the file it wanted, the
    check again (passing), more writes, and last a write of ``last_call.txt``."""
    steps: list[Any] = []
    written: list[str] = []
    for n in range(CALLS - 4):
        if n == 18:
            steps.append(call("Bash", command=FAILING, description="check the file"))
            steps.append(call("Write", file_path=str(proj / "w/needed.txt"), content="ok\n"))
            written.append("w/needed.txt")
            steps.append(call("Bash", command=FAILING, description="check the file again"))
        path = f"w/f_{n:02d}.txt"
        steps.append(call("Write", file_path=str(proj / path), content=f"{n}\n"))
        written.append(path)
    steps.append(call("Write", file_path=str(proj / "w/last_call.txt"), content="last\n"))
    written.append("w/last_call.txt")
    assert len(steps) == CALLS
    return steps, written


def test_background_capture_stores_every_call_in_order_and_the_last_in_the_snapshot(
    e2e: Harness,
) -> None:
    h = e2e
    handlers = _capture_handlers(h.ctx.settings)
    assert handlers and all(
        hd.get("async") is True and hd["command"].endswith(" --background") for hd in handlers
    ), f"install.sh did not register the captures in the background: {handlers}"

    proj = h.project("background")
    steps, written = background_session(proj)
    h.serve(Steps(*steps, say("All done.")), max_requests=CALLS + 10)
    run = h.claude_p("Write the files", proj, timeout=240)
    sid = run.session_id
    # At once: the last captures may still be running (or were sent SIGTERM at the exit).
    h.claude_p("/compact", proj, resume=sid)

    session = h.session(proj, sid)
    writes = [json.loads(e["data"])["path"] for e in session["events"] if e["type"] == "file_write"]
    assert writes == written, (
        f"{len(set(written) - set(writes))} writes missing, or out of the calls' order: {writes}"
    )
    # The failure, then its resolution by the rerun, in the calls' order. (A capture that
    # gave up waiting for earlier ones, on a loaded machine, records its resolution "unsure"
    # under its own key: one with no failure of that key resolves nothing. Count by key.)
    keyed = [
        (e["type"], json.loads(e["data"]).get("key"))
        for e in session["events"]
        if e["type"] in ("tool_error", "error_resolved")
    ]
    assert keyed.count(("tool_error", FAILING)) == 1, keyed
    assert keyed.count(("error_resolved", FAILING)) == 1, keyed
    assert keyed.index(("tool_error", FAILING)) < keyed.index(("error_resolved", FAILING))
    assert [k for k in keyed if k[0] == "tool_error"] == [("tool_error", FAILING)], keyed

    resumes = [r for r in session["resumes"] if r.get("kind", "compact") == "compact"]
    assert len(resumes) == 1, session["resumes"]
    snapshot = resumes[0]["snapshot"]
    assert "last_call.txt" in snapshot, snapshot
    assert "<errors" not in snapshot, snapshot  # the failure was resolved by its rerun
    assert not (h.data_root / "inflight").exists() or not list(
        (h.data_root / "inflight").iterdir()
    ), "an in-flight marker was left behind"
    h.assert_clean()
