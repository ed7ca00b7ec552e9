"""What a lookup finds that used to be stored nowhere (issue 28, third round).

Each rule comes from a class of questions whose answer no event held: the text an agent
ended its turn with, a Windows host's PowerShell calls, what a background command printed
while it still ran, and a line from the middle of a long output. Every new field is
checked masked (a secret planted in it never reaches the store) and bounded.

Hook payloads run through the installed hook command; transcripts through ``ctxmode
import``. The shapes are the recorded ones: ``tests/fixtures/claude-code-2.1.197/``
(Stop, Bash), and the records of public Claude Code 2.0.8 (BashOutput) and 2.1.x
(PowerShell) transcripts, reduced to the fields the client writes.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from ctxmode.extract import replies
from ctxmode.extract.bash import OUTPUT_HEAD, OUTPUT_MIDDLE, OUTPUT_TAIL
from ctxmode.hosts.claude_code import history
from tests.helpers import cli, hook_payload
from tests.hooktools import hook_env, run_hook
from tests.test_shell_calls import GH_TOKEN, OPENAI_KEY, assert_no_secret, of_type, stored

REPO = Path(__file__).resolve().parents[1]
RECORDED = REPO / "tests" / "fixtures" / "claude-code-2.1.197"
PLAIN = RECORDED / "transcripts" / "projects" / "-home-dev-proj"
PLAIN_ID = "72dd3799-4aa5-457d-b052-707b7ee060b0"


def claude_call(project: Path, tool: str, tool_input: dict[str, Any], response: Any) -> None:
    payload = hook_payload(
        "PostToolUse",
        session_id="s1",
        cwd=str(project),
        tool_name=tool,
        tool_use_id="toolu_r1",
        tool_input=tool_input,
        tool_response=response,
    )
    proc = run_hook("PostToolUse", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


# ------------------------------------------------------------------ PowerShell


def test_a_powershell_call_is_kept_as_a_shell_call(project: Path) -> None:
    command = f'$env:GH_TOKEN = "{GH_TOKEN}"\n$PSVersionTable.PSVersion | Format-List'
    claude_call(
        project,
        "PowerShell",
        {"command": command, "description": "Check the PowerShell version"},
        {"stdout": "PSVersion: 5.1.26100.8115\n", "stderr": "", "interrupted": False,
         "isImage": False},
    )  # fmt: skip
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    assert call["output"] == "PSVersion: 5.1.26100.8115"
    assert call["description"] == "Check the PowerShell version"
    assert call["exit"] == 0 and "$PSVersionTable" in call["command"]
    assert_no_secret(rows)


# ------------------------------------------------------------------ background reads


def bash_output(status: str, stdout: str, stderr: str) -> dict[str, Any]:
    """A BashOutput result as Claude Code 2.0.8 writes it (its toolUseResult)."""
    return {
        "shellId": "176231",
        "command": "npm run dev",
        "status": status,
        "exitCode": None,
        "stdout": stdout,
        "stderr": stderr,
        "stdoutLines": stdout.count("\n") + 1,
        "stderrLines": stderr.count("\n") + 1,
        "timestamp": "2025-11-08T19:41:44.783Z",
    }


def test_what_a_running_background_command_printed_is_kept(project: Path) -> None:
    stdout = "> app@0.1.0 dev\n> next dev\n\n   - Local:        http://localhost:3001\n"
    stderr = f" ⚠ Port 3000 is in use, trying 3001 instead.\nusing {OPENAI_KEY}"
    claude_call(
        project, "BashOutput", {"bash_id": "176231"}, bash_output("running", stdout, stderr)
    )
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    assert call["status"] == "running" and call["task"] == "176231"
    assert call["command"] == "npm run dev" and "exit" not in call
    assert "Port 3000 is in use, trying 3001 instead." in call["output"]
    assert "localhost:3001" in call["output"]
    assert_no_secret(rows)


def test_a_running_background_command_that_printed_nothing_keeps_nothing(project: Path) -> None:
    claude_call(project, "BashOutput", {"bash_id": "176231"}, bash_output("running", "", ""))
    assert of_type(stored(project), "shell_call") == []


# ------------------------------------------------------------------ the middle of an output


def build_log(middle: list[str]) -> str:
    """300 lines of a build (12 KB: the hooks get it whole) with ``middle`` put in the
    middle."""
    lines = [f" ✓ Compiled /page_{n} in {n % 90 + 100}ms ({n + 700} modules)" for n in range(300)]
    lines[150:150] = middle
    return "\n".join(lines)


def build_output(project: Path, command: str, middle: list[str]) -> str:
    """The ``output`` stored of a Bash call that printed :func:`build_log` of ``middle``."""
    claude_call(
        project,
        "Bash",
        {"command": command},
        {"stdout": build_log(middle), "stderr": "", "interrupted": False, "isImage": False},
    )
    (call,) = of_type(stored(project), "shell_call")
    return str(call["output"])


def assert_kept(project: Path, command: str, lines: list[str]) -> None:
    """Each of ``lines``, printed in the middle of a long output of ``command``, is stored."""
    output = build_output(project, command, lines)
    for line in lines:
        assert line.strip() in output, line


def test_error_lines_from_the_middle_of_a_long_output_are_kept(project: Path) -> None:
    middle = [
        "Attempted import error: 'db' is not exported from '@/lib/db'",
        f"Error: fetch failed with token {GH_TOKEN}",
    ]
    claude_call(
        project,
        "Bash",
        {"command": "npm run build", "description": "Build"},
        {"stdout": build_log(middle), "stderr": "", "interrupted": False, "isImage": False},
    )
    rows = stored(project)
    (call,) = of_type(rows, "shell_call")
    output = call["output"]
    assert "Attempted import error: 'db' is not exported from '@/lib/db'" in output
    assert "Error: fetch failed with token [REDACTED" in output
    assert output.startswith(" ✓ Compiled /page_0 ") and output.endswith("(999 modules)")
    # Head, the lines from the middle, tail: each within its bound.
    head, kept, tail = output.split("\n…\n")
    assert len(head) <= OUTPUT_HEAD and len(tail) <= OUTPUT_TAIL
    assert len(kept) <= OUTPUT_MIDDLE
    assert_no_secret(rows)


def test_a_test_runners_failures_from_the_middle_are_kept(project: Path) -> None:
    """A test run's failures sit between its progress and its summary, each a header
    line and the message under it ("NoMethodError:" / "undefined method …"); a type
    checker's errors are ~200 characters each: the middle keeps several of them."""
    failures = [
        "  1) Staffers::ReminderChatLinksComponent renders the links",
        "     Failure/Error: care_case.chats.for_care_case(care_case)",
        "     NoMethodError:",
        "       undefined method 'for_care_case' for an instance of Array",
        "src/profile.ts(12,7): error TS2739: Type '{ id: string; }' is missing the following "
        "properties from type 'Profile': full_name, avatar_url, created_at, updated_at, role",
        "src/app.tsx(3,1): error TS6059: File 'C:/work/shared/types.ts' is not under 'rootDir' "
        "'C:/work/apps/web/src'. 'rootDir' is expected to contain all source files.",
    ]
    output = build_output(project, "bundle exec rspec && pnpm typecheck", failures)
    for line in failures[2:]:
        assert line.strip() in output, line
    assert len(output.split("\n…\n")[1]) <= OUTPUT_MIDDLE


def test_what_came_of_a_step_in_the_middle_is_kept(project: Path) -> None:
    """Two commands' outputs run together: the first one's summary is in the middle."""
    steps = [
        " 15 files changed, 77 insertions(+), 533 deletions(-)",
        "dist/assets/index-vBbLPBlL.js   591.92 kB │ gzip: 181.04 kB",
    ]
    assert_kept(project, "git diff --stat HEAD && npm run build", steps)


def test_an_error_line_the_heads_cut_splits_is_kept_whole(project: Path) -> None:
    """The head ends at a line end: a long error line that starts inside it and runs past
    its bound is dropped from the head, and is a line of the middle (the part between
    starts where the head stopped, not at its bound)."""
    error = (
        "SyntaxError: Named export 'chromium' not found. The requested module "
        "'/srv/app/node_modules/playwright-core/index.js' is a CommonJS module, which may "
        "not support all module.exports as named exports."
    )
    opening = "file:///tmp/check.mjs:3\n" + "import { chromium } from 'x';\n" * 5
    assert OUTPUT_HEAD // 2 < len(opening) < OUTPUT_HEAD < len(opening) + len(error)
    stack = "\n".join(f"    at frame{n} (node:internal/x:{n}:5)" for n in range(40))
    claude_call(
        project,
        "Bash",
        {"command": "node check.mjs 2>&1"},
        {"stdout": opening + error + "\n" + stack, "stderr": "", "interrupted": False},
    )
    (call,) = of_type(stored(project), "shell_call")
    assert "SyntaxError: Named export 'chromium' not found." in call["output"]


def test_a_line_naming_what_the_command_looked_for_is_kept(project: Path) -> None:
    lines = [f"src/module_{n}.ts:{n}: export const value{n} = {n};" for n in range(250)]
    lines[120] = "src/sync/manager.ts:57:    public setIsBackfillingBudgetData(flag: boolean) {"
    claude_call(
        project,
        "Bash",
        {"command": "cat src/*.ts | grep -n -e export -e setIsBackfillingBudgetData"},
        {"stdout": "\n".join(lines), "stderr": "", "interrupted": False, "isImage": False},
    )
    (call,) = of_type(stored(project), "shell_call")
    assert "57:    public setIsBackfillingBudgetData(flag: boolean) {" in call["output"]


def test_a_long_output_with_nothing_standing_out_keeps_head_and_tail_only(project: Path) -> None:
    claude_call(
        project,
        "Bash",
        {"command": "npm run build"},
        {"stdout": build_log([]), "stderr": "", "interrupted": False, "isImage": False},
    )
    (call,) = of_type(stored(project), "shell_call")
    assert call["output"].count("\n…\n") == 1


# ------------------------------------------------------------------ the turn's reply


def transcript(tmp_path: Path, edit: Any) -> Path:
    """A client folder holding the recorded plain session, its records passed through
    ``edit`` (records → records)."""
    claude = tmp_path / "claude"
    folder = claude / "projects" / "-home-dev-proj"
    folder.mkdir(parents=True)
    records = [json.loads(line) for line in (PLAIN / f"{PLAIN_ID}.jsonl").read_text().splitlines()]
    records = edit(records)
    (folder / f"{PLAIN_ID}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return claude


def imported_replies(claude: Path, data_root: Path) -> list[str]:
    result = cli("import", "--json", "--all", env={"CLAUDE_CONFIG_DIR": str(claude)})
    assert result.exit_code == 0, result.output
    import sqlite3

    (store,) = sorted((data_root / "sessions").glob("*.db"))
    with sqlite3.connect(store) as conn:
        rows = conn.execute(
            "SELECT data FROM session_events WHERE type = 'assistant_reply' ORDER BY id"
        ).fetchall()
    return [json.loads(data)["text"] for (data,) in rows]


def final_text(records: list[dict[str, Any]]) -> dict[str, Any]:
    return next(r for r in reversed(records) if r.get("type") == "assistant")


def test_the_text_a_turn_ended_with_is_imported(tmp_path: Path, data_root: Path) -> None:
    claude = transcript(tmp_path, lambda records: records)
    assert imported_replies(claude, data_root) == [
        "Wrote hello.py, committed it, and opened a task."
    ]


def test_a_reply_is_masked_and_bounded(tmp_path: Path, data_root: Path) -> None:
    body = "\n".join(f"- finding {n}: the module_{n} check passed" for n in range(300))
    text = f"Summary first.\nThe deploy key was {GH_TOKEN}\n{body}\nRun `! sudo pacman -S figlet`."

    def edit(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        final_text(records)["message"]["content"][0]["text"] = text
        return records

    (reply,) = imported_replies(transcript(tmp_path, edit), data_root)
    assert reply.startswith("Summary first.\nThe deploy key was [REDACTED")
    assert reply.endswith("Run `! sudo pacman -S figlet`.")
    assert len(reply) <= replies.REPLY_HEAD + replies.REPLY_TAIL + 3
    assert GH_TOKEN[:12] not in reply


def test_an_older_clients_reply_is_the_last_text_before_the_next_prompt(
    tmp_path: Path, data_root: Path
) -> None:
    """Records without a stop_reason (clients before ~2.1): the text before a tool call
    is not a reply; the last text before the next prompt is."""

    def edit(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for record in records:
            if record.get("type") == "assistant":
                record["message"]["stop_reason"] = None
        final = final_text(records)
        index = records.index(final)
        before_tool = json.loads(json.dumps(final))
        before_tool["message"]["content"][0]["text"] = "Let me create the file first."
        first_tool = next(i for i, r in enumerate(records) if r.get("type") == "assistant")
        prompt = next(r for r in records if r.get("type") == "user")
        again = json.loads(json.dumps(prompt))
        again["message"]["content"] = "thanks"
        return [
            *records[:first_tool],
            before_tool,
            *records[first_tool : index + 1],
            again,
            *records[index + 1 :],
        ]

    assert imported_replies(transcript(tmp_path, edit), data_root) == [
        "Wrote hello.py, committed it, and opened a task."
    ]


def test_an_older_clients_last_reply_waits_for_the_next_prompt() -> None:
    """Without a stop_reason and nothing after it, the text may still be followed by a
    tool call: nothing is made of it yet, and the offset stays before it."""
    lines = (PLAIN / f"{PLAIN_ID}.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:
        if record.get("type") == "assistant":
            record["message"]["stop_reason"] = None
    data = "".join(json.dumps(r) + "\n" for r in records).encode()
    chunk = history.read(data)
    events = [item.inp.event for item in chunk.items if isinstance(item, history.Call)]
    assert "Stop" not in events
    final = data.rfind(b'"type": "assistant"')
    assert chunk.offset == data.rfind(b"\n", 0, final) + 1


def test_a_subagents_text_is_not_a_reply(tmp_path: Path) -> None:
    source = PLAIN / f"{PLAIN_ID}.jsonl"
    shutil.copy(source, tmp_path / "agent-a1.jsonl")
    data = source.read_bytes()
    chunk = history.read(data, agent_id="a1", agent_type="general-purpose")
    events = [item.inp.event for item in chunk.items if isinstance(item, history.Call)]
    assert "Stop" not in events and "PostToolUse" in events


# ------------------------------------------------------------------ ranking


def ranked(tmp_path: Path, events: list[Any], query: str) -> list[str]:
    """The types of the hits for ``query`` over ``events`` (one a minute, in order),
    best first; a hit's type is suffixed with its place in ``events``."""
    from ctxmode.store import Store

    store = Store.open(str(tmp_path / "s.db"))
    try:
        for n, event in enumerate(events):
            store.add_events(
                "s1", [event], source_hook="PostToolUse", project_dir="/p",
                now=f"2026-12-02T14:{n:02d}:00.000Z",
            )  # fmt: skip
        order = {int(e.id or 0): n for n, e in enumerate(store.session_events("s1"))}
        return [f"{h.type}{order[int(h.id or 0)]}" for h in store.search(query, limit=5)]
    finally:
        store.close()


def test_the_terms_on_one_line_rank_above_the_same_terms_scattered(tmp_path: Path) -> None:
    """Two calls of the same length hold the question's words once each: one on a line
    (a description says what the call did), the other on lines apart. The first ranks
    first, older though it is."""
    from ctxmode.events import make

    noise = "\n".join(f"entry {n}: unrelated value" for n in range(6))
    events = [
        make("shell_call", {"command": "nft -f a.nft", "description": "add dns accept rule",
                            "exit": 0, "output": f"aaa\n{noise}\nbbb ccc\n{noise}\nddd"}),
        make("shell_call", {"command": "nft -f b.nft", "description": "xxx yyy zzz www",
                            "exit": 0, "output": f"add\n{noise}\ndns accept\n{noise}\nrule"}),
    ]  # fmt: skip
    assert ranked(tmp_path, events, "Which rule did we add to accept DNS?")[0] == "shell_call0"


def test_a_decision_that_repeats_a_prompt_does_not_take_a_second_place(tmp_path: Path) -> None:
    from ctxmode.events import make

    text = "Use ROUND_HALF_UP for every money amount in the invoice totals"
    events = [
        make("user_prompt", {"text": text}),
        make("decision", {"text": text}),
        make("git_commit", {"message": "Round invoice totals half up", "sha": "1a2b3c4"}),
    ]
    hits = ranked(tmp_path, events, "how are invoice totals rounded, money amount")
    assert hits[:2] in (["decision1", "git_commit2"], ["user_prompt0", "git_commit2"]), hits


def test_a_reply_is_weighed_as_any_event(tmp_path: Path) -> None:
    """What the agent said of its calls is weighed as the calls are: the same words in a
    call and in the reply after it rank by age alone (the newer first), and a reply that
    holds more of the question's words ranks above the call."""
    from ctxmode.events import make

    said = "All 8 endpoint tests pass for the auth API"
    same = [make("shell_call", {"command": said}), make("assistant_reply", {"text": said})]
    assert ranked(tmp_path / "same", same, "auth endpoint tests pass") == [
        "assistant_reply1",
        "shell_call0",
    ]
    events = [
        make("assistant_reply", {"text": "All 8 endpoint tests pass: login, refresh and "
                                         "logout of the auth API are done."}),
        make("shell_call", {"command": "pytest tests/test_auth_endpoints.py -q", "exit": 0,
                            "output": "........ [100%]"}),
    ]  # fmt: skip
    assert ranked(tmp_path, events, "auth endpoint tests pass count")[0] == "assistant_reply0"


# ------------------------------------------------------------------ the Stop hook


def stop_payload(project: Path, text: str | None) -> dict[str, Any]:
    """The Stop payload Claude Code 2.1.197 sends (tests/fixtures/.../Stop.json), in
    ``project``, ending its turn with ``text``."""
    recorded = json.loads((RECORDED / "Stop.json").read_text())["payload"]
    payload = {**recorded, "cwd": str(project), "session_id": "s1"}
    if text is None:
        del payload["last_assistant_message"]
    else:
        payload["last_assistant_message"] = text
    return payload


def test_the_stop_hook_keeps_the_turns_reply_masked(project: Path) -> None:
    text = f"Done: the port is 5173.\nI used the key {OPENAI_KEY} from .env."
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    proc = run_hook("Stop", stop_payload(project, text), env=env)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")  # nothing to block on
    rows = stored(project)
    (reply,) = of_type(rows, "assistant_reply")
    assert reply["text"].startswith("Done: the port is 5173.\nI used the key [REDACTED")
    assert_no_secret(rows)


def test_a_stop_without_a_reply_keeps_nothing(project: Path) -> None:
    """An older client's Stop has no last_assistant_message; an empty one says nothing."""
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    for text in (None, "", "  \n"):
        proc = run_hook("Stop", stop_payload(project, text), env=env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")
    from ctxmode import paths

    store = paths.store_path(str(project), os.environ)
    assert not os.path.exists(store) or of_type(stored(project), "assistant_reply") == []


# ------------------------------------------------------------------ the IDE's notes


def test_the_ides_note_of_an_opened_file_is_not_part_of_a_prompt(
    tmp_path: Path, data_root: Path
) -> None:
    """Claude Code 2.0.x sends the IDE's note as a text block of the prompt: the user's
    words are the prompt, the note is left out (and a note alone is no prompt)."""
    note = (
        "<ide_opened_file>The user opened the file /home/dev/proj/src/sync.sql in the IDE. "
        "This may or may not be related to the current task.</ide_opened_file>"
    )

    def edit(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        prompt = next(r for r in records if r.get("type") == "user")
        alone = json.loads(json.dumps(prompt))
        alone["message"]["content"] = [{"type": "text", "text": note}]
        words = prompt["message"]["content"]
        prompt["message"]["content"] = [
            {"type": "text", "text": note},
            {"type": "text", "text": words},
        ]
        return [alone, *records]

    result = cli(
        "import", "--json", "--all", env={"CLAUDE_CONFIG_DIR": str(transcript(tmp_path, edit))}
    )
    assert result.exit_code == 0, result.output
    import sqlite3

    (store,) = sorted((data_root / "sessions").glob("*.db"))
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT data FROM session_events WHERE type = 'user_prompt'").fetchall()
    assert [json.loads(data)["text"] for (data,) in rows] == ["create hello.py and commit it"]
