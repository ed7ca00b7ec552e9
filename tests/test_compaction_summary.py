"""Issue 14, parts 3 and 4: the client's compaction summary is kept beside the snapshot,
and a compaction loop never gets the same full snapshot again and again.

The hooks run as Claude Code runs them (subprocesses, the client's environment); the
store is read back to see what they did.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxmode import paths
from ctxmode.snapshot.repeat import FULL_DELIVERIES, is_pointer, pointer_since, repeats
from ctxmode.store import Store
from tests.helpers import cli
from tests.hooktools import FIXTURES, hook_env, load_fixture, run_hook

SESSION = "5c0e2b1a-7d3f-4e21-9a0b-1f2e3d4c5b6a"
SUMMARY = (
    "<analysis>The user pasted a token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 once.</analysis>\n"
    "<summary>\n1. Primary Request: fix the rounding in src/invoice/rounding.py.\n"
    "2. The deploy key is AKIAIOSFODNN7EXAMPLE (rotate it).\n</summary>"
)


class World:
    """A project, a data root, and the hooks run against them as processes."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "proj"
        (self.dir / ".git").mkdir(parents=True)
        self.env = hook_env(CTXMODE_HOME=str(tmp_path / "data"), CLAUDE_PROJECT_DIR=str(self.dir))

    def hook(self, event: str, **fields: Any) -> bytes:
        payload = {
            "session_id": SESSION,
            "transcript_path": str(self.dir / "t.jsonl"),
            "cwd": str(self.dir),
            "hook_event_name": event,
        }
        payload.update(fields)
        done = run_hook(event, payload, env=self.env)
        assert (done.returncode, done.stderr) == (0, b""), event
        return done.stdout

    def write(self, name: str) -> None:
        path = str(self.dir / name)
        self.hook(
            "PostToolUse", tool_name="Write", tool_use_id=f"toolu_{name}",
            tool_input={"file_path": path, "content": "x = 1\n"},
            tool_response={"type": "create", "filePath": path},
        )  # fmt: skip

    def compact(self, summary: str | None = None, trigger: str = "auto") -> str:
        """One compaction as the client runs it: PreCompact, SessionStart(compact), then
        PostCompact. Returns what SessionStart handed the model."""
        assert self.hook("PreCompact", trigger=trigger, custom_instructions=None) == b""
        out = self.hook("SessionStart", source="compact")
        if summary is not None:
            assert self.hook("PostCompact", trigger=trigger, compact_summary=summary) == b""
        return str(json.loads(out)["hookSpecificOutput"]["additionalContext"]) if out else ""

    def store(self) -> Store:
        return Store.open(paths.store_path(str(self.dir), self.env), readonly=True)

    def compactions(self) -> list[dict[str, Any]]:
        with self.store() as store:
            return store.compactions(SESSION)


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


# -- PostCompact: the summary, masked, beside its snapshot ----------------------------------


def test_the_summary_is_stored_masked_without_its_analysis(world: World) -> None:
    world.write("rounding.py")
    world.compact(SUMMARY, trigger="manual")
    (row,) = world.compactions()
    assert (row["compact_seq"], row["trigger"], row["origin"]) == (1, "manual", "hook")
    summary = row["summary"]
    assert summary.startswith("1. Primary Request: fix the rounding in src/invoice/rounding.py.")
    assert "AKIAIOSFODNN7EXAMPLE" not in summary and "[REDACTED" in summary
    assert "<analysis>" not in summary and "ghp_" not in summary  # the draft is not kept
    assert "<summary>" not in summary
    with world.store() as store:
        (snapshot,) = [r for r in store.resumes(SESSION) if r["kind"] == "compact"]
    assert snapshot["compact_seq"] == row["compact_seq"]  # they meet on the number


def test_the_recorded_payloads_of_the_client_are_stored(world: World) -> None:
    for name in ("PostCompact.auto.json", "PostCompact.manual.json"):
        payload = load_fixture(FIXTURES / name)
        payload["session_id"] = SESSION
        payload["cwd"] = str(world.dir)
        done = run_hook("PostCompact", payload, env=world.env)
        assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    rows = world.compactions()
    # No PreCompact ran: each summary gets a row of its own, numbered in order.
    assert [(r["compact_seq"], r["trigger"]) for r in rows] == [(1, "auto"), (2, "manual")]
    assert all(r["summary"].startswith("MOCK_SUMMARY_MARKER: the user asked") for r in rows)


def test_a_summary_never_replaces_one_already_stored(world: World) -> None:
    world.write("a.py")
    world.compact("<summary>first</summary>")
    world.hook("PostCompact", trigger="auto", compact_summary="<summary>second</summary>")
    rows = world.compactions()
    assert [(r["compact_seq"], r["summary"]) for r in rows] == [(1, "first"), (2, "second")]


def test_the_importers_rule_keeps_the_hooks_summary(world: World, tmp_path: Path) -> None:
    """``ctxmode import`` writes with COALESCE: whichever comes first stays."""
    world.write("a.py")
    world.compact("<summary>from the hook</summary>")
    path = paths.store_path(str(world.dir), world.env)
    with Store.open(path) as store:
        store.conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, summary, origin, "
            "created_at) VALUES (?, 1, 'auto', 'from the transcript', 'import', 'x') "
            "ON CONFLICT (session_id, compact_seq) DO UPDATE SET "
            "summary = COALESCE(compaction.summary, excluded.summary)",
            (SESSION,),
        )
    assert [r["summary"] for r in world.compactions()] == ["from the hook"]


@pytest.mark.parametrize("summary", [None, "", 42, ["x"], "<summary>   </summary>"])
def test_a_postcompact_without_a_summary_stores_nothing(world: World, summary: object) -> None:
    world.write("a.py")
    world.hook("PreCompact", trigger="auto")
    world.hook("PostCompact", trigger="auto", compact_summary=summary)
    (row,) = world.compactions()
    assert row["summary"] is None


def test_purge_removes_the_summaries(world: World) -> None:
    world.write("a.py")
    world.compact("<summary>private words</summary>")
    path = paths.store_path(str(world.dir), world.env)
    with Store.open(path) as store:
        store.purge_session(SESSION)
    assert world.compactions() == []


# -- the loop policy ------------------------------------------------------------------------


def test_a_compaction_loop_gets_full_full_then_a_pointer(world: World) -> None:
    world.write("billing.py")
    world.hook("UserPromptSubmit", prompt="Fix the billing rounding")
    given = [world.compact() for _ in range(5)]
    kinds = ["pointer" if is_pointer(text) else "full" for text in given]
    assert kinds == ["full"] * FULL_DELIVERIES + ["pointer"] * (5 - FULL_DELIVERIES)
    sizes = [len(text.encode()) for text in given]
    assert sizes == sorted(sizes, reverse=True), sizes  # never grows without new events
    assert given[2] == given[3] == given[4]  # the same bytes each time
    assert pointer_since(given[2]) == 1
    # The search command of the full snapshot, scoped to its session.
    assert " search --project " in given[2] and f"--session {SESSION[:8]}" in given[2]
    assert len(given[2].splitlines()) == 1
    # Every compaction is recorded, with the pointer as its snapshot.
    with world.store() as store:
        resumes = [r for r in store.resumes(SESSION) if r["kind"] == "compact"]
    assert [r["compact_seq"] for r in resumes] == [1, 2, 3, 4, 5]
    assert all(r["consumed"] for r in resumes)


def test_a_new_event_gives_the_full_snapshot_again(world: World) -> None:
    world.write("billing.py")
    first = [world.compact() for _ in range(3)]
    assert is_pointer(first[2])
    world.write("ledger.py")
    again = [world.compact() for _ in range(3)]
    assert [is_pointer(text) for text in again] == [False, False, True]
    assert "ledger.py" in again[0] and "ledger.py" in again[1]
    assert pointer_since(again[2]) == 4


def test_a_snapshot_nobody_received_does_not_count(world: World) -> None:
    """Handed over = claimed: PreCompact twice without a SessionStart in between gave the
    model nothing, so the next compaction still gets the full snapshot."""
    world.write("billing.py")
    world.hook("PreCompact", trigger="auto")
    world.hook("PreCompact", trigger="auto")  # the first one stays unclaimed
    assert not is_pointer(world.compact())


def test_repeats_reads_the_history_newest_first() -> None:
    def full(seq: int, body: str) -> str:
        return (
            f'<session_resume session="s" compaction="{seq}" events="3">{body}</session_resume>\n'
        )

    new = full(9, "A")
    assert repeats([], new) is None
    assert repeats([(2, full(2, "A"), True)], new) is None
    assert repeats([(2, full(2, "A"), True), (1, full(1, "A"), True)], new) == 1
    assert repeats([(2, full(2, "A"), True), (1, full(1, "A"), False)], new) is None
    assert repeats([(2, full(2, "B"), True), (1, full(1, "A"), True)], new) is None
    pointer_row = (3, '<session_resume session="s" unchanged_since="1">p</session_resume>', True)
    assert repeats([pointer_row, (2, full(2, "A"), True), (1, full(1, "A"), True)], new) == 1


# -- what stats and show-snapshot say ---------------------------------------------------------


def test_stats_and_show_snapshot_say_what_the_summary_kept(world: World) -> None:
    world.hook("UserPromptSubmit", prompt="Fix the rounding of invoice totals")
    world.write("rounding.py")
    world.write("ledger.py")
    world.compact(
        "<summary>The user asked: fix the rounding of invoice totals. rounding.py was edited.</summary>"
    )
    world.write("audit.py")
    world.compact()  # PostCompact did not come: no summary for this one
    env = {"CTXMODE_HOME": world.env["CTXMODE_HOME"]}
    result = cli("stats", "--project", str(world.dir), "--json", env=env)
    (session,) = json.loads(result.output)["sessions"]
    first, second = session["compaction_coverage"]
    assert (first["summary_recorded"], first["summary_kept"], first["key_items"]) == (True, 2, 3)
    assert first["restored"] == ["file ledger.py"]
    assert first["trigger"] == "auto" and first["snapshot"] == "full"
    assert (second["summary_recorded"], second["summary_kept"]) == (False, None)
    assert (session["summaries"], session["key_items"], session["key_items_kept"]) == (1, 3, 2)
    text = cli("stats", "--project", str(world.dir), env=env).output
    assert (
        "  summaries    1 recorded; they kept 2 of 3 key items of the snapshots, which "
        "restored the other 1\n"
        "    compaction 1 (auto): the summary kept 2 of 3 key items; the snapshot restored: "
        "file ledger.py\n"
        "    compaction 2 (auto): no summary recorded; the snapshot restored 4 key items: "
    ) in text
    (dumped,) = json.loads(cli("dump", "--json", "--project", str(world.dir), env=env).output)[
        "sessions"
    ]
    assert [(c["compact_seq"], c["summary"]) for c in dumped["compactions"]] == [
        (1, "The user asked: fix the rounding of invoice totals. rounding.py was edited."),
        (2, None),
    ]
    shown = cli("show-snapshot", "--seq", "1", "--project", str(world.dir), env=env).output
    assert shown.splitlines()[1] == (
        "compaction 1 (auto): the summary kept 2 of 3 key items; the snapshot restored: "
        "file ledger.py"
    )


def test_stats_says_a_pointer_restored_nothing_new(world: World) -> None:
    world.write("billing.py")
    for _ in range(3):
        world.compact("<summary>billing.py</summary>")
    env = {"CTXMODE_HOME": world.env["CTXMODE_HOME"]}
    text = cli("stats", "--project", str(world.dir), env=env).output
    assert "    compaction 3 (auto): a one-line pointer, nothing new since compaction 1\n" in text
