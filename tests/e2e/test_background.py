"""Background capture through the real client: install.sh registers the capture hooks
with ``"async": true`` (the client on PATH has background hooks), the agent goes on
without waiting for them, and still every call is stored, in the calls' order, and the
last one is in the snapshot of a compaction run right after ``claude -p`` ended (which
sends SIGTERM to the hooks still running, see ctxmode.inflight)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.fswatch import wait_for_entry
from tests.e2e.harness import Harness
from tests.e2e.mock_api import Reply, Steps, call, say

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
    writes = [e["data"]["path"] for e in session["events"] if e["type"] == "file_write"]
    assert writes == written, (
        f"{len(set(written) - set(writes))} writes missing, or out of the calls' order: {writes}"
    )
    # The failure, then its resolution by the rerun, in the calls' order. (A capture that
    # gave up waiting for earlier ones, on a loaded machine, records its resolution "unsure"
    # under its own key: one with no failure of that key resolves nothing. Count by key.)
    keyed = [
        (e["type"], e["data"].get("key"))
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
    assert _markers(h.data_root) == [], "an in-flight marker was left behind"
    h.assert_clean()


def _markers(data_root: Path) -> list[str]:
    """The in-flight markers under the data root (``<call_at>-<pid>``; not the lock files)."""
    folder = data_root / "inflight"
    return sorted(p.name for p in folder.iterdir() if "-" in p.name) if folder.exists() else []


def test_a_p_run_that_ends_with_its_last_capture_running_keeps_its_end_snapshot(
    e2e: Harness,
) -> None:
    """`claude -p` whose final answer comes while the last capture is still running: the
    client sends it SIGTERM and (2.1.197) runs no SessionEnd hook once it is gone. The
    capture stores its events and takes the end snapshot itself.

    The capture is kept running until the client ends by a marker of an earlier call that
    this test holds (the capture waits for it, ORDER_BOUND, until the SIGTERM); the mock
    gives the final answer once the capture holds its own marker (its SIGTERM handler is
    in place then), as a model's answer takes longer than a capture's start."""
    import fcntl

    h = e2e
    proj = h.project("ending")
    folder = h.data_root / "inflight"
    folder.mkdir(mode=0o700)
    fake = f"{1:020d}-{os.getpid()}"
    held = os.open(folder / fake, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)

    def final_once_the_capture_runs(req: object) -> Reply:
        # Woken by the capture's marker's creation (inotify); the bound only ends a hang.
        wait_for_entry(folder, lambda name: "-" in name and name != fake, bound=60)
        return say("Done.")

    try:
        target = proj / "notes" / "plan.md"
        h.serve(Steps(call("Write", file_path=str(target), content="# plan\n"),
                      final_once_the_capture_runs))  # fmt: skip
        run = h.claude_p("Write the plan file.", proj)
    finally:
        os.unlink(folder / fake)
        os.close(held)
    session = h.session(proj, run.session_id)
    writes = [e["data"]["path"] for e in session["events"] if e["type"] == "file_write"]
    assert writes == ["notes/plan.md"], session["events"]
    ends = [r for r in session["resumes"] if r.get("kind") == "end" and not r.get("consumed")]
    assert len(ends) == 1, session["resumes"]
    assert "notes/plan.md" in ends[0]["snapshot"]
    assert "when the client ended" in h.log_path.read_text(), "the capture was not stopped"
    assert _markers(h.data_root) == []
    h.assert_clean()
