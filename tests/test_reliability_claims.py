"""Claim exactly once, to the right session, in the right project.

Racing claimers (processes and threads, up to 32) across every source that prints a
snapshot: SessionStart ``compact`` of the same session, SessionStart ``resume`` of new
session ids, and the UserPromptSubmit fallback. Of the racers exactly one prints each
snapshot, and each printed snapshot goes where the resume policy sends it:

- a session's compaction snapshot to that session only (not to a new session that
  resumes meanwhile);
- an end-of-session snapshot to at most one new session, never after a /clear;
- nothing ever crosses repositories, even when the same session id appears in both;
  the linked worktrees of one repository share its store, and a new session prefers
  the snapshot of its own worktree.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from ctxmode import hookrun, paths
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook, start_hook

PROJECT = "/home/dev/proj"
SCALE = int(os.environ.get("CTXMODE_SOAK_SCALE", "1"))


def _env(root: Path, project: str | None = PROJECT) -> dict[str, str]:
    env = hook_env(CTXMODE_HOME=str(root))
    if project is not None:
        env["CLAUDE_PROJECT_DIR"] = project
    return env


def _write(session: str, name: str, cwd: str = PROJECT) -> dict:
    path = f"{cwd}/{name}"
    return {
        "session_id": session, "cwd": cwd, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": path, "content": ""},
        "tool_response": {"type": "create", "filePath": path},
    }  # fmt: skip


def _call(event: str, session: str, cwd: str = PROJECT, **fields: str) -> dict:
    return {"session_id": session, "cwd": cwd, "hook_event_name": event, **fields}


def _ok(result: subprocess.CompletedProcess[bytes]) -> bytes:
    assert (result.returncode, result.stderr) == (0, b""), result.stderr
    return result.stdout


def _context(out: bytes) -> str:
    return json.loads(out)["hookSpecificOutput"]["additionalContext"]


def _prepare(root: Path) -> None:
    """Sessions with snapshots waiting: compact of S1, S2 (newest), end of E1..E3."""
    env = _env(root)
    for session in ("E1", "E2", "E3"):
        _ok(run_hook("PostToolUse", _write(session, f"{session}-file.py"), env=env))
        _ok(run_hook("SessionEnd", _call("SessionEnd", session, reason="other"), env=env))
    for session in ("S1", "S2"):
        _ok(run_hook("PostToolUse", _write(session, f"{session}-file.py"), env=env))
        _ok(run_hook("PreCompact", _call("PreCompact", session, trigger="auto"), env=env))


def _claimers() -> list[tuple[str, dict]]:
    """32 racers: 12 new sessions resuming (started first: they would take the newest
    snapshot, S1's or S2's, if the policy let them), 10 compact of S1, 10 prompts of S2."""
    racers = [
        ("SessionStart", _call("SessionStart", f"new-{k}", source="resume")) for k in range(12)
    ]
    racers += [("SessionStart", _call("SessionStart", "S1", source="compact")) for _ in range(10)]
    racers += [
        ("UserPromptSubmit", _call("UserPromptSubmit", "S2", prompt=f"carry on with step {k}"))
        for k in range(10)
    ]
    return racers


def _printed_row(text: str, by_text: dict, by_origin: dict) -> dict:
    """The stored row a printed snapshot is: its own session's one exactly as stored;
    another session's one with the root and preface of snapshot.provenance (item 8 of
    issue 13), the rest as stored."""
    if text in by_text:
        return by_text[text]
    import xml.etree.ElementTree as ET

    root = ET.fromstring(text)
    assert root.get("source") == "previous-session", text[:200]
    kind, number = (
        ("end", root.get("end")) if root.get("end") else ("compact", root.get("compaction"))
    )
    row = by_origin[(root.get("from_session"), kind, int(number or 0))]
    assert text.split("</preface>", 1)[1] == row["snapshot"].split("</preface>", 1)[1]
    return row


def _check_claims(root: Path, racers: list[tuple[str, dict]], outputs: list[bytes]) -> None:
    with Store.open(paths.store_path(PROJECT, {"CTXMODE_HOME": str(root)}), readonly=True) as s:
        rows = s.resumes()
    by_text = {row["snapshot"]: row for row in rows}
    by_origin = {(row["session_id"], row["kind"], row["compact_seq"]): row for row in rows}
    printed: dict[int, str] = {}  # row id -> the session that printed it
    for (_event, payload), out in zip(racers, outputs, strict=True):
        if not out:
            continue
        row = _printed_row(_context(out), by_text, by_origin)
        assert row["id"] not in printed, f"snapshot {row['id']} printed twice"
        printed[row["id"]] = payload["session_id"]
        assert row["consumed"] and row["consumed_by"] == payload["session_id"]
        if payload["session_id"].startswith("new-"):
            assert row["kind"] == "end" and row["session_id"] != payload["session_id"]
        else:  # compact and the prompt fallback: the session's own compaction snapshot
            assert (row["kind"], row["session_id"]) == ("compact", payload["session_id"])
    # Each waiting snapshot went to exactly one racer, and the right kind of racer.
    owners = {rows_id: sid for rows_id, sid in printed.items()}
    by_session = {row["session_id"]: row for row in rows}
    assert owners[by_session["S1"]["id"]] == "S1"
    assert owners[by_session["S2"]["id"]] == "S2"
    for session in ("E1", "E2", "E3"):
        assert owners[by_session[session]["id"]].startswith("new-")
    assert len(printed) == 5  # and nobody else printed anything
    assert [row for row in rows if not row["consumed"]] == []


def test_racing_processes_across_sources_claim_each_snapshot_once(tmp_path: Path) -> None:
    _prepare(tmp_path)
    env = _env(tmp_path)
    racers = _claimers()
    procs = [start_hook(event, json.dumps(payload).encode(), env) for event, payload in racers]
    outputs = []
    for proc in procs:
        code = proc.wait(60)
        out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
        assert (code, err) == (0, b"")
        outputs.append(out)
    _check_claims(tmp_path, racers, outputs)


def test_racing_threads_across_sources_claim_each_snapshot_once(tmp_path: Path) -> None:
    """The same race inside one process: 32 threads, each its own hook run and connection."""
    _prepare(tmp_path)
    env = _env(tmp_path)
    racers = _claimers()
    outputs: list[bytes] = [b""] * len(racers)
    barrier = threading.Barrier(len(racers))

    def claim(index: int) -> None:
        event, payload = racers[index]
        stdin = io.BytesIO(json.dumps(payload).encode())
        barrier.wait()
        outputs[index] = hookrun.run_hook(event, stdin, env)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(racers))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    _check_claims(tmp_path, racers, outputs)
    assert not (tmp_path / "logs").exists()


def _race_once(root: Path, rounds: int) -> int:
    claims = 0
    for r in range(rounds):
        round_root = root / f"r{r}"
        _prepare(round_root)
        env = _env(round_root)
        racers = _claimers()
        procs = [start_hook(e, json.dumps(p).encode(), env) for e, p in racers]
        outputs = [p.stdout.read() for p in procs]  # type: ignore[union-attr]
        assert [p.wait(60) for p in procs] == [0] * len(procs)
        _check_claims(round_root, racers, outputs)
        claims += len(racers)
        shutil.rmtree(round_root)
    return claims


@pytest.mark.slow
def test_claim_race_soak(request, tmp_path: Path, capsys) -> None:
    claims = _race_once(tmp_path, 20 * SCALE)
    with capsys.disabled():
        print(f"\n[claims] soak: {claims} racing claimers")


def test_32_compact_claimers_of_one_session(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _ok(run_hook("PostToolUse", _write("solo", "solo.py"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", "solo", trigger="manual"), env=env))
    start = json.dumps(_call("SessionStart", "solo", source="compact")).encode()
    procs = [start_hook("SessionStart", start, env) for _ in range(32)]
    outputs = [p.stdout.read() for p in procs]  # type: ignore[union-attr]
    assert [p.wait(60) for p in procs] == [0] * 32
    printed = [out for out in outputs if out]
    assert len(printed) == 1
    assert "solo.py" in _context(printed[0])


# ---------------------------------------------------------------- projects and worktrees


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd)})  # fmt: skip


@pytest.fixture
def projects(tmp_path: Path) -> dict[str, Path]:
    """Two repositories, and two linked worktrees (``git worktree add``) of the first."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    base = tmp_path / "code"
    found: dict[str, Path] = {}
    for name in ("alpha", "beta"):
        repo = base / name
        (repo / "src").mkdir(parents=True)
        _git("init", "-q", "-b", "main", cwd=repo)
        (repo / "README").write_text(name)
        _git("-c", "user.name=t", "-c", "user.email=t@t", "add", "README", cwd=repo)
        _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init", cwd=repo)
        found[name] = repo
    for tree in ("wt1", "wt2"):
        _git("worktree", "add", "-q", "-b", tree, str(base / f"alpha-{tree}"), cwd=found["alpha"])
        (base / f"alpha-{tree}" / "src").mkdir(exist_ok=True)
        found[f"alpha-{tree}"] = base / f"alpha-{tree}"
    return found


def test_projects_never_share_a_snapshot_and_worktrees_prefer_their_own(
    projects: dict[str, Path], tmp_path: Path
) -> None:
    """Since 0.3 the worktrees of one repository share its store (one memory per
    repository): a snapshot never crosses repositories nor sessions, and a new session
    takes the end snapshot of its own worktree before a newer one of another."""
    root = tmp_path / "data"
    env = _env(root, project=None)  # the project comes from the payload's cwd, as in real use
    for name, repo in projects.items():
        cwd = str(repo / "src")  # a subfolder: the project is found by walking up to .git
        _ok(run_hook("PostToolUse", _write(f"end-{name}", f"{name}-marker.py", cwd), env=env))
        _ok(run_hook("SessionEnd", _call("SessionEnd", f"end-{name}", cwd, reason="other"),
                     env=env))  # fmt: skip
        # The same session id in both repositories: ids are not unique across stores.
        sid = "same-id" if name in ("alpha", "beta") else f"compact-{name}"
        _ok(run_hook("PostToolUse", _write(sid, f"{name}-compact.py", cwd), env=env))
        _ok(run_hook("PreCompact", _call("PreCompact", sid, cwd, trigger="auto"), env=env))
    stores = sorted(s for s in os.listdir(root / "sessions") if s.endswith(".db"))
    assert len(stores) == 2  # alpha (with its two worktrees) and beta

    # New sessions racing in beta: exactly one gets beta's end snapshot, nothing of alpha.
    cwd = str(projects["beta"] / "src")
    payloads = [_call("SessionStart", f"beta-new-{k}", cwd, source="resume") for k in range(8)]
    procs = [start_hook("SessionStart", json.dumps(p).encode(), env) for p in payloads]
    outputs = [p.stdout.read() for p in procs]  # type: ignore[union-attr]
    assert [p.wait(60) for p in procs] == [0] * 8
    printed = [_context(out) for out in outputs if out]
    assert len(printed) == 1
    assert "beta-marker.py" in printed[0] and "alpha" not in printed[0]

    # In alpha's worktrees (alpha-wt2's snapshot is the newest): each new session gets
    # the one of its own worktree.
    for name in ("alpha-wt1", "alpha", "alpha-wt2"):
        cwd = str(projects[name] / "src")
        start = _call("SessionStart", f"{name}-new", cwd, source="resume")
        context = _context(_ok(run_hook("SessionStart", start, env=env)))
        assert f"{name}-marker.py" in context
        assert not any(f"{o}-marker.py" in context for o in projects if o != name)

    # Compaction snapshots stay with their session: "same-id" of each repository gets
    # its own repository's, once; each worktree's session its own.
    for name, repo in projects.items():
        cwd = str(repo / "src")
        sid = "same-id" if name in ("alpha", "beta") else f"compact-{name}"
        start = _call("SessionStart", sid, cwd, source="compact")
        context = _context(_ok(run_hook("SessionStart", start, env=env)))
        assert f"{name}-compact.py" in context
        assert not any(f"{o}-compact.py" in context for o in projects if o != name)
        assert _ok(run_hook("SessionStart", start, env=env)) == b""


# ---------------------------------------------------------------- the policy


def test_nothing_from_before_a_clear_reaches_anyone(tmp_path: Path) -> None:
    env = _env(tmp_path)
    # C ended normally earlier: its snapshot waits for a later session.
    _ok(run_hook("PostToolUse", _write("C", "c-work.py"), env=env))
    _ok(run_hook("SessionEnd", _call("SessionEnd", "C", reason="other"), env=env))
    # A worked, compacted (its snapshot never claimed), then the user typed /clear.
    _ok(run_hook("PostToolUse", _write("A", "secret-plan.py"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", "A", trigger="auto"), env=env))
    _ok(run_hook("SessionEnd", _call("SessionEnd", "A", reason="clear"), env=env))
    # B is the session /clear started: nothing at its start, nor when it is resumed.
    assert _ok(run_hook("SessionStart", _call("SessionStart", "B", source="clear"), env=env)) == b""
    resumed = _call("SessionStart", "B", source="resume")
    assert _ok(run_hook("SessionStart", resumed, env=env)) == b""
    assert _ok(run_hook("UserPromptSubmit", _call("UserPromptSubmit", "B", prompt="hi"),
                        env=env)) == b""  # fmt: skip
    # A later, unrelated new session may take C's snapshot, never A's.
    out = _ok(run_hook("SessionStart", _call("SessionStart", "D", source="resume"), env=env))
    assert "c-work.py" in _context(out) and "secret-plan.py" not in _context(out)
    # A itself, resumed, has events of its own but no snapshot left to print.
    assert (
        _ok(run_hook("SessionStart", _call("SessionStart", "A", source="resume"), env=env)) == b""
    )
    with Store.open(paths.store_path(PROJECT, {"CTXMODE_HOME": str(tmp_path)}), readonly=True) as s:
        a_rows = s.resumes("A")
    assert [(r["kind"], r["consumed_by"]) for r in a_rows] == [("compact", "clear")]


def test_resumed_session_with_events_gets_only_its_own_snapshot(tmp_path: Path) -> None:
    env = _env(tmp_path)
    _ok(run_hook("PostToolUse", _write("other", "other.py"), env=env))
    _ok(run_hook("SessionEnd", _call("SessionEnd", "other", reason="other"), env=env))
    _ok(run_hook("PostToolUse", _write("mine", "mine.py"), env=env))
    resumed = _call("SessionStart", "mine", source="resume")
    assert _ok(run_hook("SessionStart", resumed, env=env)) == b""  # its transcript is intact
    _ok(run_hook("PreCompact", _call("PreCompact", "mine", trigger="auto"), env=env))
    # Resumed before its SessionStart(compact) came (a crash): its own snapshot, once.
    out = _ok(run_hook("SessionStart", resumed, env=env))
    assert "mine.py" in _context(out) and "other.py" not in _context(out)
    assert _ok(run_hook("SessionStart", resumed, env=env)) == b""


def test_stale_compaction_snapshot_goes_to_a_new_session(tmp_path: Path) -> None:
    """A compaction that never finished (no SessionStart came): a new session may take it."""
    env = _env(tmp_path)
    _ok(run_hook("PostToolUse", _write("crashed", "half-done.py"), env=env))
    _ok(run_hook("PreCompact", _call("PreCompact", "crashed", trigger="auto"), env=env))
    fresh = _call("SessionStart", "newcomer", source="resume")
    assert _ok(run_hook("SessionStart", fresh, env=env)) == b""  # still reserved
    path = paths.store_path(PROJECT, {"CTXMODE_HOME": str(tmp_path)})
    with Store.open(path) as store:  # eleven minutes later
        store.conn.execute("UPDATE session_resume SET created_at = '2020-01-01T00:00:00.000Z'")
    out = _ok(run_hook("SessionStart", fresh, env=env))
    assert "half-done.py" in _context(out)
