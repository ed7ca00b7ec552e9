"""``ctxmode import`` reads a transcript in windows, never whole: the store is the same.

Whatever the window (``importer.WINDOW``, made tiny here so that every line, every
call/result pair and every compaction/summary pair can fall across a window's end), the
store holds exactly what one read of the whole file makes: on the transcripts recorded
from the real client and on generated ones whose calls' results lie windows away. A kill
between two windows (or inside one's transaction) loses and doubles nothing: the next run
goes on from the last committed window.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ctxmode import importer
from ctxmode.hosts.claude_code import history as transcripts
from ctxmode.store import imports as store_imports
from tests.hooktools import REPO, hook_env

SLUG = "-home-dev-proj"
CWD = "/home/dev/proj"
# Columns that say when the row was written, not what it holds.
WALL_CLOCK = {"id", "updated_at"}


def fixture_dir(version: str) -> Path:
    return REPO / "tests" / "fixtures" / f"claude-code-{version}" / "transcripts"


def run_import(
    claude: Path,
    root: Path,
    window: int | None = None,
    *,
    dry_run: bool = False,
    cap: int | None = None,
) -> importer.Totals:
    """Every transcript of ``claude`` into the data root ``root``, in windows of ``window``;
    ``cap``: the sessions' event cap (``max_events_per_session``)."""
    env = {"CLAUDE_CONFIG_DIR": str(claude), "CTXMODE_HOME": str(root), "HOME": str(root)}
    if cap is not None:
        root.mkdir(parents=True, exist_ok=True)
        (root / "config.json").write_text(json.dumps({"max_events_per_session": cap}))
    saved = importer.WINDOW
    if window is not None:
        importer.WINDOW = window
    try:
        return importer.run(importer.find(env), env, dry_run=dry_run)
    finally:
        importer.WINDOW = saved


def dump(root: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every row the import writes, in the store's order, but for the wall-clock columns."""
    (path,) = sorted((root / "sessions").glob("*.db"))
    order = {
        "session_events": "session_id, id",
        "session_meta": "session_id",
        "compaction": "session_id, compact_seq",
        "import_progress": "path",
    }
    out: dict[str, list[tuple[Any, ...]]] = {}
    with sqlite3.connect(path) as conn:
        for table, by in order.items():
            names = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
            cols = ", ".join(n for n in names if n not in WALL_CLOCK)
            out[table] = conn.execute(f"SELECT {cols} FROM {table} ORDER BY {by}").fetchall()
    return out


def summary(totals: importer.Totals) -> dict[str, Any]:
    found = totals.as_dict()
    for key in ("seconds", "mb_per_second"):
        found.pop(key)
    return found


# -- a generated transcript ------------------------------------------------------------------


def generated(seed: int, calls: int = 40) -> bytes:
    """A session's transcript: prompts, calls in parallel whose results come several
    records (and bulky outputs) later, failures and their reruns, a call interrupted by a
    prompt, a call whose result lies far away, compactions with bookkeeping before their
    summaries, a branch switch, garbled, unknown and blank lines, an unfinished last line."""
    rnd = random.Random(seed)
    lines: list[str] = []
    clock = [0]

    def rec(kind: str, **fields: Any) -> dict[str, Any]:
        clock[0] += 1
        branch = "main" if clock[0] < 60 else "feature"
        base = {"type": kind, "sessionId": f"gen-{seed}", "cwd": CWD, "gitBranch": branch,
                "uuid": f"u{clock[0]}", "timestamp": f"2026-11-30T10:{clock[0] // 60:02d}:"
                f"{clock[0] % 60:02d}.000Z"}  # fmt: skip
        return {**base, **fields}

    def put(record: dict[str, Any]) -> None:
        lines.append(json.dumps(record, separators=(",", ":")) + "\n")  # as the client does

    def prompt(text: str) -> None:
        put(rec("user", message={"role": "user", "content": text}))

    def use(tid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
        return {"type": "tool_use", "id": tid, "name": name, "input": inp}

    def result(tid: str, text: str, response: Any, error: bool = False) -> None:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": tid, "content": text}
        if error:
            block["is_error"] = True
        put(rec("user", message={"role": "user", "content": [block]}, toolUseResult=response))

    def bookkeeping() -> None:
        put(rec("attachment", attachment={"type": "file", "content": "x" * rnd.randint(0, 400)}))

    def call(n: int) -> tuple[dict[str, Any], tuple[str, str, Any, bool]]:
        tid = f"toolu_{seed}_{n}"
        kind = rnd.choice(["bash", "bash_fail", "write", "edit", "read"])
        if kind.startswith("bash"):
            cmd = f"pytest tests/test_{n % 5}.py"
            if kind == "bash_fail":
                err = f"Exit code 1\nFAILED tests/test_{n % 5}.py::test_x - KeyError: 'k{n}'"
                return use(tid, "Bash", {"command": cmd}), (tid, err, None, True)
            out = "passed\n" * rnd.randint(1, 300)
            resp = {"stdout": out, "stderr": "", "interrupted": False}
            return use(tid, "Bash", {"command": cmd}), (tid, out, resp, False)
        path = f"{CWD}/src/mod_{n % 7}.py"
        if kind == "write":
            content = "print('hi')\n" * rnd.randint(1, 200)
            resp = {"type": "create", "filePath": path, "content": content}
            return use(tid, "Write", {"file_path": path, "content": content}), (
                tid, "File created", resp, False)  # fmt: skip
        if kind == "edit":
            resp = {"filePath": path, "oldString": "a", "newString": "b", "structuredPatch": []}
            return use(tid, "Edit", {"file_path": path, "old_string": "a", "new_string": "b"}), (
                tid, "edited", resp, False)  # fmt: skip
        text = "line\n" * rnd.randint(1, 500)
        resp = {"type": "text", "file": {"filePath": path, "content": text}}
        return use(tid, "Read", {"file_path": path}), (tid, text, resp, False)

    n = 0
    prompt("start the work")
    compactions = 0
    while n < calls:
        step = rnd.random()
        if step < 0.1:
            prompt(rnd.choice(["go on", "what is left?", f"fix test {n % 3}"]))
        elif step < 0.17:
            compactions += 1
            put(rec("system", subtype="compact_boundary",
                    compactMetadata={"trigger": rnd.choice(["auto", "manual"])}))  # fmt: skip
            for _ in range(rnd.randint(0, 3)):
                bookkeeping()
            put(rec("user", isCompactSummary=True, message={
                "role": "user", "content": f"Summary:\nsummary {compactions} of seed {seed}"}))  # fmt: skip
        elif step < 0.22:
            put(rec("assistant", message={"role": "assistant", "content": [
                use(f"toolu_{seed}_lost{n}", "Bash", {"command": "sleep 99"})]}))  # fmt: skip
            prompt(f"never mind {n}")
            n += 1
        elif step < 0.27:
            lines.append(rnd.choice(['{"type": "user", "message": {"con\n', "[1, 2]\n",
                                     '{"type":"brand-new-kind"}\n', "\n"]))  # fmt: skip
        else:
            # Calls in parallel, their results in another order, things between.
            width = rnd.randint(1, 4)
            made = [call(n + i) for i in range(width)]
            n += width
            if rnd.random() < 0.5:
                put(rec("assistant", message={"role": "assistant",
                                              "content": [u for u, _ in made]}))  # fmt: skip
            else:
                for u, _ in made:
                    put(rec("assistant", message={"role": "assistant", "content": [u]}))
            pending = [r for _, r in made]
            rnd.shuffle(pending)
            for tid, text, resp, error in pending:
                for _ in range(rnd.randint(0, 2)):
                    bookkeeping()
                result(tid, text, resp, error)
    # A call whose result lies far away, many windows of bookkeeping later.
    put(rec("assistant", message={"role": "assistant", "content": [
        use(f"toolu_{seed}_far", "Bash", {"command": "make all"})]}))  # fmt: skip
    for _ in range(30):
        bookkeeping()
    result(f"toolu_{seed}_far", "built", {"stdout": "built", "stderr": "", "interrupted": False})
    prompt("done?")
    # Then only the model's words: later times, no event (the session's row learns them).
    for _ in range(3):
        put(rec("assistant", message={"role": "assistant",
                                      "content": [{"type": "text", "text": "ok " * 300}]}))  # fmt: skip
    return ("".join(lines) + '{"type":"user","message":{"con').encode()


def write_generated(folder: Path, seed: int, data: bytes) -> Path:
    target = folder / "projects" / SLUG
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"gen-{seed}.jsonl"
    path.write_bytes(data)
    # One mtime whatever was written when (import_progress keeps it).
    os.utime(path, ns=(1_790_000_000 * 10**9, 1_790_000_000 * 10**9))
    return path


# -- the same store, whatever the window ------------------------------------------------------


@pytest.mark.parametrize("version", ["2.1.197", "2.1.332"])
@pytest.mark.parametrize("window", [1, 300, 2048])
def test_recorded_transcripts_in_windows_make_the_same_store(
    version: str, window: int, tmp_path: Path
) -> None:
    claude = tmp_path / "claude"
    shutil.copytree(fixture_dir(version), claude)
    whole = run_import(claude, tmp_path / "whole")
    parts = run_import(claude, tmp_path / "windows", window)
    assert whole.events > 15 and whole.compactions == 2
    assert summary(parts) == summary(whole)
    assert dump(tmp_path / "windows") == dump(tmp_path / "whole")


# No shrinking: an example costs three imports, and the failing one is printed as found.
@settings(
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(
    seed=st.integers(0, 10_000),
    window=st.integers(1, 6000),
    cut=st.floats(0.0, 1.0),
    cap=st.sampled_from([None, 9]),
)
def test_a_generated_transcript_in_windows_makes_the_same_store(
    seed: int, window: int, cut: float, cap: int | None
) -> None:
    """In windows, and in windows over two runs (a prefix first, then the file grown),
    exactly what one read of the whole makes: every event, compaction and summary, the
    sessions' rows, the counts and the saved progress; with the event cap reached, the
    same events evicted."""
    data = generated(seed)
    with tempfile.TemporaryDirectory(prefix="ctxmode-windows-") as tmp:
        base = Path(tmp)
        write_generated(base / "claude", seed, data)
        dry = run_import(base / "claude", base / "dry", window, dry_run=True, cap=cap)
        whole = run_import(base / "claude", base / "whole", cap=cap)
        assert whole.events > 10 and whole.truncated == 1
        parts = run_import(base / "claude", base / "windows", window, cap=cap)
        assert summary(parts) == summary(whole)
        # Its windows roll back (and it builds no replayed snapshot).
        assert summary(dry) == {**summary(whole), "dry_run": True, "replayed": None}
        expected = dump(base / "whole")
        assert dump(base / "windows") == expected
        if cap is not None:
            assert len(expected["session_events"]) == cap
            return  # (across two runs, a prompt the cap evicted may come back)

        # Two runs: a prefix (cut anywhere, even inside a line), then the rest.
        split = int(len(data) * cut)
        write_generated(base / "claude", seed, data[:split])
        run_import(base / "claude", base / "grown", window)
        write_generated(base / "claude", seed, data)
        second = run_import(base / "claude", base / "grown", window)
        assert second.truncated == 1
        assert dump(base / "grown") == expected
        # (The unfinished last line has it read again each time: nothing to add.)
        assert run_import(base / "claude", base / "grown", window).events == 0
        assert dump(base / "grown") == expected


def test_a_call_whose_result_lies_beyond_the_window_grows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The window is read again larger until the result is in it, and the offset saved
    with each window is never past a call still waiting for its result."""
    data = generated(7, calls=6)
    path = write_generated(tmp_path / "claude", 7, data)
    offsets: list[int] = []
    real = store_imports.import_chunk

    def spy(*args: Any, **kwargs: Any) -> int:
        offsets.append(args[3].offset)
        return int(real(*args, **kwargs))

    monkeypatch.setattr(store_imports, "import_chunk", spy)
    totals = run_import(tmp_path / "claude", tmp_path / "root", 64)
    far = data.index(b'"toolu_7_far"')
    line_start = data.rindex(b"\n", 0, far) + 1
    assert line_start in offsets and far not in offsets
    after = [o for o in offsets if o > line_start]
    assert after and min(after) > data.index(b"built"), "a window stopped inside the pair"
    assert offsets == sorted(offsets) and offsets[-1] < len(data)
    assert totals.events > 3 and path.stat().st_size == len(data)


def test_a_compaction_cut_from_its_summary_holds_the_offset() -> None:
    """The reader never passes a compaction whose summary may still come; a later turn
    settles it without one."""
    boundary = {"type": "system", "subtype": "compact_boundary", "sessionId": "s",
                "compactMetadata": {"trigger": "auto"}}  # fmt: skip
    attachment = {"type": "attachment", "sessionId": "s"}
    summ = {"type": "user", "sessionId": "s", "isCompactSummary": True,
            "message": {"content": "Summary:\nall of it"}}  # fmt: skip
    turn = {"type": "user", "sessionId": "s", "message": {"content": "next"}}
    first = json.dumps(boundary) + "\n" + json.dumps(attachment) + "\n"
    data = (first + json.dumps(summ) + "\n").encode()
    assert transcripts.read(data[: len(first)]).offset == 0
    chunk = transcripts.read(data)
    assert chunk.offset == len(data)
    (item,) = chunk.items
    assert isinstance(item, transcripts.Boundary) and item.summary == "all of it"
    settled = (first + json.dumps(turn) + "\n" + json.dumps(summ) + "\n").encode()
    chunk = transcripts.read(settled)
    assert chunk.offset == len(settled)
    boundaries = [i for i in chunk.items if isinstance(i, transcripts.Boundary)]
    assert [b.summary for b in boundaries] == [None]


# -- killed between windows ------------------------------------------------------------------

# The import in a process of its own, with a tiny window; at its ``stop``-th window it says
# so on stdout and waits on stdin (for ever: the test kills it there). ``after``: the
# window committed; ``inside``: inside the window's transaction, nothing of it committed.
CHILD = r"""
import sys
from ctxmode import importer
from ctxmode.store import imports as store_imports

claude, root, window, stop, where = sys.argv[1:6]
importer.WINDOW = int(window)
seen = [0]

def pause():
    seen[0] += 1
    if seen[0] == int(stop):
        sys.stdout.write(f"window {seen[0]}\n")
        sys.stdout.flush()
        sys.stdin.read()

real_chunk, real_part = store_imports.import_chunk, store_imports._insert_part

def chunk(*args, **kwargs):
    added = real_chunk(*args, **kwargs)
    if where == "after":
        pause()
    return added

def part(*args, **kwargs):
    if where == "inside":
        pause()
    return real_part(*args, **kwargs)

store_imports.import_chunk, store_imports._insert_part = chunk, part
env = {"CLAUDE_CONFIG_DIR": claude, "CTXMODE_HOME": root, "HOME": root}
importer.run(importer.find(env), env)
sys.stdout.write("finished\n")
"""


@pytest.mark.parametrize(("where", "stop"), [("after", 1), ("after", 4), ("inside", 3)])
def test_a_kill_between_windows_resumes_without_loss_or_double(
    where: str, stop: int, tmp_path: Path
) -> None:
    data = generated(11, calls=12)
    write_generated(tmp_path / "claude", 11, data)
    whole = run_import(tmp_path / "claude", tmp_path / "whole")
    root = tmp_path / "killed"
    argv = [sys.executable, "-c", CHILD, str(tmp_path / "claude"), str(root), "512", str(stop)]
    child = subprocess.Popen(
        [*argv, where],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=hook_env(PYTHONPATH=str(REPO)),
        cwd=str(REPO),
    )
    assert child.stdout is not None
    # EOF here (an empty line) if the child ended without reaching the window.
    said = child.stdout.readline()
    child.kill()
    child.wait()
    assert said == f"window {stop}\n".encode(), said
    with sqlite3.connect(next((root / "sessions").glob("*.db"))) as conn:
        saved = conn.execute("SELECT offset, events FROM import_progress").fetchall()
        stored = conn.execute("SELECT count(*) FROM session_events").fetchone()[0]
    ((offset, events),) = saved
    assert 0 < offset < len(data) and data[offset - 1 : offset] == b"\n"
    assert events == stored  # what was committed, and its progress, together

    rest = run_import(tmp_path / "claude", root, 512)
    assert stored + rest.events == whole.events
    assert dump(root) == dump(tmp_path / "whole")


@pytest.mark.parametrize("window", [7, 28, 29, 100])
def test_a_resumed_import_counts_the_compactions_before_it_a_window_at_a_time(
    window: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The compactions before a saved offset number those after it: counted in windows,
    a mark cut by a window's end counts once."""
    mark = transcripts.BOUNDARY_MARK
    data = b"".join(b"x" * n + mark + b"\n" for n in range(40))
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(importer, "WINDOW", window)
    with path.open("rb") as fh:
        for end in range(0, len(data) + 1, 13):
            assert importer._boundaries_before(transcripts, fh, end) == data[:end].count(mark)
