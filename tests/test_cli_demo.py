"""``ctxmode demo``: the bundled session replayed through the real hook processes."""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ctxmode import demo
from ctxmode.cli import main
from ctxmode.cli.demo import RULE
from ctxmode.store import Store

REPO = Path(__file__).resolve().parents[1]
QUIET = re.compile(
    r"demo: (\d+) hook calls replayed, (\d+) events captured, "
    r"snapshot (\d+\.\d) KB injected after compaction — OK\n"
)


# --------------------------------------------------------------------------- the sample


def _fixture_payloads(fixtures_dir: Path) -> Iterator[dict[str, Any]]:
    for path in sorted(fixtures_dir.glob("*.json")) + sorted(fixtures_dir.glob("more/*.json")):
        if not path.name.startswith("tools."):  # the offered tools' lists, no payloads
            yield json.loads(path.read_text())["payload"]
    for path in (fixtures_dir / "stream.print-mode.jsonl", fixtures_dir / "more" / "stream.jsonl"):
        for line in path.read_text().splitlines():
            yield json.loads(line)["payload"]


def _shape(payload: dict[str, Any]) -> tuple[Any, ...]:
    """Top-level keys in order, plus the key sets of tool_input and tool_response."""
    response = payload.get("tool_response")
    return (
        tuple(payload),
        tuple(sorted(payload.get("tool_input") or {})),
        tuple(sorted(response)) if isinstance(response, dict) else type(response).__name__,
    )


def test_sample_has_the_shapes_of_claude_code_2_1_197(fixtures_dir: Path) -> None:
    known: dict[tuple[str, str], set[tuple[Any, ...]]] = {}
    for payload in _fixture_payloads(fixtures_dir):
        key = (payload["hook_event_name"], payload.get("tool_name", ""))
        known.setdefault(key, set()).add(_shape(payload))
    calls = demo.load_sample()
    for number, call in enumerate(calls, start=1):
        payload = call.payload
        key = (call.event, payload.get("tool_name", ""))
        assert payload["hook_event_name"] == call.event
        assert _shape(payload) in known[key], (number, call.label)


def test_sample_is_one_neutral_session_with_a_compaction() -> None:
    calls = demo.load_sample()
    assert 30 <= len(calls) <= 60
    text = Path(demo.SAMPLE).read_text()
    assert "/home/dev" not in text and "/tmp/" not in text
    assert {c.payload["session_id"] for c in calls} == {"5f0c2a4e-8d7b-4c31-9e26-a1b3c4d5e6f7"}
    assert {c.payload["cwd"] for c in calls} == {demo.DEMO_PROJECT}
    labels = [c.label for c in calls]
    assert labels[0] == "SessionStart startup"
    assert labels[-1] == "SessionEnd other"
    compact = labels.index("SessionStart compact")
    assert labels[compact - 1] == "PreCompact manual"
    assert "UserPromptSubmit" in labels[compact + 1 :]  # the session goes on after compaction
    assert {c.event for c in calls} == {
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUseFailure",
        "PreCompact",
        "SessionEnd",
    }
    tool_ids = [c.payload["tool_use_id"] for c in calls if "tool_use_id" in c.payload]
    assert len(tool_ids) == len(set(tool_ids))


@pytest.mark.parametrize(
    ("returncode", "stdout", "stderr", "event", "expected"),
    [
        (0, b"", b"", "PostToolUse", []),
        (
            0,
            b'{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"x"}}\n',
            b"",
            "SessionStart",
            [],
        ),
        (1, b"", b"", "PostToolUse", ["PostToolUse Bash exited 1"]),
        (
            0,
            b"",
            b"Traceback...\nKeyError: 'x'\n",
            "PostToolUse",
            ["PostToolUse Bash wrote to stderr: KeyError: 'x'"],
        ),
        (
            0,
            b"hello",
            b"",
            "PostToolUse",
            ["PostToolUse Bash printed to stdout (only SessionStart/UserPromptSubmit may)"],
        ),
        (
            0,
            b"plain text",
            b"",
            "UserPromptSubmit",
            ["UserPromptSubmit Bash printed something other than the hook JSON contract"],
        ),
        (None, b"", b"", "PostToolUse", ["PostToolUse Bash: could not run (timed out)"]),
    ],
)
def test_call_problems(
    returncode: int | None, stdout: bytes, stderr: bytes, event: str, expected: list[str]
) -> None:
    call = demo.HookCall(event, {"tool_name": "Bash"})
    error = "timed out" if returncode is None else None
    result = demo.CallResult(call, returncode, stdout, stderr, 0.01, error)
    assert demo.call_problems(result) == expected


# --------------------------------------------------------------------------- the command


def test_quiet(data_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0
    found = QUIET.fullmatch(result.output)
    assert found, result.output
    calls, events, size = int(found[1]), int(found[2]), float(found[3])
    assert calls == len(demo.load_sample())
    assert events >= 30
    assert 1.0 <= size <= 9.0
    assert list(data_root.iterdir()) == []  # the (test's) own data root stays empty


KEPT = re.compile(
    r"\n\nThe throwaway store is kept in (\S+), so that the lookups above run as printed\.\n"
    r"Look around, then remove it:\n"
    r"  CTXMODE_HOME=(\S+) (\S+) sessions --project /home/user/demo-project\n"
    r"  CTXMODE_HOME=(\S+) (\S+) show-snapshot --project /home/user/demo-project\n"
    r"  rm -r (\S+)\n$"
)


def test_full_report_shows_the_exact_snapshot(data_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0
    out = result.output
    kept = KEPT.search(out)
    assert kept and kept[1] == kept[2] == kept[4] == kept[6], out[-600:]
    home = kept[1]
    try:
        calls = len(demo.load_sample())
        assert out.startswith(
            f"ctxmode demo: a recorded Claude Code session ({calls} hook calls) replayed "
            "through the real hooks\n"
            "into a throwaway store; nothing of yours is read or written.\n"
            "\n"
            f"Replayed {calls} hook calls in "
        )
        assert "s: all exited 0, nothing on stderr.\n" in out
        assert (
            "  SessionStart x2, UserPromptSubmit x4, PostToolUse x33, PostToolUseFailure x2, "
            "PreCompact x1, SessionEnd x1\n" in out
        )
        assert re.search(r"\nCaptured \d+ events, by category:\n  file +\d+  ", out)
        assert "\n  p1  prompt       user_prompt   Add a CSV export of finished invoices" in out
        assert "To use it for real: ./install.sh in a clone of ctxmode, or `ctxmode install`" in out
        # The snapshot between the rules is, byte for byte, what the store kept and the
        # SessionStart hook printed.
        shown = out.split(RULE + "\n")[1]
        [store_path] = Path(home, "sessions").glob("*.db")
        with Store.open(str(store_path), readonly=True) as store:
            compact = [r for r in store.resumes() if r["kind"] == "compact"]
        assert len(compact) == 1 and compact[0]["consumed"] == 1
        assert shown == compact[0]["snapshot"].rstrip("\n") + "\n"
        assert re.search(rf"injected it \({len(compact[0]['snapshot'].encode()):,} bytes\)", out)
        assert shown.startswith('<session_resume session="5f0c2a4e-8d7b-4c31-9e26-a1b3c4d5e6f7"')
        for text in (
            '<task id="3" status="in_progress">Add a totals row to the CSV export</task>',
            '<commit sha="4e1c9a2">Add CSV export of finished invoices</commit>',
            '<git branch="feature/csv-export">',
        ):
            assert text in shown
        for secret in demo.SECRETS:
            assert secret not in out
    finally:
        shutil.rmtree(home)


def _printed_commands(out: str) -> list[str]:
    """Every command the report prints: the snapshot's lookups, then the lines after
    "Look around" (the last one removes the kept store)."""
    (search,) = [html.unescape(m) for m in re.findall(r"<search>(.*?)</search>", out)]
    lookups = [f"{search} {html.unescape(m)}" for m in re.findall(r"<lookup>(.*?)</lookup>", out)]
    tail = out.split("Look around, then remove it:\n", 1)[1]
    return lookups + [line[2:] for line in tail.splitlines() if line.startswith("  ")]


def test_every_printed_command_runs_as_printed(data_root: Path, tmp_path: Path) -> None:
    """Issue 13 item 11: each lookup of the shown snapshot (after the search command, as
    its preface says), and each command the report suggests, run exactly as printed
    through ``sh -c`` from a shell that knows nothing of the demo (no CTXMODE_HOME,
    another working directory), succeeds and lists its section's events."""
    result = CliRunner().invoke(main, ["demo"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    commands = _printed_commands(result.output)
    home = KEPT.search(result.output)[1]  # type: ignore[index]
    lookups, sessions, show, remove = commands[:-3], commands[-3], commands[-2], commands[-1]
    assert len(lookups) >= 8 and all(" search --project " in c for c in lookups)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CTXMODE_", "CLAUDE"))}

    def sh(command: str) -> str:
        done = subprocess.run(
            ["sh", "-c", command],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, ""), (command, done.stdout, done.stderr)
        return done.stdout

    try:
        for command in lookups:
            shown = " ".join(sh(command).split())
            assert shown.startswith("[1] ") and "newest first" in shown, (command, shown)
        assert "5f0c2a4e" in sh(sessions)
        assert "<session_resume" in sh(show)
        sh(remove)
        assert not Path(home).exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_no_keep_removes_the_store_and_says_so(data_root: Path) -> None:
    result = CliRunner().invoke(main, ["demo", "--no-keep"], catch_exceptions=False)
    assert result.exit_code == 0
    assert result.output.endswith(
        "\nThe throwaway store is removed, so the lookups above find nothing now "
        "(--keep keeps it).\n"
    )
    home = re.search(r"CTXMODE_HOME=(\S+) ", result.output)[1]  # type: ignore[index]
    assert not Path(home).exists()


def test_failure_is_reported_with_a_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A session without its compaction: nothing can be injected, the demo must say so.
    sample = tmp_path / "sample.jsonl"
    lines = [
        line
        for line in Path(demo.SAMPLE).read_text().splitlines()
        if '"PreCompact"' not in line and '"source": "compact"' not in line
    ]
    sample.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(demo, "SAMPLE", str(sample))
    result = CliRunner().invoke(main, ["demo", "--quiet"], catch_exceptions=False)
    assert result.exit_code == 1
    assert re.fullmatch(
        rf"demo: {len(lines)} hook calls replayed, \d+ events captured, snapshot 0 B injected "
        r"after compaction — FAILED: SessionStart compact injected no snapshot\n",
        result.output,
    ), result.output


def test_broken_interpreter_fails(tmp_path: Path) -> None:
    calls = demo.load_sample()[:3]
    result = demo.replay(str(tmp_path / "home"), calls, python=str(tmp_path / "no-python"))
    assert not result.ok
    assert result.problems[0].startswith("SessionStart startup: could not run (")
    assert "SessionStart compact injected no snapshot" in result.problems


def test_help_offers_quiet_for_install_sh() -> None:
    # install.sh runs `ctxmode demo --quiet` only when the help mentions --quiet.
    result = CliRunner().invoke(main, ["demo", "--help"], catch_exceptions=False)
    assert "--quiet" in result.output and "--keep" in result.output


def _tree(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_subprocess_quiet_leaves_no_file_behind(tmp_path: Path) -> None:
    home, tmp, real, cwd = (tmp_path / name for name in ("home", "tmp", "real-data", "cwd"))
    for folder in (home, tmp, cwd):
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CTXMODE_"))}
    env.update(
        HOME=str(home),
        TMPDIR=str(tmp),
        CTXMODE_HOME=str(real),
        PYTHONPATH=str(REPO),
        XDG_DATA_HOME=str(home / "xdg"),
    )
    done = subprocess.run(
        [sys.executable, "-m", "ctxmode", "demo", "--quiet"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert QUIET.fullmatch(done.stdout), done.stdout
    assert done.stderr == ""
    # The throwaway root lived under TMPDIR and is gone; nothing else was written.
    assert _tree(tmp) == []
    assert _tree(home) == []
    assert _tree(cwd) == []
    assert not real.exists()


def test_each_replayed_hook_leads_a_process_group_of_its_own(tmp_path: Path) -> None:
    """As the client starts a hook: its call's place in the session is read from its
    group's start (hookrun.call_stamp), so a replay run in one shared group made the
    snapshot's order (task status, error resolution) vary from run to run."""
    python = tmp_path / "python"
    probe = "import os; print(os.getpgid(0) == os.getpid())"
    python.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -c {shlex.quote(probe)}\n")
    python.chmod(0o700)
    call = demo.load_sample()[0]
    result = demo.run_call(call, dict(os.environ), str(tmp_path), str(python))
    assert (result.returncode, result.stdout.strip()) == (0, b"True")
