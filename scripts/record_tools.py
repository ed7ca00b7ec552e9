#!/usr/bin/env python3
"""Record every tool a real client offers the model: tests/fixtures/<client>-<version>/tools.*.json.

    python3 scripts/record_tools.py                         # pinned and newest, both clients
    python3 scripts/record_tools.py --client claude --version 2.1.332
    python3 scripts/record_tools.py --client codex --version 0.171.0 --modes exec

The client (installed from npm into the e2e cache, as the e2e suite does) runs in a temporary
HOME and project against the e2e suite's mock API (tests/e2e/mock_api.py for Claude Code,
tests/e2e/codex_mock.py for Codex), which keeps each request's ``tools`` list. One prompt is
sent per mode; the first main-loop request that offers tools is written down:

- Claude Code, ``print``: ``claude -p`` as a user runs it; ``print.todo_tools``: the same with
  ``CLAUDE_CODE_ENABLE_TODO_TOOLS=1`` (what the e2e suite sets); ``interactive``: the terminal
  UI, started in tmux, the prompt typed with ``tmux send-keys`` once ``capture-pane`` shows the
  input box. Deferred tools (offered by name only, loaded through ToolSearch) are read from the
  request's "deferred tools are now available" list.
- Codex, ``exec``: ``codex exec``; ``interactive``: the ``codex`` terminal UI in tmux, the same
  way. A tool without a name (``web_search``, ``tool_search``) is named by its ``type``.

``--payloads`` (Claude Code) records instead what the hooks receive from the tools ctxmode
learned with 2.1.3xx: a scripted session (``claude -p``, the deferred tools loaded through
ToolSearch) enters a new worktree and an existing one, `cd`s into a third, schedules a cron
job, a wake-up and a monitor, starts a workflow and a background agent, messages and lists
agents, stops a task, deletes the cron job and reports review findings. A recording hook
(scripts/record_fixtures.py's) keeps every payload; the first of each tool call is written
to ``claude-code-<version>/tools/<Event>.<Tool>.<label>.json`` (HOME ``/home/dev``, the
project ``/home/dev/proj``), all of them to ``tools/stream.jsonl``.

Each file: ``{"client", "mode", "env", "tools": [names in the order offered], "deferred":
[names]}``. ``tests/test_tool_tables.py`` fails when a recorded name is not in the host's
table (``ctxmode.hosts.<host>.TOOL_KINDS`` or ``NOT_RECORDED``): a new client release becomes
a decision, not a silent gap. Existing files are overwritten (they hold no ids or times).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e import claude_cli, codex_cli  # noqa: E402
from tests.e2e import codex_mock as cmock  # noqa: E402
from tests.e2e import mock_api as amock  # noqa: E402

# The supported versions: the pinned ones (CI) and the newest verified (scripts/e2e-newest.sh).
VERSIONS = {
    "claude": (claude_cli.DEFAULT_VERSION, "2.1.332"),
    "codex": (codex_cli.DEFAULT_VERSION, "0.171.0"),
}
MODES = {"claude": ("print", "print.todo_tools", "interactive"), "codex": ("exec", "interactive")}
FOLDER = {"claude": "claude-code", "codex": "codex"}
PROMPT = "hello"
TUI_SECONDS = 120  # bound on every wait for the terminal UI
# Claude Code's system text listing the deferred tools, one name a line after it.
DEFERRED_MARK = re.compile(r"deferred tools are now available via ToolSearch[^\n]*\n")
API_KEY = "sk-ant-mock-0000000000000000recorder"


def deferred_names(req: amock.Request) -> list[str]:
    """The tools Claude Code lists by name only (their schemas come through ToolSearch)."""
    for text in req.strings():
        match = DEFERRED_MARK.search(text)
        if match is None:
            continue
        names = []
        for line in text[match.end() :].split("\n"):
            line = line.strip()
            if not line or not re.fullmatch(r"[A-Za-z_][\w-]*", line):
                break
            names.append(line)
        return names
    return []


class FirstOffer:
    """A mock script that answers every request with a short text and keeps the first
    request offering tools (the main loop's: subagents and side requests carry none or
    another set and come later)."""

    def __init__(self, answer: Callable[[], Any]) -> None:
        self.answer = answer
        self.request: Any = None
        self.seen = threading.Event()

    def __call__(self, req: Any) -> Any:
        if self.request is None and req.body.get("tools"):
            self.request = req
            self.seen.set()
        return self.answer()


# -- tmux ------------------------------------------------------------------------------------


class Tmux:
    """A detached tmux session running one command; killed on exit."""

    def __init__(self, name: str, script: Path) -> None:
        self.name = name.replace(".", "_")  # tmux reads "." in a target as window.pane
        subprocess.run(
            ["tmux", "new-session", "-d", "-s", self.name, "-x", "200", "-y", "50", str(script)],
            check=True,
        )

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        )
        return out.stdout

    def wait_for(self, *needles: str, seconds: float = TUI_SECONDS) -> str:
        """Poll the pane until one of ``needles`` shows (a UI gives no other signal)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            screen = self.screen()
            if any(n in screen for n in needles):
                return screen
            time.sleep(0.5)
        raise SystemExit(f"tmux {self.name}: none of {needles} within {seconds}s:\n{self.screen()}")

    def type(self, text: str) -> None:
        """Type ``text``, and Enter once it shows (an Enter in the same burst of keys
        is taken for a pasted newline by Codex)."""
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        self.wait_for(text)
        subprocess.run(["tmux", "send-keys", "-t", self.name, "Enter"], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def launcher(path: Path, env: dict[str, str], cwd: Path, argv: list[str]) -> Path:
    """A shell script that starts ``argv`` in ``cwd`` with exactly ``env`` (tmux starts
    its commands with the server's environment, not ours)."""
    env = {**env, "TERM": "xterm-256color"}  # a terminal UI needs one; env -i drops tmux's
    lines = ["#!/bin/sh", "env -i \\"]
    lines += [f"  {shlex.quote(f'{k}={v}')} \\" for k, v in sorted(env.items())]
    lines.append(
        f"  sh -c {shlex.quote('cd ' + shlex.quote(str(cwd)) + ' && exec ' + shlex.join(argv))}"
    )
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o755)
    return path


# -- Claude Code -----------------------------------------------------------------------------


def record_claude(version: str, mode: str) -> dict[str, Any]:
    install = claude_cli.ensure_claude(version)
    script = FirstOffer(lambda: amock.say("Hello."))
    with (
        tempfile.TemporaryDirectory(prefix="ctxmode-tools-") as tmp,
        amock.MockAPI(script, max_requests=40, max_seconds=TUI_SECONDS + 60) as api,
    ):
        home = Path(tmp).resolve()
        proj = home / "proj"
        proj.mkdir()
        extra = {"ANTHROPIC_BASE_URL": api.base_url, "ANTHROPIC_API_KEY": API_KEY}
        env = claude_cli.hermetic_env(extra, home=home)
        todo = mode == "print.todo_tools"
        if not todo:  # as a user runs it: the suite's hermetic_env asks for the task tools
            env.pop("CLAUDE_CODE_ENABLE_TODO_TOOLS", None)
        if mode == "interactive":
            _claude_tui(install, home, proj, env, script)
        else:
            run = claude_cli.run_claude(install, ["-p", PROMPT], cwd=proj, env=env, timeout=180)
            if run.returncode != 0:
                raise SystemExit(f"claude {version} {mode}: {run.describe()}")
        req = script.request
        if req is None:
            raise SystemExit(f"claude {version} {mode}: no request offered tools\n{api.dump()}")
        return {
            "client": f"claude-code {install.version}",
            "mode": mode,
            "env": {"CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"} if todo else {},
            "tools": [t.get("name") for t in req.body["tools"]],
            "deferred": deferred_names(req),
        }


def _claude_tui(
    install: claude_cli.ClaudeInstall,
    home: Path,
    proj: Path,
    env: dict[str, str],
    script: FirstOffer,
) -> None:
    # Onboarding, the folder's trust and the API key answered beforehand, as a user has.
    state = {
        "hasCompletedOnboarding": True,
        "theme": "dark",
        "bypassPermissionsModeAccepted": True,
        "customApiKeyResponses": {"approved": [API_KEY[-20:]], "rejected": []},
        "projects": {str(proj): {"hasTrustDialogAccepted": True}},
    }
    (home / ".claude.json").write_text(json.dumps(state))
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "settings.json").write_text(
        json.dumps({"skipDangerousModePermissionPrompt": True})
    )
    argv = [str(install.executable), "--dangerously-skip-permissions"]
    tmux = Tmux(f"ctxmode-tools-{install.version}", launcher(home / "run.sh", env, proj, argv))
    try:
        tmux.wait_for("shift+tab", "? for shortcuts")
        tmux.type(PROMPT)
        if not script.seen.wait(TUI_SECONDS):
            raise SystemExit(f"claude TUI: no request within {TUI_SECONDS}s:\n{tmux.screen()}")
    finally:
        tmux.close()


# -- Codex -----------------------------------------------------------------------------------


def record_codex(version: str, mode: str) -> dict[str, Any]:
    install = codex_cli.ensure_codex(version)
    script = FirstOffer(lambda: cmock.say("Hello."))
    with (
        tempfile.TemporaryDirectory(prefix="ctxmode-tools-") as tmp,
        cmock.MockResponses(script, max_requests=40) as api,
    ):
        home = Path(tmp).resolve()
        proj = home / "proj"
        proj.mkdir()
        env = codex_cli.hermetic_env(home)
        if mode == "interactive":
            _codex_tui(install, api.base_url, home, proj, env, script)
        else:
            run = codex_cli.run_codex(install, api.base_url, PROMPT, cwd=proj, env=env)
            if run.returncode != 0:
                raise SystemExit(f"codex {version} {mode}: {run.describe()}")
        req = script.request
        if req is None:
            raise SystemExit(f"codex {version} {mode}: no request offered tools")
        return {
            "client": f"codex {install.version}",
            "mode": mode,
            "env": {},
            "tools": [t.get("name") or t.get("type") for t in req.body["tools"]],
            "deferred": [],
        }


def _codex_tui(
    install: codex_cli.CodexInstall,
    base_url: str,
    home: Path,
    proj: Path,
    env: dict[str, str],
    script: FirstOffer,
) -> None:
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    provider = (
        f'model_providers.mock={{name="mock", base_url="{base_url}", wire_api="responses", '
        'env_key="MOCK_KEY"}'
    )
    # The folder trusted, and the model-upgrade notices a user has answered "keep the
    # current model" to (else one covers the composer and takes the typed prompt).
    (codex_home / "config.toml").write_text(
        "disable_paste_burst = true\n"
        f'[projects."{proj}"]\ntrust_level = "trusted"\n\n'
        "[tui]\nscreen_reader_detection_done = true\n\n"
        '[tui.model_availability_nux]\n"gpt-6.1-sol" = 1\n\n'
        f'[notice.model_migrations]\n"{codex_cli.MODEL}" = "gpt-6-sol"\n'
    )
    argv = [
        str(install.executable),
        "--dangerously-bypass-approvals-and-sandbox",
        "-C", str(proj),
        "-c", "model_provider=mock",
        "-c", provider,
        "-c", f"model={codex_cli.MODEL}",
    ]  # fmt: skip
    tmux = Tmux(
        f"ctxmode-tools-codex-{install.version}", launcher(home / "run.sh", env, proj, argv)
    )
    try:
        tmux.wait_for("? for shortcuts")
        tmux.type(PROMPT)
        if not script.seen.wait(TUI_SECONDS):
            raise SystemExit(f"codex TUI: no request within {TUI_SECONDS}s:\n{tmux.screen()}")
    finally:
        tmux.close()


# -- payloads of the newer tools (Claude Code) -------------------------------------------------

NEW_TOOLS = (
    "EnterWorktree", "ExitWorktree", "CronCreate", "CronDelete", "CronList", "Monitor",
    "SendMessage", "TaskStop",
)  # fmt: skip
WORKFLOW = (
    'export const meta = { name: "check-build", description: "Check the build", phases: [] }\n'
    'await agent("Check that the build passes. [mock-subagent]")\n'
)


def record_payloads(version: str) -> Path:
    sys.path.insert(0, str(REPO / "scripts"))
    import record_fixtures as rf

    install = claude_cli.ensure_claude(version)
    out = REPO / "tests" / "fixtures" / f"claude-code-{install.version}" / "tools"
    with tempfile.TemporaryDirectory(prefix="ctxmode-tools-") as tmp:
        work = Path(tmp).resolve()
        rec = rf.Recorder(install, work)
        try:
            d = rec.director
            proj = rec.proj
            proj.mkdir(parents=True)
            (proj / "README.md").write_text("# Demo\n")
            (proj / ".gitignore").write_text(".claude/\nbuild.log\n")
            (proj / "build.log").write_text("")
            rec.git(proj, "init", "-q", "-b", "main")
            rec.git(proj, "add", "-A")
            rec.git(proj, "commit", "-q", "-m", "Initial commit")
            sibling = rec.home / "proj-hotfix"
            rec.git(proj, "worktree", "add", "-q", "-b", "hotfix/login", str(sibling))
            inner = proj / ".claude" / "worktrees" / "docs"
            rec.git(proj, "worktree", "add", "-q", "-b", "docs/update", str(inner))
            s = "newtools"

            def step(label: str, tool: str, make: Callable[[amock.Request], dict[str, Any]]) -> Any:
                def play(req: amock.Request) -> amock.Reply:
                    d.count += 1
                    tool_id = f"toolu_{s}_{d.count}_{label}"
                    d.labels[tool_id] = label
                    return amock.Reply(tools=[amock.ToolCall(tool, make(req), id=tool_id)])

                return play

            def fixed(label: str, tool: str, **tool_input: Any) -> Any:
                return step(label, tool, lambda _req: tool_input)

            def answer_of(
                tool: str, key: str, pattern: str
            ) -> Callable[[amock.Request], dict[str, Any]]:
                """An input ``{key: <what tool's result says>}``: the id CronCreate or
                Monitor answered with, for the call that deletes or stops it."""

                def make(req: amock.Request) -> dict[str, Any]:
                    for use in req.tool_uses():
                        if use.get("name") == tool:
                            text = req.tool_result_text(str(use.get("id"))) or ""
                            found = re.search(pattern, text)
                            if found:
                                return {key: found.group(1)}
                    raise SystemExit(f"no {tool} result to take {key} from")

                return make

            d.then(
                amock.load_tools(*NEW_TOOLS),
                fixed("named", "EnterWorktree", name="fix-login"),
                fixed("in_worktree", "Write", file_path="LOGIN.md", content="login fix\n"),
                fixed("keep", "ExitWorktree", action="keep"),
                fixed("path", "EnterWorktree", path=str(sibling)),
                fixed("in_path", "Bash", command="git branch --show-current", description="Branch"),
                fixed("exit_path", "ExitWorktree", action="keep"),
                fixed("cd_inner", "Bash", command="cd .claude/worktrees/docs && git branch --show-current", description="Enter docs"),
                fixed("after_cd", "Bash", command="pwd", description="Where"),
                fixed("cd_back", "Bash", command=f"cd {proj}", description="Back"),
                fixed("cron", "CronCreate", cron="*/5 * * * *", prompt="check the deploy status", recurring=True),
                fixed("", "CronList"),
                fixed("wake", "ScheduleWakeup", delaySeconds=1200, reason="wait for CI", prompt="/loop check CI", noop=False),
                fixed("monitor", "Monitor", description="watch the build log", timeout_ms=60000, command="tail -f build.log"),
                fixed("workflow", "Workflow", script=WORKFLOW),
                fixed("background", "Agent", description="Audit dependencies", prompt=f"Audit the dependencies. {amock.SUBAGENT_MARK}", subagent_type="general-purpose", run_in_background=True),
                fixed("", "ListAgents"),
                fixed("message", "SendMessage", to="main", summary="ping", message="Check the lockfile too."),
                step("stop", "TaskStop", answer_of("Monitor", "task_id", r"\b(b[0-9a-z]{8})\b")),
                step("cron_delete", "CronDelete", answer_of("CronCreate", "id", r"\b([0-9a-f]{8})\b")),
                fixed("wake_stop", "ScheduleWakeup", stop=True),
                fixed("findings", "ReportFindings", findings=[{"file": "README.md", "line": 1, "summary": "The title names no product", "failure_scenario": "A reader cannot tell what the project is", "category": "docs"}]),
                amock.say("Done."),
            )  # fmt: skip
            rec.run(s, ["-p", "Work in a worktree, then schedule the follow-ups."], proj)
            n = rf.write(
                rec.records(),
                out,
                f"claude-code {install.version}",
                rec.home,
                lambda ev, p, _s: rf.name_more(ev, p, d.labels, ""),
                "stream.jsonl",
            )
            print(f"  payloads: {n} files -> {out.relative_to(REPO)}", file=sys.stderr)
        finally:
            rec.api.stop()
    return out


# -- the tables, from the recorded lists and the hosts' tables ----------------------------------


def tables() -> str:
    """A Markdown table per client: every tool a supported version offers, where (print,
    interactive; ``d`` = deferred), and what ctxmode records of it."""
    from ctxmode.hosts import claude_code, codex

    hosts = {"claude": claude_code, "codex": codex}
    out = []
    for client, versions in VERSIONS.items():
        host = hosts[client]
        modes = MODES[client]
        offered: dict[str, dict[tuple[str, str], str]] = {}
        columns = []
        for version in versions:
            for mode in modes:
                path = REPO / "tests" / "fixtures" / f"{FOLDER[client]}-{version}"
                path = path / f"tools.{mode}.json"
                if not path.exists():
                    continue
                record = json.loads(path.read_text())
                columns.append((version, mode))
                for name in record["tools"]:
                    offered.setdefault(name, {})[(version, mode)] = "x"
                for name in record["deferred"]:
                    offered.setdefault(name, {})[(version, mode)] = "d"
        head = ["tool", *(f"{v} {m}" for v, m in columns), "ctxmode records"]
        out.append(f"### {FOLDER[client]}\n")
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "---|" * len(head))
        for name in sorted(offered, key=str.lower):
            kind = host.TOOL_KINDS.get(name)
            what = (
                f"`{kind}`" if kind else "nothing: " + host.NOT_RECORDED.get(name, "UNCLASSIFIED")
            )
            cells = [offered[name].get(col, "") for col in columns]
            out.append("| " + " | ".join([f"`{name}`", *cells, what]) + " |")
        out.append("")
    return "\n".join(out)


# -- main --------------------------------------------------------------------------------------


def write(client: str, record: dict[str, Any]) -> Path:
    version = record["client"].split()[-1]
    folder = REPO / "tests" / "fixtures" / f"{FOLDER[client]}-{version}"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"tools.{record['mode']}.json"
    path.write_text(json.dumps(record, indent=2) + "\n")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--client", choices=tuple(VERSIONS), help="default: both")
    parser.add_argument("--version", help="default: the pinned and the newest version")
    parser.add_argument("--modes", help="comma-separated; default: every mode of the client")
    parser.add_argument("--payloads", action="store_true", help="the newer tools' hook payloads")
    parser.add_argument("--table", action="store_true", help="print the tool tables (Markdown)")
    args = parser.parse_args()
    if args.table:
        print(tables())
        return 0
    if args.payloads:
        for version in (args.version,) if args.version else VERSIONS["claude"][1:]:
            record_payloads(version)
        return 0
    clients = (args.client,) if args.client else tuple(VERSIONS)
    for client in clients:
        versions = (args.version,) if args.version else VERSIONS[client]
        modes = args.modes.split(",") if args.modes else MODES[client]
        for version in versions:
            for mode in modes:
                if mode not in MODES[client]:
                    parser.error(f"{client} has no mode {mode!r} (it has {MODES[client]})")
                rec = (
                    record_claude(version, mode)
                    if client == "claude"
                    else record_codex(version, mode)
                )
                path = write(client, rec)
                print(
                    f"{rec['client']} {mode}: {len(rec['tools'])} tools, "
                    f"{len(rec['deferred'])} deferred -> {path.relative_to(REPO)}",
                    file=sys.stderr,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
