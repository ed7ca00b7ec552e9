#!/usr/bin/env python3
"""Record the hook payloads of the real Claude Code CLI into tests/fixtures/claude-code-<version>/.

    python3 scripts/record_fixtures.py                    # the pinned version, into a new folder
    python3 scripts/record_fixtures.py --version latest   # a new client release
    python3 scripts/record_fixtures.py --out /tmp/rec --only top

It runs the real ``claude`` CLI (installed from npm into the e2e cache, see
tests/e2e/claude_cli.py) in print mode against the e2e suite's scripted mock of the Messages
API, in a temporary HOME with a temporary project. A recording hook, registered for every hook
event in ``~/.claude/settings.json``, appends what it read on stdin and its ``CLAUDE*``
environment to a file. The records are then normalised (HOME becomes ``/home/dev``, the
project ``/home/dev/proj``, also in the client's mangled ``~/.claude/projects`` names) and
written in the format tests/fixtures/README.md describes:

- ``<Event>[.<detail>].json``: the first payload of each kind from the "top" runs (a session
  doing real work, then resume, continue, /compact, /compact with instructions, /clear,
  auto-compaction and another model), and ``stream.print-mode.jsonl``: all of their calls;
- ``more/<Event>.<Tool>.<detail>.json`` and ``more/stream.jsonl``: the other tools (Read, Glob,
  Grep, Edit, Write, NotebookEdit, the task tools, Bash chores, an MCP tool, a skill and a
  slash command, subagents of two types, a prompt with a ``<private>`` span, WebFetch's
  failing preflight).

Not reproduced by this script (they come from the original hand-run capture of 2.1.197 and
are kept as they are): WebFetch over TLS and plain HTTP, WebSearch, the plan-mode and
AskUserQuestion tools (``--permission-prompt-tool``) and the ``interactive.*`` files of a
session typed into the terminal UI.

Every ``claude`` run must exit 0 and leave the mock no script errors; the script stops with a
message otherwise. Re-recording changes commit hashes, session ids and timings: run the suite
against the new folder and review what changed (see tests/fixtures/README.md).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e import claude_cli  # noqa: E402
from tests.e2e.mock_api import (  # noqa: E402
    SUBAGENT_MARK,
    MockAPI,
    Reply,
    Request,
    Steps,
    ToolCall,
    load_tools,
    say,
)

FAKE_HOME = "/home/dev"
HUGE_USAGE = 150_000
# Every hook event 2.1.197 fires in print mode (an unknown name would invalidate the settings).
EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PreCompact",
    "PostCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "TaskCreated",
    "TaskCompleted",
    "CwdChanged",
    "MessageDisplay",
    "PermissionRequest",
)
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest")

RECORD_HOOK = """\
import fcntl, json, os, sys
raw = sys.stdin.buffer.read().decode("utf-8", "replace")
env = {k: v for k, v in os.environ.items() if k.startswith("CLAUDE")}
line = json.dumps({"scenario": os.environ.get("CTXMODE_RECORD_SCENARIO", ""),
                   "hook_env": env, "raw": raw})
with open(os.environ["CTXMODE_RECORD_OUT"], "a", encoding="utf-8") as fh:
    fcntl.flock(fh, fcntl.LOCK_EX)
    fh.write(line + "\\n")
"""

MCP_SERVER = """\
import json, sys
def send(msg):
    sys.stdout.write(json.dumps(msg) + "\\n"); sys.stdout.flush()
for line in sys.stdin:
    try:
        req = json.loads(line)
    except ValueError:
        continue
    if "id" not in req:
        continue
    method, rid = req.get("method"), req["id"]
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "protocolVersion": req["params"].get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}}, "serverInfo": {"name": "mockdir", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [{
            "name": "lookup", "description": "Look up a service in the directory.",
            "inputSchema": {"type": "object", "properties": {
                "query": {"type": "string"}, "api_key": {"type": "string"}},
                "required": ["query"]}}]}})
    elif method == "tools/call":
        query = req["params"].get("arguments", {}).get("query", "")
        if query == "missing":
            result = {"content": [{"type": "text", "text": "no entry named missing"}],
                      "isError": True}
        else:
            result = {"content": [{"type": "text", "text":
                      f"lookup result for {query}: owner=alice, region=eu-west-1"}]}
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    else:
        send({"jsonrpc": "2.0", "id": rid, "result": {}})
"""

PROJECT_FILES = {
    "README.md": "# Demo project\n\nA small invoice demo used to capture hook payloads.\n"
    "See src/app.py.\n",
    "src/app.py": '"""Invoice helpers."""\n\n\ndef old_name(lines):\n    # TODO: round half-up\n'
    "    return sum(lines)\n\n\ndef total(lines):\n    return old_name(lines)\n\n\n"
    'ALIASES = {"sum": old_name}\n',
    "src/util.py": "# TODO: add CSV export\n",
    "notes.txt": "Notes\n- first draft\n",
    "analysis.ipynb": json.dumps(
        {
            "cells": [
                {
                    "cell_type": "code",
                    "id": "cell-a",
                    "metadata": {},
                    "source": ["x = 1 + 1\n", "print(x)"],
                    "outputs": [],
                    "execution_count": None,
                },
                {
                    "cell_type": "markdown",
                    "id": "cell-b",
                    "metadata": {},
                    "source": ["# Notes\n", "Plain text."],
                },
            ],
            "metadata": {"language_info": {"name": "python"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    ),
    ".claude/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greet someone by name.\n"
    "---\n\nGreet $ARGUMENTS warmly, in one sentence.\n",
    ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code briefly.\n"
    "tools: Read, Bash\n---\n\nYou review code and report one finding.\n",
}


# -- the mock model ----------------------------------------------------------------------------


class Director(Steps):
    """``Steps`` whose tool calls carry ids that name them, and whose subagents use tools.

    A tool call's id is ``toolu_<scenario>_<n>_<label>``: the label becomes the fixture's
    detail (``PostToolUse.Bash.cd_ls``). A subagent (its prompt holds ``[scn:sub_inner]``)
    reads README.md, runs ``git status --short`` and reports.
    """

    def __init__(self) -> None:
        super().__init__()
        self.labels: dict[str, str] = {}
        self.count = 0

    def tool(self, scenario: str, label: str, name: str, **tool_input: Any) -> ToolCall:
        self.count += 1
        tool_id = "_".join(x for x in ("toolu", scenario, str(self.count), label) if x)
        self.labels[tool_id] = label
        return ToolCall(name, tool_input, id=tool_id)

    def call(
        self, scenario: str, label: str, name: str, input_tokens: int = 50, **tool_input: Any
    ) -> Callable[[Request], Reply]:
        # Built when played: a ToolCall is mutated by the server (its id), so one per reply.
        def step(_req: Request) -> Reply:
            return Reply(
                tools=[self.tool(scenario, label, name, **tool_input)], input_tokens=input_tokens
            )

        return step

    def __call__(self, req: Request) -> Reply:
        if not req.is_compaction and "[scn:sub_inner]" in req.first_user_text():
            done = len(req.tool_results())
            if done == 0:
                return Reply(tools=[self.tool("sub_inner", "", "Read", file_path=self.readme)])
            if done == 1:
                return Reply(
                    tools=[
                        self.tool(
                            "sub_inner",
                            "",
                            "Bash",
                            command="git status --short",
                            description="Show short status",
                        )
                    ]
                )
            return say("Subagent report: the README names src/app.py.")
        return super().__call__(req)

    readme = ""


# -- the recording ---------------------------------------------------------------------------


class Recorder:
    def __init__(self, install: claude_cli.ClaudeInstall, work: Path) -> None:
        self.install = install
        self.home = work / "home"
        self.proj = self.home / "proj"
        self.out = work / "records.jsonl"
        (self.home / ".claude").mkdir(parents=True)
        hook = work / "record_hook.py"
        hook.write_text(RECORD_HOOK)
        command = f"'{sys.executable}' '{hook}'"
        settings = {
            "hooks": {
                event: [{"hooks": [{"type": "command", "command": command, "timeout": 10}]}]
                for event in EVENTS
            }
        }
        (self.home / ".claude" / "settings.json").write_text(json.dumps(settings, indent=2))
        self.mcp_config = work / "mcp.json"
        (work / "mcp_server.py").write_text(MCP_SERVER)
        self.mcp_config.write_text(
            json.dumps(
                {
                    "mcpServers": {
                        "mockdir": {
                            "type": "stdio",
                            "command": sys.executable,
                            "args": [str(work / "mcp_server.py")],
                        }
                    }
                }
            )
        )
        self.director = Director()
        self.api = MockAPI(self.director, max_requests=600, max_seconds=1800).start()

    def env(self, scenario: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        values = {
            "ANTHROPIC_BASE_URL": self.api.base_url,
            "ANTHROPIC_API_KEY": "dummy",
            "CTXMODE_RECORD_SCENARIO": scenario,
            "CTXMODE_RECORD_OUT": str(self.out),
        }
        values.update(extra or {})
        return claude_cli.hermetic_env(values, home=self.home)

    def run(
        self,
        scenario: str,
        args: list[str],
        cwd: Path,
        extra_env: dict[str, str] | None = None,
    ) -> claude_cli.Run:
        run = claude_cli.run_claude(
            self.install, args, cwd=cwd, env=self.env(scenario, extra_env), timeout=300
        )
        if run.returncode != 0 or self.api.errors:
            raise SystemExit(
                f"scenario {scenario}: claude failed\n{run.describe()}\n{self.api.dump()}"
            )
        print(f"  {scenario}: {run.seconds:.1f}s", file=sys.stderr)
        return run

    def records(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.read_text().splitlines() if line.strip()]

    def git(self, cwd: Path, *args: str) -> None:
        subprocess.run(["git", *args], cwd=cwd, env=self.env(""), check=True, capture_output=True)


def mangle(path: str) -> str:
    """How the client names a project under ~/.claude/projects."""
    return re.sub(r"[^A-Za-z0-9]", "-", path)


def normalise(text: str, home: Path) -> str:
    text = text.replace(mangle(str(home)), mangle(FAKE_HOME))
    return text.replace(str(home), FAKE_HOME)


def record_top(rec: Recorder) -> None:
    """Real work, then resume, continue, /compact (twice), /clear, auto-compaction, a model."""
    d = rec.director
    proj, auto = rec.proj, rec.home / "proj_auto"
    for folder in (proj, auto):
        folder.mkdir(parents=True, exist_ok=True)

    def work(scn: str, where: Path, last_tokens: int = 50) -> list[Any]:
        hello = str(where / "hello.py")
        commit = "git init -q && git add -A && git commit -q -m init && git log --oneline"
        return [
            d.call(scn, "", "Write", file_path=hello, content='print("hello")\n'),
            d.call(scn, "", "Bash", command=commit, description="Commit hello.py"),
            d.call(
                scn,
                "",
                "Edit",
                file_path=hello,
                old_string='print("hello")',
                new_string='print("hello, world")',
            ),
            load_tools("TaskCreate"),
            d.call(
                scn,
                "",
                "TaskCreate",
                input_tokens=last_tokens,
                subject="Create hello.py and commit it",
                description="mock task",
                activeForm="Creating hello.py",
            ),
        ]

    d.then(
        *work("startup", proj),
        d.call("startup", "", "Bash", command="ls /nonexistent-mock-dir", description="List a dir"),
        d.call(
            "startup",
            "",
            "Agent",
            description="Say hi",
            prompt=f"Say hi. {SUBAGENT_MARK}",
            subagent_type="general-purpose",
        ),
        say("Created hello.py, committed it, and opened a task."),
    )
    sid = rec.run("startup", ["-p", "create hello.py and commit it"], proj).session_id
    d.then(say("I wrote and committed hello.py."))
    rec.run("resume", ["-p", "what did you do?", "--resume", sid], proj)
    d.then(say("Nothing else is pending."))
    rec.run("continue", ["-p", "and then?", "--continue"], proj)
    rec.run("compact", ["-p", "/compact", "--resume", sid], proj)
    d.then(say("Carrying on after the compaction."))
    rec.run("after_compact", ["-p", "after compact: what now?", "--resume", sid], proj)
    rec.run("compact_instr", ["-p", "/compact keep only the hello.py facts", "--resume", sid], proj)
    rec.run("clear", ["-p", "/clear", "--resume", sid], proj)
    cleared = [json.loads(r["raw"]) for r in rec.records() if r["scenario"] == "clear"]
    new_sid = next(p["session_id"] for p in cleared if p.get("source") == "clear")
    d.then(say("A clean slate."))
    rec.run("after_clear", ["-p", "after clear: hi", "--resume", new_sid], proj)
    d.then(*work("autocompact", auto, last_tokens=HUGE_USAGE), say("Done after auto-compaction."))
    rec.run(
        "autocompact",
        ["-p", "BIGCTX create hello.py and commit it"],
        auto,
        {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"},
    )
    d.then(say("Hello from another model."))
    rec.run("model_sonnet45", ["-p", "model test", "--model", "claude-sonnet-4-5"], proj)


def record_more(rec: Recorder) -> dict[str, str]:
    """The other tools, one scenario each, in a git project. Returns prompt labels."""
    d = rec.director
    proj = rec.proj
    shutil.rmtree(proj, ignore_errors=True)
    proj.mkdir(parents=True)
    for name, text in PROJECT_FILES.items():
        (proj / name).parent.mkdir(parents=True, exist_ok=True)
        (proj / name).write_text(text)
    rec.git(proj, "init", "-q", "-b", "main")
    rec.git(proj, "add", "-A")
    rec.git(proj, "commit", "-q", "-m", "Initial commit")
    d.readme = str(proj / "README.md")
    app, notes, nb = (
        str(proj / "src" / "app.py"),
        str(proj / "notes.txt"),
        str(proj / "analysis.ipynb"),
    )

    private = (
        "Please review the invoice module.\nIt lives in src/app.py.\n\n"
        "My staging token is <private>tok-FAKE-123456</private>, do not store it.\nThanks!"
    )
    d.then(say("Reviewed."))
    rec.run("prompt_private", ["-p", private], proj)

    f = "files"
    d.then(
        d.call(f, "text", "Read", file_path=d.readme),
        d.call(f, "reread_unchanged", "Read", file_path=d.readme),
        d.call(f, "offset_limit", "Read", file_path=app, offset=2, limit=3),
        d.call(f, "before_edit", "Read", file_path=app),
        d.call(f, "pattern", "Glob", pattern="**/*.py"),
        d.call(f, "files_with_matches", "Grep", pattern="TODO", output_mode="files_with_matches"),
        d.call(f, "content", "Grep", pattern="TODO", glob="*.py", output_mode="content", **{"-n": True}),
        d.call(f, "count", "Grep", pattern="old_name", output_mode="count"),
        d.call(f, "replace_all", "Edit", file_path=app, old_string="old_name", new_string="new_name", replace_all=True),
        d.call(f, "before_write", "Read", file_path=notes),
        d.call(f, "overwrite", "Write", file_path=notes, content="Notes (rewritten)\n- rounding is half-up\n"),
        d.call(f, "notebook", "Read", file_path=nb),
        d.call(f, "replace", "NotebookEdit", notebook_path=nb, cell_id="cell-a", new_source="x = 41 + 1\nprint(x)"),
        d.call(f, "insert", "NotebookEdit", notebook_path=nb, cell_id="cell-a", new_source="## Result\nThe answer is printed above.", cell_type="markdown", edit_mode="insert"),
        d.call(f, "missing", "Read", file_path=str(proj / "does/not/exist.txt")),
        d.call(f, "validation_error", "Edit", file_path=app, old_string="no such text", new_string="whatever"),
        d.call(f, "validation_error", "Write", file_path=str(proj / "src" / "util.py"), content="# rewritten\n"),
        say("Files tidied."),
    )  # fmt: skip
    allowed = ["--allowedTools", "Read Glob Grep Edit Write NotebookEdit Bash"]
    rec.run(f, ["-p", "[scn:files] Inspect and tidy the project files.", *allowed], proj)

    t = "tasks"
    d.then(
        load_tools("TaskCreate", "TaskUpdate", "TaskList", "TaskGet"),
        d.call(t, "first", "TaskCreate", subject="Wire invoice export to CSV", description="Export finished invoices as CSV rows.", activeForm="Wiring invoice export"),
        d.call(t, "second", "TaskCreate", subject="Write rounding tests", description="Cover half-up rounding of invoice totals.", activeForm="Writing rounding tests"),
        d.call(t, "in_progress", "TaskUpdate", taskId="1", status="in_progress"),
        d.call(t, "completed", "TaskUpdate", taskId="1", status="completed"),
        d.call(t, "rename", "TaskUpdate", taskId="2", subject="Write rounding and CSV tests"),
        d.call(t, "", "TaskList"),
        d.call(t, "", "TaskGet", taskId="2"),
        say("Tasks planned."),
    )  # fmt: skip
    rec.run(t, ["-p", "[scn:tasks] Plan the invoice work as tasks."], proj)

    b = "bash"
    heredoc = "git commit -m \"$(cat <<'EOF'\nSubject line\n\nBody\nEOF\n)\""
    d.then(
        d.call(b, "cd_ls", "Bash", command="cd src && ls", description="List files in src"),
        d.call(b, "export_echo", "Bash", command="export FOO=bar && echo $FOO", description="Set and print FOO"),
        d.call(b, "venv", "Bash", command="python3 -m venv .venv", timeout=120000, description="Create a virtual environment"),
        d.call(b, "checkout_b", "Bash", command="git checkout -b feature/x", description="Create branch feature/x"),
        d.call(b, "git_C_log", "Bash", command="git -C . log --oneline -1", description="Show the last commit"),
        d.call(b, "git_add", "Bash", command="git add -A", description="Stage all changes"),
        d.call(b, "heredoc_commit", "Bash", command=heredoc, description="Commit with a heredoc message"),
        d.call(b, "tests_failed_exit0", "Bash", command="echo '===== 2 failed, 3 passed in 0.12s ====='", description="Print a test summary"),
        d.call(b, "exit2", "Bash", command="echo out; echo err >&2; exit 2", description="Fail on purpose"),
        say("Chores done."),
    )  # fmt: skip
    rec.run(b, ["-p", "[scn:bash] Run the shell chores."], proj)

    m = "mcp"
    d.then(
        d.call(m, "secret_arg", "mcp__mockdir__lookup", query="billing-service", api_key="sk-live-FAKE0000mock0000secret0000value"),
        d.call(m, "is_error", "mcp__mockdir__lookup", query="missing"),
        say("billing-service belongs to alice."),
    )  # fmt: skip
    mcp = ["--mcp-config", str(rec.mcp_config), "--strict-mcp-config"]
    rec.run(m, ["-p", "[scn:mcp] Look up the billing service owner.", *mcp], proj)

    d.then(d.call("skill", "greet", "Skill", skill="greet", args="Alice"), say("Hello, Alice!"))
    rec.run("skill", ["-p", "[scn:skill] Greet Alice."], proj)
    d.then(say("Hello, Alice!"))
    rec.run("slash_skill", ["-p", "/greet Alice"], proj)

    a = "agent"
    d.then(
        d.call(a, "general_purpose", "Agent", description="Inspect the README", prompt="[scn:sub_inner] Read README.md and report its first line.", subagent_type="general-purpose"),
        d.call(a, "custom_type", "Agent", description="Review app.py", prompt="[scn:sub_inner] Review src/app.py briefly.", subagent_type="reviewer"),
        say("Both subagents reported."),
    )  # fmt: skip
    rec.run(a, ["-p", "[scn:agent] Use subagents to inspect the project."], proj)

    w = "web_preflight"
    d.then(
        d.call(w, "preflight_failed", "WebFetch", url="https://docs.invalid/release-notes", prompt="What changed in this release?"),
        say("The page could not be fetched."),
    )  # fmt: skip
    rec.run(w, ["-p", "[scn:web] Look up the release notes."], proj)
    return {
        "prompt_private": "private_multiline",
        "slash_skill": "slash_command",
    }


# -- writing the fixtures ----------------------------------------------------------------------


def detail_top(event: str, payload: dict[str, Any]) -> str:
    if event in TOOL_EVENTS:
        return str(payload.get("tool_name", ""))
    if event == "SessionStart":
        return str(payload.get("source", ""))
    if event == "SessionEnd":
        return str(payload.get("reason", ""))
    if event in ("PreCompact", "PostCompact"):
        custom = "_custom" if payload.get("custom_instructions") else ""
        return str(payload.get("trigger", "")) + custom
    return ""


def name_more(
    event: str, payload: dict[str, Any], labels: dict[str, str], prompt_label: str
) -> str | None:
    """The file name of a payload in more/, or None when more/ keeps no such file."""
    if event in TOOL_EVENTS and event != "PreToolUse":
        label = labels.get(str(payload.get("tool_use_id")), "")
        if not label and payload.get("agent_type"):
            label = f"subagent_{payload['agent_type']}"
        if not label and payload.get("tool_name") in ("TaskList", "TaskGet"):
            label = None
        return ".".join(x for x in (event, payload.get("tool_name"), label) if x)
    if event == "PostToolBatch":
        calls = payload.get("tool_calls") or [{}]
        first = calls[0]
        response = first.get("tool_response")
        if payload.get("agent_type"):
            return "PostToolBatch.subagent"
        if str(first.get("tool_name", "")).startswith("mcp__"):
            return "PostToolBatch.mcp"
        if isinstance(response, str) and response.startswith("<tool_use_error>"):
            return f"PostToolBatch.{first.get('tool_name')}.validation_error"
        return None
    if event == "UserPromptSubmit" and prompt_label:
        return f"UserPromptSubmit.{prompt_label}"
    if event == "UserPromptExpansion":
        return "UserPromptExpansion.slash_skill"
    if event in ("SubagentStart", "SubagentStop") and payload.get("agent_type"):
        return f"{event}.{payload['agent_type']}"
    if event in ("CwdChanged", "TaskCreated", "TaskCompleted"):
        return event
    return None


def write(
    records: list[dict[str, Any]],
    folder: Path,
    client: str,
    home: Path,
    namer: Callable[[str, dict[str, Any], str], str | None],
    stream_name: str,
) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    written: set[str] = set()
    with (folder / stream_name).open("w", encoding="utf-8") as stream:
        for rec in records:
            try:
                payload = json.loads(normalise(rec["raw"], home))
            except ValueError:
                continue
            event = str(payload.get("hook_event_name", ""))
            stream.write(
                json.dumps({"scenario": rec["scenario"], "event": event, "payload": payload}) + "\n"
            )
            name = namer(event, payload, rec["scenario"])
            if name is None or name in written:
                continue
            written.add(name)
            env = json.loads(normalise(json.dumps(rec["hook_env"]), home))
            doc = {"event": event, "client": client, "hook_env": env, "payload": payload}
            (folder / f"{name}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return len(written)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=claude_cli.DEFAULT_VERSION, help="client version")
    parser.add_argument("--out", type=Path, help="default: tests/fixtures/claude-code-<version>")
    parser.add_argument("--only", choices=("top", "more"), help="record one set only")
    parser.add_argument("--force", action="store_true", help="write into an existing folder")
    args = parser.parse_args()

    try:
        install = claude_cli.ensure_claude(args.version)
    except claude_cli.Unavailable as exc:
        print(f"record_fixtures: Claude Code unavailable: {exc}", file=sys.stderr)
        return 2
    out = args.out or REPO / "tests" / "fixtures" / f"claude-code-{install.version}"
    if out.exists() and not args.force:
        print(f"record_fixtures: {out} exists (use --force to write into it)", file=sys.stderr)
        return 2
    client = f"claude-code {install.version}"
    print(f"recording Claude Code {install.version} into {out}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="ctxmode-record-") as tmp:
        work = Path(tmp).resolve()
        rec = Recorder(install, work)
        try:
            if args.only in (None, "top"):
                record_top(rec)
                top = rec.records()
                n = write(
                    top,
                    out,
                    client,
                    rec.home,
                    lambda ev, p, _s: ".".join(x for x in (ev, detail_top(ev, p)) if x),
                    "stream.print-mode.jsonl",
                )
                print(f"  top: {len(top)} hook calls, {n} files", file=sys.stderr)
                rec.out.unlink()
            if args.only in (None, "more"):
                prompt_labels = record_more(rec)
                more = rec.records()
                n = write(
                    more,
                    out / "more",
                    client,
                    rec.home,
                    lambda ev, p, s: name_more(
                        ev, p, rec.director.labels, prompt_labels.get(s, "")
                    ),
                    "stream.jsonl",
                )
                print(f"  more: {len(more)} hook calls, {n} files", file=sys.stderr)
        finally:
            rec.api.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
