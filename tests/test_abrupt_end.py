"""A session whose client ended without running SessionEnd still hands over its end.

Claude Code 2.1.197 runs no SessionEnd hook at the end of `claude -p` when a background
capture is still running then (its shutdown awaits the hook's death on unref'd timers, and
the process exits first); the capture hears of it only if the client's SIGTERM comes
before the capture is done (ctxmode.inflight). A capture that ends between the client's
decision and its signal, or one the signal kills before it is ready, leaves the session
with no end snapshot, and the next session was handed nothing, or an older session's
snapshot (issue 30). A client killed outright does the same. The new session's
SessionStart now builds the missing end snapshot from the session's events, once the
session's client is gone (a session still at work is not handed over).

The client here is tests/fake_client.py: it runs each hook as Claude Code does (``sh -c``
leading a group of its own) and ends, without SessionEnd, when the test closes its input.
"""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ctxmode import paths
from ctxmode.store import Store
from tests.helpers import hook_payload, tool_payload
from tests.hooktools import hook_env, run_hook

CLIENT = Path(__file__).resolve().parent / "fake_client.py"


class World:
    """A project with ``inject_on_startup`` on, and its data root."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "proj"
        (self.dir / ".git").mkdir(parents=True)
        (self.dir / ".claude").mkdir()
        (self.dir / ".claude" / "ctxmode.json").write_text('{"inject_on_startup": true}')
        self.env = hook_env(CTXMODE_HOME=str(tmp_path / "data"), CLAUDE_PROJECT_DIR=str(self.dir))

    def write(self, session: str, name: str) -> tuple[str, dict[str, Any]]:
        path = str(self.dir / name)
        return "PostToolUse", tool_payload(
            "Write", {"file_path": path, "content": "x = 1\n"},
            {"type": "create", "filePath": path},
            tool_use_id=f"toolu_{name}", session_id=session, cwd=str(self.dir),
        )  # fmt: skip

    def call(self, event: str, session: str, **fields: Any) -> tuple[str, dict[str, Any]]:
        return event, hook_payload(event, session_id=session, cwd=str(self.dir), **fields)

    def starts(self, session: str, source: str = "startup") -> str | None:
        """A new session's SessionStart (run by any launcher): what it was handed."""
        done = run_hook("SessionStart", self.call("SessionStart", session, source=source)[1],
                        env=self.env)  # fmt: skip
        assert (done.returncode, done.stderr) == (0, b"")
        if not done.stdout:
            return None
        return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])

    def resumes(self, session: str) -> list[dict[str, Any]]:
        with Store.open(paths.store_path(str(self.dir), self.env), readonly=True) as store:
            return store.resumes(session)

    def newest_event_at(self, session: str) -> str:
        with Store.open(paths.store_path(str(self.dir), self.env), readonly=True) as store:
            return str(store.session_events(session)[-1].created_at)


class Client:
    """A client process running one session's hooks (tests/fake_client.py)."""

    def __init__(self, world: World) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(CLIENT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=world.env,
            text=True,
        )

    def run(self, *calls: tuple[str, dict[str, Any]]) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        for call in calls:
            self.proc.stdin.write(json.dumps(call) + "\n")
            self.proc.stdin.flush()
            answer = json.loads(self.proc.stdout.readline())
            assert answer["stderr"] == "", answer

    def ends(self) -> None:
        """The client exits, running no SessionEnd (nor stopping anything)."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


def _worked(world: World, session: str, *names: str) -> Client:
    client = Client(world)
    client.run(world.call("SessionStart", session, source="startup"),
               *(world.write(session, name) for name in names))  # fmt: skip
    return client


def test_a_session_whose_client_ended_without_session_end_is_handed_over(tmp_path: Path) -> None:
    w = World(tmp_path)
    _worked(w, "abrupt", "plan.py", "last_call.py").ends()
    assert w.resumes("abrupt") == []  # no SessionEnd: no end snapshot

    context = w.starts("next")
    assert context is not None, "the new session was handed nothing"
    root = ET.fromstring(context)
    assert (root.attrib["from_session"], root.attrib["reason"]) == ("abrupt", "inject_on_startup")
    assert "last_call.py" in context and "plan.py" in context
    (end,) = w.resumes("abrupt")
    assert (end["kind"], end["consumed_by"]) == ("end", "next")
    # Dated when the session ended as far as the store knows: its last event.
    assert end["created_at"] == w.newest_event_at("abrupt")
    # Handed over once: the next new session gets nothing of it.
    assert w.starts("later") is None
    assert len(w.resumes("abrupt")) == 1


def test_an_older_snapshot_is_not_handed_over_in_place_of_the_newer_work(
    tmp_path: Path,
) -> None:
    """Another session's end snapshot waits; then a session ends once with SessionEnd, is
    resumed by a new client process, works more, and that client ends without SessionEnd.
    The hand-over has the later work, not the waiting older snapshot."""
    w = World(tmp_path)
    earlier = Client(w)
    earlier.run(w.write("earlier", "earlier.py"), w.call("SessionEnd", "earlier", reason="other"))
    earlier.ends()
    first = Client(w)
    first.run(w.write("s", "before.py"), w.call("SessionEnd", "s", reason="other"))
    first.ends()
    again = Client(w)
    again.run(w.call("SessionStart", "s", source="resume"), w.write("s", "after.py"))
    again.ends()
    context = w.starts("next")
    assert context is not None and "after.py" in context
    assert ET.fromstring(context).attrib["from_session"] == "s"
    assert [r["consumed_by"] for r in w.resumes("s")] == ["resumed", "next"]
    assert [r["consumed"] for r in w.resumes("earlier")] == [0]


def test_a_session_still_at_work_is_not_handed_over(tmp_path: Path) -> None:
    w = World(tmp_path)
    client = _worked(w, "busy", "half_done.py")
    assert w.starts("elsewhere") is None  # its client still runs: it has not ended
    assert w.resumes("busy") == []
    client.ends()
    context = w.starts("next")
    assert context is not None and "half_done.py" in context


def test_the_newest_session_is_handed_over_whichever_way_it_ended(tmp_path: Path) -> None:
    w = World(tmp_path)
    _worked(w, "old", "old.py").ends()  # ended abruptly
    proper = Client(w)  # then one that ends with SessionEnd (and was handed nothing)
    proper.run(w.write("proper", "proper.py"), w.call("SessionEnd", "proper", reason="other"))
    proper.ends()
    context = w.starts("next")
    assert context is not None and "proper.py" in context and "old.py" not in context
    assert w.resumes("old") == []  # not built: a newer session's end came after it
    newest = _worked(w, "newest", "newest.py")  # its start was handed old's, the newest then
    newest.ends()  # and it ends abruptly
    assert [r["consumed_by"] for r in w.resumes("old")] == ["newest"]
    context = w.starts("after")
    assert context is not None and "newest.py" in context


def test_a_session_ended_by_clear_is_never_handed_over(tmp_path: Path) -> None:
    """/clear: the session ends (SessionEnd, reason clear) and the client goes on with a
    new one; when that client later ends abruptly, nothing of the cleared one is built."""
    w = World(tmp_path)
    client = _worked(w, "cleared", "secret-plan.py")
    client.run(w.call("SessionEnd", "cleared", reason="clear"),
               w.call("SessionStart", "after-clear", source="clear"))  # fmt: skip
    client.ends()
    assert w.starts("next") is None
    assert all(r["kind"] != "end" for r in w.resumes("cleared"))


def test_of_two_filling_the_same_gap_one_stores(tmp_path: Path) -> None:
    """Two new sessions starting at once may both build the missing end snapshot: the
    store keeps one (the check and the insert are one transaction)."""
    w = World(tmp_path)
    _worked(w, "abrupt", "plan.py").ends()
    with Store.open(paths.store_path(str(w.dir), w.env)) as store:
        assert store.save_missing_end("abrupt", "<session_resume/>", 1) is True
        assert store.save_missing_end("abrupt", "<session_resume/>", 1) is False
        assert len(store.resumes("abrupt")) == 1


def test_startup_takes_no_session_that_ended_longer_ago_than_its_max_age(tmp_path: Path) -> None:
    import time

    w = World(tmp_path)
    _worked(w, "abrupt", "plan.py").ends()
    with Store.open(paths.store_path(str(w.dir), w.env), readonly=True) as store:
        hour = 3600.0
        assert store.unended_sessions(exclude_session="x", max_age_seconds=hour) != []
        later = time.time() + 2 * hour
        assert store.unended_sessions(exclude_session="x", max_age_seconds=hour, now=later) == []
        assert store.unended_sessions(exclude_session="x", now=later) != []  # resume: no age


def test_a_purged_session_leaves_no_client_behind(tmp_path: Path) -> None:
    w = World(tmp_path)
    _worked(w, "gone", "plan.py").ends()
    with Store.open(paths.store_path(str(w.dir), w.env)) as store:
        key = "client:gone"
        (client,) = store.conn.execute("SELECT value FROM store_meta WHERE key = ?", (key,))
        pid, start = (int(part) for part in client[0].split())
        assert pid > 1 and start > 0
        store.purge_session("gone")
        assert store.conn.execute("SELECT 1 FROM store_meta WHERE key = ?", (key,)).fetchall() == []
