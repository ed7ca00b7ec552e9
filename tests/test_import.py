"""``ctxmode import`` over transcripts recorded from the real Claude Code CLI.

The transcripts (``tests/fixtures/claude-code-<version>/transcripts/``, made by
``scripts/record_transcripts.py``) come with the hook payloads the same runs sent
(``hooks.jsonl``): the import must make of a transcript exactly the events the hooks made
of those payloads, and store none of them twice when the hooks ran first.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from ctxmode import importer
from ctxmode.hosts.claude_code import history as transcripts
from tests import secret_corpus
from tests.helpers import cli
from tests.hooktools import hook_env, run_hook
from tests.test_privacy_corpus import leaks

REPO = Path(__file__).resolve().parents[1]
VERSIONS = ("2.1.197", "2.1.332")
SLUG = "-home-dev-proj"
COLUMNS = "session_id, type, data, agent_id, agent_type, tool_use_id"
# Events the import makes that these recorded hook runs could not: the turns' replies
# (the recording predates the Stop hook) and what the client's own commands printed.
HISTORY_ONLY = frozenset({"assistant_reply", "command_output"})


def source(version: str = "2.1.197") -> Path:
    return REPO / "tests" / "fixtures" / f"claude-code-{version}" / "transcripts"


def session_ids(version: str = "2.1.197") -> dict[str, str]:
    doc = json.loads((source(version) / "sessions.json").read_text())
    return dict(doc["sessions"])


def copy_transcripts(tmp_path: Path, version: str = "2.1.197") -> Path:
    """A client config folder holding the recorded transcripts (its ``projects/``)."""
    target = tmp_path / f"claude-{version}"
    shutil.copytree(source(version), target)
    return target


def session_file(claude: Path, scenario: str, version: str = "2.1.197") -> Path:
    return claude / "projects" / SLUG / f"{session_ids(version)[scenario]}.jsonl"


def run_import(claude: Path, *args: str) -> dict[str, Any]:
    result = cli("import", "--json", *args, env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output))


def store_file(root: Path) -> Path:
    stores = sorted((root / "sessions").glob("*.db"))
    assert len(stores) == 1, stores
    return stores[0]


def rows(root: Path, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with sqlite3.connect(store_file(root)) as conn:
        return conn.execute(sql, params).fetchall()


def events(root: Path, session_id: str | None = None) -> list[tuple[Any, ...]]:
    where = "WHERE session_id = ?" if session_id else ""
    params = (session_id,) if session_id else ()
    return rows(root, f"SELECT {COLUMNS} FROM session_events {where} ORDER BY id", *params)


def data_of(root: Path, session_id: str, type_: str) -> list[dict[str, Any]]:
    return [json.loads(r[2]) for r in events(root, session_id) if r[1] == type_]


def run_recorded_hooks(version: str, root: Path) -> None:
    """The hook payloads of the recorded runs, through the real hook processes."""
    env = hook_env(CTXMODE_HOME=str(root))
    for line in (source(version) / "hooks.jsonl").read_text().splitlines():
        payload = json.loads(line)
        done = run_hook(payload["hook_event_name"], payload, env=env)
        assert done.returncode == 0 and not done.stdout and not done.stderr, done


# -- what a transcript becomes -------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_import_makes_the_events_the_hooks_made(
    version: str, tmp_path: Path, data_root: Path
) -> None:
    """Every tool call paired with its result, failures, prompts and subagent calls: the
    same events, field for field, as the hooks recorded from the same runs."""
    claude = copy_transcripts(tmp_path, version)
    hooked_root = tmp_path / "hooked"
    run_recorded_hooks(version, hooked_root)
    hooked = events(hooked_root)
    assert len(hooked) > 15, hooked

    summary = run_import(claude, "--all")

    imported = events(data_root)
    # The recording predates the Stop hook: each turn's reply is compared on its own
    # (test_import_keeps_each_turns_reply); what the client's own commands printed (the
    # 2.1.332 run's /compact) no hook sees (test_user_commands).
    replies = [row for row in imported if row[1] == "assistant_reply"]
    assert replies
    history_only = [row for row in imported if row[1] in HISTORY_ONLY]
    imported = [row for row in imported if row[1] not in HISTORY_ONLY]
    assert sorted(imported) == sorted(hooked)
    assert summary["events_added"] == len(hooked) + len(history_only)
    assert summary["skipped"] == 0 and summary["unknown"] == 0 and summary["truncated"] == 0
    assert summary["files"] == 5  # four sessions and one subagent
    origins = rows(data_root, "SELECT DISTINCT source_hook FROM session_events")
    assert origins == [("import",)]


@pytest.mark.parametrize("version", VERSIONS)
def test_events_the_hooks_captured_are_not_stored_twice(
    version: str, tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path, version)
    run_recorded_hooks(version, data_root)
    hooked = events(data_root)

    summary = run_import(claude, "--all")

    # The recording predates the Stop hook: each turn's reply is what the import adds,
    # with what the client's own commands printed (no hook sees it).
    added = events(data_root)[len(hooked) :]
    assert "assistant_reply" in {row[1] for row in added}
    assert {row[1] for row in added} <= HISTORY_ONLY, added
    assert summary["events_added"] == len(added)
    assert events(data_root)[: len(hooked)] == hooked
    # What the hooks never see is still imported: the compactions' summaries.
    assert summary["compactions"] == 2


def test_keeps_session_ids_times_cwd_and_branch(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    sid = session_ids()["plain"]
    records = [json.loads(line) for line in session_file(claude, "plain").read_text().splitlines()]
    stamps = sorted(r["timestamp"] for r in records if r.get("type") in ("user", "assistant"))
    meta = rows(
        data_root,
        "SELECT started_at, last_event_at, cwd, branch, client, project_dir FROM session_meta "
        "WHERE session_id = ?",
        sid,
    )
    assert meta == [
        (stamps[0], stamps[-1], "/home/dev/proj", "main", "claude_code", "/home/dev/proj")
    ]
    times = [
        r[0]
        for r in rows(data_root, "SELECT created_at FROM session_events WHERE session_id = ?", sid)
    ]
    assert times and all(t in stamps for t in times), (times, stamps)


def test_a_failing_call_is_a_tool_error(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    errors = data_of(data_root, session_ids()["failing"], "tool_error")
    assert len(errors) == 1
    assert errors[0]["tool"] == "Bash"
    assert "KeyError: 'VAT_RATE_DE missing from rates.toml'" in errors[0]["error"]


def test_files_commit_and_tasks_are_read_back(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    sid = session_ids()["plain"]
    assert [d["path"] for d in data_of(data_root, sid, "file_write")] == ["hello.py"]
    assert [d["path"] for d in data_of(data_root, sid, "file_edit")] == ["hello.py"]
    assert [d["message"] for d in data_of(data_root, sid, "git_commit")] == ["Add hello.py"]
    assert [d["subject"] for d in data_of(data_root, sid, "task_create")] == [
        "Document hello.py in the README"
    ]
    prompts = data_of(data_root, sid, "user_prompt")
    assert [p["text"] for p in prompts] == ["create hello.py and commit it"]


def test_only_typed_prompts_are_prompts(tmp_path: Path, data_root: Path) -> None:
    """The client's own turns (/compact's echo, "Continue from where you left off.", the
    compaction summary) are not the person's prompts."""
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    prompts = [p["text"] for p in data_of(data_root, session_ids()["compacted"], "user_prompt")]
    assert prompts == ["BIGCTX write the notes", "what is left?"]


def test_a_slash_command_with_arguments_is_the_prompt_the_hook_gets(
    tmp_path: Path, data_root: Path
) -> None:
    """UserPromptSubmit gets ``/greet Alice`` as typed (the recorded payload); the
    transcript keeps it as ``<command-name>``/``<command-args>`` tags. Import gives the
    same prompt; a command without arguments (``/clear``) is the client's, not a prompt."""
    hook = json.loads(
        (
            REPO / "tests/fixtures/claude-code-2.1.197/more/UserPromptSubmit.slash_command.json"
        ).read_text()
    )["payload"]["prompt"]
    session = "5a5a5a5a-0000-4000-8000-000000000001"

    def user(n: int, text: str) -> str:
        return json.dumps(
            {
                "type": "user",
                "sessionId": session,
                "cwd": "/home/dev/proj",
                "uuid": f"u{n}",
                "timestamp": f"2026-12-02T14:0{n}:00.000Z",
                "message": {"role": "user", "content": text},
            }
        )

    transcript = tmp_path / f"{session}.jsonl"
    transcript.write_text(
        "\n".join(
            [
                user(1, "<command-name>/clear</command-name>\n<command-args></command-args>"),
                user(
                    2,
                    "<command-message>greet</command-message>\n<command-name>/greet</command-name>"
                    "\n<command-args>Alice</command-args>",
                ),
            ]
        )
        + "\n"
    )
    run_import(tmp_path, str(transcript))
    assert [p["text"] for p in data_of(data_root, session, "user_prompt")] == [hook]
    assert hook == "/greet Alice"


def test_compactions_and_their_summaries(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    sid = session_ids()["compacted"]
    found = rows(
        data_root,
        "SELECT compact_seq, trigger, summary, origin FROM compaction WHERE session_id = ? "
        "ORDER BY compact_seq",
        sid,
    )
    summary = "MOCK_SUMMARY: the user asked for work in this project; details were compacted away."
    assert found == [(1, "auto", summary, "import"), (2, "manual", summary, "import")]
    assert rows(data_root, "SELECT compact_count FROM session_meta WHERE session_id = ?", sid) == [
        (2,)
    ]


def test_a_summary_the_hooks_stored_is_kept(tmp_path: Path, data_root: Path) -> None:
    """The conflict rule both sides write with: a summary once stored is never replaced."""
    from ctxmode.store import Store

    claude = copy_transcripts(tmp_path)
    sid = session_ids()["compacted"]
    run_import(claude, "--all", "--dry-run")  # nothing written, but a store path to use
    path = importer.locate("/home/dev/proj", os.environ)[1]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    store = Store.open(path)
    with store.conn:
        store.conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, summary, origin, "
            "created_at) VALUES (?, 1, 'auto', 'from PostCompact', 'hook', '2026-01-01')",
            (sid,),
        )
    store.close()
    run_import(claude, "--all")
    found = rows(
        data_root,
        "SELECT compact_seq, summary, origin FROM compaction WHERE session_id = ? ORDER BY 1",
        sid,
    )
    assert found[0] == (1, "from PostCompact", "hook")
    assert found[1][0] == 2 and found[1][1].startswith("MOCK_SUMMARY") and found[1][2] == "import"


@pytest.mark.parametrize("version", VERSIONS)
def test_subagent_events_carry_the_agent(version: str, tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path, version)
    run_import(claude, "--all")
    sid = session_ids(version)["agent"]
    (sub,) = (claude / "projects" / SLUG / sid / "subagents").glob("agent-*.jsonl")
    agent_id = sub.name[len("agent-") : -len(".jsonl")]
    inner = [r for r in events(data_root, sid) if r[3] is not None]
    assert {(r[1], r[3], r[4]) for r in inner} == {
        ("file_read", agent_id, "general-purpose"),
        ("shell_call", agent_id, "general-purpose"),
        ("git_query", agent_id, "general-purpose"),
    }
    # The subagent's own prompt is no prompt of the person's.
    prompts = [p["text"] for p in data_of(data_root, sid, "user_prompt")]
    assert prompts == ["use a subagent to inspect the README"]


def test_ctxmodes_own_snapshot_echo_is_not_imported(tmp_path: Path, data_root: Path) -> None:
    """The transcript holds ctxmode's <session_resume> (hook_additional_context and the
    hook's stdout): nothing of it becomes an event, even pasted into a prompt."""
    claude = copy_transcripts(tmp_path)
    path = session_file(claude, "compacted")
    text = path.read_text()
    assert text.count("<session_resume") >= 4  # the fixture does hold the echo
    records = [json.loads(line) for line in text.splitlines()]
    prompt = next(
        r for r in records if r.get("type") == "user" and r["message"]["content"] == "what is left?"
    )
    echo = dict(
        prompt,
        uuid="echo",
        message={"role": "user", "content": "<session_resume>old</session_resume>"},
    )
    path.write_text(text + json.dumps(echo) + "\n")
    run_import(claude, "--all")
    stored = [r[2] for r in events(data_root)]
    assert stored and not [d for d in stored if "session_resume" in d or "Facts recorded" in d]


# -- tolerance -------------------------------------------------------------------------------


def test_garbled_unknown_and_truncated_lines_are_counted_not_fatal(
    tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path)
    path = session_file(claude, "plain")
    lines = path.read_text().splitlines(keepends=True)
    bad = [
        '{"type": "user", "message": {"content": "garb\n',
        '{"type":"brand-new-kind","x":1}\n',
        "[1, 2]\n",
    ]
    path.write_text("".join(lines[:3] + bad + lines[3:]) + '{"type":"user","message":{"con')
    summary = run_import(claude, "--all")
    assert (summary["skipped"], summary["unknown"], summary["truncated"]) == (2, 1, 1)
    sid = session_ids()["plain"]
    assert [d["message"] for d in data_of(data_root, sid, "git_commit")] == ["Add hello.py"]
    # The unfinished line is left for later: the offset stops before it.
    progress = rows(data_root, "SELECT offset FROM import_progress WHERE path = ?", str(path))
    assert progress == [(len(path.read_bytes()) - len('{"type":"user","message":{"con'),)]


# -- runs after runs -------------------------------------------------------------------------


def test_a_second_run_adds_nothing_and_opens_nothing(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    first = run_import(claude, "--all")
    before = events(data_root)
    second = run_import(claude, "--all")
    assert first["events_added"] == len(before) > 0
    assert (second["events_added"], second["files"], second["unchanged"]) == (0, 0, 5)
    assert events(data_root) == before


def test_a_grown_transcript_is_read_on_and_a_split_pair_still_pairs(
    tmp_path: Path, data_root: Path
) -> None:
    """Cut right after a tool_use (its result not written yet), import, then append the
    rest: the pair is completed on the second run, and the whole equals one import."""
    whole = copy_transcripts(tmp_path)
    run_import(whole, "--all")
    expected = sorted(events(data_root))

    root2 = tmp_path / "root2"
    claude = copy_transcripts(tmp_path / "split")
    path = session_file(claude, "plain")
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if b'"name":"Bash"' in line) + 1
    path.write_bytes(b"".join(lines[:cut]))
    env = {"CLAUDE_CONFIG_DIR": str(claude), "CTXMODE_HOME": str(root2)}
    first = json.loads(cli("import", "--all", "--json", env=env).output)
    offset = rows(root2, "SELECT offset FROM import_progress WHERE path = ?", str(path))[0][0]
    assert offset == len(b"".join(lines[: cut - 1])), "the offset passed a call without result"
    assert first["events_added"] > 0
    with path.open("ab") as fh:
        fh.write(b"".join(lines[cut:]))
    second = json.loads(cli("import", "--all", "--json", env=env).output)
    assert second["files"] == 1 and second["events_added"] > 0
    assert sorted(events(root2)) == expected


def test_a_replaced_transcript_starts_again(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    run_import(claude, "--all")
    plain, failing = session_file(claude, "plain"), session_file(claude, "failing")
    # The same name, other bytes (longer, so the size alone would not tell).
    plain.write_bytes(failing.read_bytes() + plain.read_bytes())
    summary = run_import(claude, "--all")
    assert summary["files"] == 1
    progress = rows(
        data_root, "SELECT offset, records FROM import_progress WHERE path = ?", str(plain)
    )
    assert progress == [(plain.stat().st_size, len(plain.read_bytes().splitlines()))]


# -- privacy ---------------------------------------------------------------------------------


def _transcript_of(calls: list[secret_corpus.Call], cwd: str) -> str:
    """The corpus's hook calls as the records a transcript holds for them."""
    out = []
    stamp = "2026-12-01T10:00:00.000Z"
    for n, call in enumerate(calls):
        p = call.payload
        base = {"sessionId": "corpus-1", "cwd": cwd, "timestamp": stamp, "uuid": f"u{n}"}
        if call.event == "UserPromptSubmit":
            out.append(
                {**base, "type": "user", "message": {"role": "user", "content": p["prompt"]}}
            )
            continue
        tid = f"toolu_corpus_{n}"
        use = {
            "type": "tool_use",
            "id": tid,
            "name": p["tool_name"],
            "input": p.get("tool_input", {}),
        }
        out.append(
            {**base, "type": "assistant", "message": {"role": "assistant", "content": [use]}}
        )
        if call.event == "PostToolUseFailure":
            result = {
                "type": "tool_result",
                "tool_use_id": tid,
                "is_error": True,
                "content": p.get("error", ""),
            }
            out.append({**base, "type": "user", "message": {"role": "user", "content": [result]}})
        else:
            result = {"type": "tool_result", "tool_use_id": tid, "content": "ok"}
            out.append({**base, "type": "user", "message": {"role": "user", "content": [result]},
                        "toolUseResult": p.get("tool_response")})  # fmt: skip
    # And a compaction whose summary repeats the secrets of the prompts.
    said = "\n".join(str(c.payload.get("prompt", "")) for c in calls)
    out.append({"type": "system", "subtype": "compact_boundary", "sessionId": "corpus-1", "cwd": cwd,
                "timestamp": stamp, "compactMetadata": {"trigger": "auto"}})  # fmt: skip
    out.append({"type": "user", "isCompactSummary": True, "sessionId": "corpus-1", "cwd": cwd,
                "timestamp": stamp, "message": {"role": "user", "content": f"Summary:\n{said}"}})  # fmt: skip
    return "".join(json.dumps(r) + "\n" for r in out)


def test_secrets_in_a_transcript_are_masked(tmp_path: Path, data_root: Path) -> None:
    calls = [
        c
        for c in secret_corpus.corpus(seed=14, per_class=2)
        if c.event in ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit")
    ]
    assert sum(len(c.planted) for c in calls) > 50
    folder = tmp_path / "claude" / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True)
    (folder / "corpus-1.jsonl").write_text(_transcript_of(calls, secret_corpus.PROJECT))
    summary = run_import(tmp_path / "claude", "--all")
    assert summary["events_added"] > 20 and summary["compactions"] == 1
    blobs = {p.name: p.read_bytes() for p in (data_root / "sessions").iterdir() if p.is_file()}
    found = leaks(calls, blobs)
    assert not found, found[:10]


# -- the command -----------------------------------------------------------------------------


def test_summary_line_dry_run_and_files(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    env = {"CLAUDE_CONFIG_DIR": str(claude)}
    dry = cli("import", "--all", "--dry-run", env=env)
    assert dry.exit_code == 0, dry.output
    assert dry.output.startswith("dry run: 5 files, 81 records read"), dry.output
    # 26 the hooks made, 6 turns' replies, and what the client printed for /compact.
    assert "33 events to add" in dry.output and "2 compactions" in dry.output
    assert not (data_root / "sessions").exists() or not list((data_root / "sessions").glob("*.db"))

    one = cli("import", str(session_file(claude, "failing")), env=env)
    one_added = "5 events added"  # 4 the hooks made, and its reply
    assert one.exit_code == 0 and "1 file," in one.output and one_added in one.output
    again = cli("import", "--all", env=env)
    assert "28 events added" in again.output and "1 unchanged" in again.output, again.output


def test_project_and_since_choose_the_files(tmp_path: Path, data_root: Path) -> None:
    claude = copy_transcripts(tmp_path)
    mine = tmp_path / "mine"
    (mine / ".git").mkdir(parents=True)
    path = session_file(claude, "failing")
    path.write_text(path.read_text().replace('"cwd":"/home/dev/proj"', f'"cwd":"{mine}"'))
    env = {"CLAUDE_CONFIG_DIR": str(claude)}

    assert (
        json.loads(cli("import", "--json", "--since", "2099-01-01", "--all", env=env).output)[
            "files"
        ]
        == 0
    )
    assert (
        "no transcripts of this project"
        in cli("import", "--project", str(tmp_path), env=env).output
    )
    mine_only = json.loads(cli("import", "--json", "--project", str(mine), env=env).output)
    assert (mine_only["files"], mine_only["events_added"]) == (1, 5)  # its reply too
    os.utime(path, (1_000_000_000, 1_000_000_000))  # 2001
    recent = json.loads(cli("import", "--json", "--all", "--since", "7", env=env).output)
    assert recent["files"] + recent["unchanged"] == 4  # the 2001 file is left out


@pytest.mark.parametrize("bad", ["yesterday", "-3", "inf"])
def test_a_bad_since_is_a_usage_error(bad: str, tmp_path: Path) -> None:
    result = cli("import", "--all", "--since", bad, env={"CLAUDE_CONFIG_DIR": str(tmp_path)})
    assert result.exit_code == 2 and "--since" in result.output, result.output


def test_files_and_all_exclude_each_other(tmp_path: Path) -> None:
    claude = copy_transcripts(tmp_path)
    result = cli("import", "--all", str(session_file(claude, "plain")))
    assert result.exit_code == 2 and "not both" in result.output


def test_reader_offsets_stay_at_line_ends() -> None:
    """Whatever prefix of a transcript is read, the offset is a line end before any
    tool_use still waiting for its result."""
    data = (source() / "projects" / SLUG / f"{session_ids()['plain']}.jsonl").read_bytes()
    for cut in range(0, len(data), 97):
        chunk = transcripts.read(data[:cut])
        assert chunk.offset == 0 or data[chunk.offset - 1 : chunk.offset] == b"\n"
        rest = transcripts.read(data, chunk.offset)
        assert rest.offset == len(data)


# -- doctor ----------------------------------------------------------------------------------


def _transcript_check(project: Path, claude: Path) -> dict[str, Any]:
    result = cli(
        "doctor", "--json", "--project", str(project), env={"CLAUDE_CONFIG_DIR": str(claude)}
    )
    checks = json.loads(result.output)["checks"]
    (found,) = [c for c in checks if c["name"] == "transcripts"]
    return dict(found)


def test_doctor_says_how_many_transcripts_are_not_imported(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / ".git").mkdir(parents=True)
    claude = copy_transcripts(tmp_path)
    folder = claude / "projects" / transcripts.slug(str(mine))
    (claude / "projects" / SLUG).rename(folder)
    for path in folder.rglob("*.jsonl"):
        path.write_text(path.read_text().replace('"cwd":"/home/dev/proj"', f'"cwd":"{mine}"'))
    first = _transcript_check(mine, claude)
    assert first["status"] == "warn", first
    assert first["summary"] == (
        "4 transcripts of this project not imported (ctxmode import); "
        "4 sessions of them not in the store at all"
    )
    assert "ctxmode import" in first["fix"]

    cli("import", "--project", str(mine), env={"CLAUDE_CONFIG_DIR": str(claude)})
    done = _transcript_check(mine, claude)
    assert (done["status"], done["summary"]) == ("ok", "all 4 transcripts of this project imported")

    with (folder / f"{session_ids()['plain']}.jsonl").open("a") as fh:
        fh.write('{"type":"last-prompt"}\n')
    grown = _transcript_check(mine, claude)
    assert grown["status"] == "ok" and grown["summary"].startswith("1 transcript of this project")
    # Another project's transcripts are not this project's.
    other = _transcript_check(tmp_path, claude)
    assert other["summary"].startswith("no transcripts of this project")


def test_the_bench_measures_the_import() -> None:
    from ctxmode.bench.imports import measure

    figure = measure(300_000)
    assert figure.bytes >= 300_000 and figure.records > 100 and figure.events > 10
    assert figure.mb_per_second > 0


def test_a_call_interrupted_by_a_new_prompt_does_not_hold_the_offset() -> None:
    """A tool_use that never got its result (the person interrupted, then typed again)
    must not keep every later import re-reading the file from there."""
    records = [
        {"type": "user", "sessionId": "s", "message": {"content": "first"}},
        {"type": "assistant", "sessionId": "s", "message": {"content": [
            {"type": "tool_use", "id": "toolu_lost", "name": "Bash", "input": {"command": "sleep 99"}}]}},
        {"type": "user", "sessionId": "s", "message": {"content": "never mind, second"}},
    ]  # fmt: skip
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    assert transcripts.read(data[: data.index(b"never") - 60]).offset < len(data)
    chunk = transcripts.read(data)
    assert chunk.offset == len(data)
    prompts = [item.inp.prompt for item in chunk.items if isinstance(item, transcripts.Call)]
    assert prompts == ["first", "never mind, second"]


def test_an_imported_session_records_its_worktree_when_the_folder_exists(
    tmp_path: Path, data_root: Path
) -> None:
    claude = copy_transcripts(tmp_path)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    plain = session_file(claude, "plain")
    plain.write_text(plain.read_text().replace('"/home/dev/proj"', json.dumps(str(repo))))
    run_import(claude, str(plain))
    sid = session_ids()["plain"]
    meta = rows(data_root, "SELECT cwd, worktree FROM session_meta WHERE session_id = ?", sid)
    assert meta == [(str(repo), str(repo.resolve()))]


def test_imported_events_take_their_place_in_the_calls_order(
    tmp_path: Path, data_root: Path
) -> None:
    """The store reads a session in call order; an imported call's place is its time in the
    transcript, so it sorts among the hooks' events by when it happened."""
    from ctxmode import paths
    from ctxmode.events import make
    from ctxmode.store import Store, parse_iso

    claude = copy_transcripts(tmp_path)
    sid = session_ids()["plain"]
    records = [json.loads(line) for line in session_file(claude, "plain").read_text().splitlines()]
    first = min(r["timestamp"] for r in records if r.get("type") in ("user", "assistant"))
    before = int((parse_iso(first) - 60) * 1_000_000_000)  # a minute before the transcript
    path = paths.store_path("/home/dev/proj", os.environ)
    paths.ensure_dir(os.path.dirname(path))
    with Store.open(path) as store:
        early = make("decision", {"text": "an earlier call the hooks saw"})
        store.add_events(sid, [early], source_hook="PostToolUse", project_dir="/home/dev/proj",
                         call_at=before)  # fmt: skip
    run_import(claude, "--all")
    with Store.open(path) as store:
        read = store.session_events(sid)
    assert read[0].type == "decision", [e.type for e in read]
    imported = [e.created_at for e in read if e.source_hook == "import"]
    assert imported and imported == sorted(imported)


def test_a_first_prompt_of_megabytes_still_places_the_file(tmp_path: Path, data_root: Path) -> None:
    """The cwd that places a transcript in a project is read from its first records,
    however long their lines: a first prompt with a pasted image is a line of megabytes
    (a public 2.0.74 session's first prompt is 308 KB), and a file placed nowhere would
    not be imported at all."""
    claude = copy_transcripts(tmp_path)
    path = session_file(claude, "plain")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    first = next(i for i, r in enumerate(records) if r.get("type") == "user")
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": "iVBORw0KGgo" * 300_000}}  # fmt: skip
    text = records[first]["message"]["content"]
    records[first]["message"]["content"] = [image, {"type": "text", "text": text}]
    for record in records[:first]:
        record.pop("cwd", None)  # (as the bookkeeping records before a first prompt)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert len(path.read_bytes().split(b"\n")[first]) > 3_000_000

    assert transcripts.head_cwd(str(path)) == ("/home/dev/proj", session_ids()["plain"])
    summary = run_import(claude, str(path))
    assert summary["files"] == 1 and summary["unplaced"] == 0
    prompts = data_of(data_root, session_ids()["plain"], "user_prompt")
    assert [p["text"] for p in prompts] == [text]


def test_a_file_that_names_no_working_directory_is_said_not_imported(tmp_path: Path) -> None:
    path = tmp_path / "titles.jsonl"
    path.write_text(json.dumps({"type": "summary", "summary": "A title", "leafUuid": "x"}) + "\n")
    result = cli("import", str(path))
    assert result.exit_code == 0, result.output
    assert "1 file not imported (no working directory in it)" in result.output
    assert json.loads(cli("import", "--json", str(path)).output)["unplaced"] == 1
