"""A turn's notes: what the agent wrote between its tool calls, kept with the turn's reply.

"All 57 tests passing", said between a test run and a commit, is in no tool call and is
not the turn's last text. Claude Code's Stop payload carries the reply only: the host reads
the turn's earlier texts back from the transcript (``history.turn_notes``), and
``ctxmode import`` takes the same texts from the records it reads; both store them as the
reply's ``notes``, masked and bounded.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from ctxmode import paths
from ctxmode.extract import replies
from ctxmode.hosts.claude_code import history
from tests.helpers import cli
from tests.hooktools import hook_env, run_hook
from tests.test_shell_calls import GH_TOKEN

SESSION = "7e57a0e5-0000-4000-8000-000000000001"


def record(kind: str, content: Any, n: int, cwd: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "sessionId": SESSION,
        "cwd": cwd,
        "timestamp": f"2026-12-01T10:{n:02d}:00.000Z",
        "isSidechain": False,
        "message": {"role": kind, "content": content},
        **extra,
    }


def bash(n: int, command: str, output: str, cwd: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}
    result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": output}
    response = {"stdout": output, "stderr": "", "interrupted": False}
    return [
        record("assistant", [use], n, cwd),
        record("user", [result], n, cwd, toolUseResult=response),
    ]


def say(n: int, text: str, cwd: str, ends: bool = False) -> dict[str, Any]:
    rec = record("assistant", [{"type": "text", "text": text}], n, cwd)
    rec["message"]["stop_reason"] = "end_turn" if ends else None
    return rec


REPLY = "Done: the suite is green and committed."
NOTES = [
    "Running the integration suite first.",
    f"All 57 tests passing. Committing now (token {GH_TOKEN} stays out of it).",
]


def transcript(folder: Path, cwd: str) -> Path:
    """One earlier turn, then a turn with notes between its calls and a reply."""
    rows = [
        record("user", "what is in the repo?", 0, cwd),
        say(1, "An older turn's note: the repo has two packages.", cwd),
        *bash(2, "ls", "pkg_a\npkg_b", cwd),
        say(3, "Two packages.", cwd, ends=True),
        record("user", "run the tests and commit", 4, cwd),
        say(5, NOTES[0], cwd),
        *bash(6, "pytest -q tests/integration", "57 passed in 3.1s", cwd),
        say(7, NOTES[1], cwd),
        *bash(8, "git commit -am 'Green'", "[main 1a2b3c4] Green", cwd),
        say(9, REPLY, cwd, ends=True),
    ]
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def replies_of(project: Path) -> list[dict[str, Any]]:
    store = paths.store_path(str(project), os.environ)
    with sqlite3.connect(store) as conn:
        rows = conn.execute(
            "SELECT data FROM session_events WHERE type = 'assistant_reply' ORDER BY id"
        ).fetchall()
    return [json.loads(data) for (data,) in rows]


def test_the_notes_are_read_back_to_the_turns_prompt(tmp_path: Path) -> None:
    path = transcript(tmp_path, str(tmp_path))
    assert history.turn_notes(str(path), REPLY) == NOTES
    # The reply not yet written (or another text): every text of the turn is a note.
    assert history.turn_notes(str(path), "something else") == [*NOTES, REPLY]
    assert history.turn_notes(str(tmp_path / "missing.jsonl"), REPLY) == []


def test_the_stop_hook_and_the_import_keep_the_same_notes_masked(
    tmp_path: Path, project: Path, data_root: Path
) -> None:
    path = transcript(tmp_path, str(project))
    stop = {
        "session_id": SESSION,
        "transcript_path": str(path),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
        "last_assistant_message": REPLY,
    }
    proc = run_hook("Stop", stop, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    (hooked,) = replies_of(project)
    assert hooked["text"] == REPLY
    assert hooked["notes"].splitlines()[0] == NOTES[0]
    assert "All 57 tests passing." in hooked["notes"] and GH_TOKEN not in hooked["notes"]
    assert "[REDACTED:" in hooked["notes"]
    assert "older turn" not in hooked["notes"]

    # The same transcript imported into a store of its own: the same event.
    other = tmp_path / "import-root"
    result = cli("import", "--json", str(path), env={"CTXMODE_HOME": str(other)})
    assert result.exit_code == 0, result.output
    store = paths.store_file(str(other), paths.identify_dir(str(project)).project)
    with sqlite3.connect(store) as conn:
        imported = [
            json.loads(d)
            for (d,) in conn.execute(
                "SELECT data FROM session_events WHERE type = 'assistant_reply' ORDER BY id"
            )
        ]
    assert imported[-1] == hooked
    assert imported[0] == {
        "text": "Two packages.",
        "notes": "An older turn's note: the repo has two packages.",
    }


def test_notes_are_bounded() -> None:
    from ctxmode import payload

    many = [f"step {n}: checked module_{n}, " + "x" * 400 for n in range(100)]
    inp = payload.from_dict(
        {"hook_event_name": "Stop", "last_assistant_message": "ok", "turn_notes": many}, "Stop"
    )
    (kind, data), *rest = replies.assistant_reply(inp)
    assert kind == "assistant_reply"
    assert len(data["notes"]) <= replies.NOTES_HEAD + replies.NOTES_TAIL + 8
    assert data["notes"].startswith("step 0: checked module_0")
    assert "step 99: checked module_99" in data["notes"]  # the last notes are kept
    for line in data["notes"].splitlines():
        assert len(line) <= replies.NOTE_CHARS + 1
    assert rest and {kind for kind, _ in rest} == {"assistant_notes"}
    for _, more in rest:
        assert len(more["text"]) <= replies.NOTES_GROUP + replies.NOTE_CHARS
        for line in more["text"].splitlines():
            assert len(line) <= replies.NOTE_CHARS + 1


def test_a_long_turns_middle_notes_are_kept_in_order_once() -> None:
    """The notes the reply has no room for (the middle of a long turn) are events of
    their own: every note is in the reply's notes or in one of them, in order."""
    from ctxmode import payload

    many = [f"step {n}: module_{n} checked, the count is {n * 7}" for n in range(120)]
    inp = payload.from_dict(
        {"hook_event_name": "Stop", "last_assistant_message": "ok", "turn_notes": many}, "Stop"
    )
    (_, data), *rest = replies.assistant_reply(inp)
    middle = [line for _, more in rest for line in more["text"].splitlines()]
    assert middle == [note for note in many if note not in data["notes"]]
    assert "step 60: module_60 checked, the count is 420" in middle
    short = payload.from_dict(
        {"hook_event_name": "Stop", "last_assistant_message": "ok", "turn_notes": many[:3]},
        "Stop",
    )
    assert [kind for kind, _ in replies.assistant_reply(short)] == ["assistant_reply"]


def test_a_stop_without_a_transcript_keeps_the_reply_alone(project: Path) -> None:
    stop = {
        "session_id": SESSION,
        "transcript_path": str(project / "gone.jsonl"),
        "cwd": str(project),
        "hook_event_name": "Stop",
        "last_assistant_message": REPLY,
    }
    proc = run_hook("Stop", stop, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    assert replies_of(project) == [{"text": REPLY}]


def test_a_long_turn_passes_its_first_and_last_notes_whole() -> None:
    notes = [f"note {n}" for n in range(history.NOTES_FIRST + history.NOTES_LAST + 30)]
    kept = history.kept_notes(notes)
    assert kept == notes[: history.NOTES_FIRST] + notes[-history.NOTES_LAST :]
    assert history.kept_notes(notes[:5]) == notes[:5]


def test_an_interrupted_turn_keeps_what_the_agent_wrote(tmp_path: Path) -> None:
    """A turn the user cut into with a new prompt ends on a tool call: no Stop hook runs
    and no text ends it. ``ctxmode import`` keeps what the agent wrote in it anyway: its
    last text as the reply, the earlier ones as its notes, before the next prompt."""
    cwd = str(tmp_path)
    rows = [
        record("user", "run the tests and then the CLI", 0, cwd),
        say(1, "Running the suite.", cwd),
        *bash(2, "pytest -q", "124 passed in 4.1s", cwd),
        say(3, "All 124 tests pass. Checking the CLI next.", cwd),
        *bash(4, "python -m app --help", "usage: app [-h]", cwd),
        record("user", "now generate a report", 5, cwd),
        say(6, "Report written.", cwd, ends=True),
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    chunk = history.read(path.read_bytes(), path=str(path))
    calls = [c.inp for c in chunk.items if isinstance(c, history.Call)]
    events = [(c.event, c.prompt or c.last_assistant_message) for c in calls]
    assert [e for e in events if e[0] != "PostToolUse"] == [
        ("UserPromptSubmit", "run the tests and then the CLI"),
        ("Stop", "All 124 tests pass. Checking the CLI next."),
        ("UserPromptSubmit", "now generate a report"),
        ("Stop", "Report written."),
    ]
    interrupted = next(c for c in calls if c.event == "Stop")
    assert interrupted.turn_notes == ["Running the suite."]


def test_the_sessions_last_reply_is_kept_at_the_end_of_the_file(
    tmp_path: Path, project: Path
) -> None:
    """A reply no record says ends its turn (no ``stop_reason``: many clients write none)
    waits for the next prompt to be known as the turn's end. At the end of the file no
    prompt comes: the import keeps it there, once, however often it runs."""
    cwd = str(project)
    rows = [
        record("user", "move the report", 0, cwd),
        *bash(1, "mv report.md reports/", "", cwd),
        say(2, "Moved the report to `reports/report.md`.", cwd),
    ]
    path = tmp_path / f"{SESSION}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = path.read_bytes()
    held = history.read(data, path=str(path))
    assert not [c for c in held.items if isinstance(c, history.Call) and c.inp.event == "Stop"]
    assert held.offset < len(data)  # a window that stops here reads the reply again
    ended = history.read(data, path=str(path), at_end=True)
    stops = [c.inp for c in ended.items if isinstance(c, history.Call) and c.inp.event == "Stop"]
    assert [s.last_assistant_message for s in stops] == ["Moved the report to `reports/report.md`."]
    assert ended.offset == len(data)

    root = tmp_path / "import-root"
    for _ in range(2):
        result = cli("import", "--json", str(path), env={"CTXMODE_HOME": str(root)})
        assert result.exit_code == 0, result.output
    store = paths.store_file(str(root), paths.identify_dir(cwd).project)
    with sqlite3.connect(store) as conn:
        texts = [
            json.loads(d)["text"]
            for (d,) in conn.execute(
                "SELECT data FROM session_events WHERE type = 'assistant_reply'"
            )
        ]
    assert texts == ["Moved the report to `reports/report.md`."]
    # The session goes on: the next turn's reply joins it, the first is not taken again.
    with path.open("a") as fh:
        for row in (record("user", "thanks, and the index?", 3, cwd), say(4, "Indexed.", cwd)):
            fh.write(json.dumps(row) + "\n")
    result = cli("import", "--json", str(path), env={"CTXMODE_HOME": str(root)})
    assert result.exit_code == 0, result.output
    with sqlite3.connect(store) as conn:
        texts = [
            json.loads(d)["text"]
            for (d,) in conn.execute(
                "SELECT data FROM session_events WHERE type = 'assistant_reply' ORDER BY id"
            )
        ]
    assert texts == ["Moved the report to `reports/report.md`.", "Indexed."]
