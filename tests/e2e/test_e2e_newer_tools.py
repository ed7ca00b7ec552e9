"""End to end: the tools newer Claude Code releases offer, across a compaction.

The session enters a worktree (EnterWorktree) and schedules a cron job (CronCreate), then an
auto-compaction happens mid-turn. The first request after it must say where the session
works and that the job is scheduled, with the id the model then deletes it by (CronDelete,
the id taken from the snapshot, as a resumed model would), before it leaves the worktree
(ExitWorktree). Runs on the pinned client (the tools offered outright) and on 2.1.3xx (the
same tools deferred, loaded through ToolSearch).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.e2e.harness import Harness
from tests.e2e.mock_api import Reply, Request, Steps, call, load_tools, say
from tests.e2e.test_e2e import (
    AUTO_COMPACT_ENV,
    HUGE_USAGE,
    events_of,
    first_after,
    no_resume_msg,
    parse,
    snapshots_in,
)

pytestmark = pytest.mark.e2e

TOOLS = ("EnterWorktree", "ExitWorktree", "CronCreate", "CronDelete")
PROMPT = "check the deploy status"


def test_worktree_and_scheduled_job_survive_a_compaction(e2e: Harness) -> None:
    h = e2e
    proj = h.project("newer")
    (proj / ".gitignore").write_text(".claude/\n")
    seen: dict[str, Any] = {}

    def delete_the_job(req: Request) -> Reply:
        received = snapshots_in(req)
        assert received, "no snapshot in the first request after the compaction"
        seen["snapshot"] = received[-1]
        jobs = parse(received[-1]).findall("./tasks/job")
        ids = [j.get("id") for j in jobs if j.get("kind") == "cron"]
        assert ids, f"the snapshot names no cron job:\n{received[-1]}"
        return call("CronDelete", id=ids[0])

    steps = Steps(
        load_tools(*TOOLS),
        call("EnterWorktree", name="fix-login"),
        call("CronCreate", cron="*/5 * * * *", prompt=PROMPT, recurring=True),
        call("Bash", command="git branch --show-current", description="Branch", input_tokens=HUGE_USAGE),
        delete_the_job,
        call("ExitWorktree", action="keep"),
        say("The login fix waits in its worktree; the deploy check is cancelled."),
    )  # fmt: skip
    api = h.serve(steps)
    run = h.claude_p("Fix the login in a worktree and watch the deploy", proj, env=AUTO_COMPACT_ENV)
    sid = run.session_id
    assert len(steps.compactions) == 1, f"no auto-compaction happened:\n{api.dump()}"

    first = first_after(api, steps.compactions[0])
    received = snapshots_in(first)
    assert received, no_resume_msg(first, "the first request after auto-compaction", h)
    root = parse(received[-1])
    env = root.find("environment")
    assert env is not None, received[-1]
    worktree = env.get("worktree") or ""
    assert worktree.endswith("fix-login") and worktree != str(proj), received[-1]
    assert env.get("worktree_branch"), received[-1]
    jobs = root.findall("./tasks/job")
    assert [(j.get("kind"), j.text) for j in jobs] == [("cron", PROMPT)], received[-1]

    session = h.session(proj, sid)
    moves = [e["data"] for e in events_of(session, "worktree_change")]
    assert [m["via"] for m in moves] == ["enter", "exit"], moves
    assert moves[0]["path"] == worktree and moves[1]["path"] == str(proj), moves
    started = [e["data"] for e in events_of(session, "job_start")]
    ended = [e["data"] for e in events_of(session, "job_end")]
    assert [(j["kind"], j["what"]) for j in started] == [("cron", PROMPT)], started
    # The model deleted the job by the id the snapshot gave it.
    assert [(j["kind"], j["id"]) for j in ended] == [("cron", started[0]["id"])], ended
    assert re.fullmatch(r"[0-9a-f]{8}", started[0]["id"]), started
    h.assert_clean()
