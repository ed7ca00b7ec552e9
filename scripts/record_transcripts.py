#!/usr/bin/env python3
"""Record real Claude Code transcripts into tests/fixtures/claude-code-<version>/transcripts/.

    python3 scripts/record_transcripts.py                    # the pinned version
    python3 scripts/record_transcripts.py --version latest   # a new client release

What ``ctxmode import`` reads: the JSONL transcripts the client keeps under
``~/.claude/projects/``. Like scripts/record_fixtures.py, this runs the real ``claude`` CLI
(from the e2e cache) in print mode against the e2e suite's scripted mock of the Messages API,
in a temporary HOME and git project, here with ctxmode's own hooks registered (the shims of
this checkout, as ``ctxmode install`` would) beside a recording hook. So the transcripts hold
what a user's do: ``hook_success`` and ``hook_additional_context`` attachments, among them
ctxmode's own ``<session_resume>`` echoed back after a compaction. Sessions, one per scenario:

- ``plain``: Write, a git commit, Edit, TaskCreate;
- ``failing``: a command that fails (a ``tool_result`` with ``is_error``);
- ``agent``: an Agent call whose subagent reads a file and runs a command (a subagent
  transcript under ``<session>/subagents/``);
- ``compacted``: work with an auto-compaction mid-turn, then ``/compact``, then a prompt
  that receives ctxmode's snapshot (two ``compact_boundary`` records with their summaries).

Written: ``transcripts/projects/<slug>/...`` as the client laid them out (paths normalised:
HOME ``/home/dev``, the project ``/home/dev/proj``, this checkout ``/home/dev/ctxmode``; the
long values of bulky bookkeeping records cut, see :func:`slim`; the conversation records
are byte for byte the client's after the path rewrite), ``transcripts/sessions.json`` (scenario → session id) and
``transcripts/hooks.jsonl`` (the PostToolUse, PostToolUseFailure and UserPromptSubmit
payloads the hooks got, to replay them before an import in the tests).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

from record_fixtures import RECORD_HOOK, Director, mangle  # noqa: E402

from ctxmode.hosts import claude_code  # noqa: E402
from tests.e2e import claude_cli  # noqa: E402
from tests.e2e.mock_api import MockAPI, load_tools, say  # noqa: E402
from tests.hooktools import SHIMS  # noqa: E402

FAKE_HOME = "/home/dev"
FAKE_REPO = "/home/dev/ctxmode"
HUGE_USAGE = 150_000
RECORDED_EVENTS = ("PostToolUse", "PostToolUseFailure", "UserPromptSubmit")
FAILING = "python3 -c \"raise KeyError('VAT_RATE_DE missing from rates.toml')\""


def settings(python: str, recorder: str) -> dict[str, Any]:
    """ctxmode's hooks (this checkout's shims) and, for the tool and prompt events, the recorder."""
    hooks: dict[str, Any] = {}
    for event, timeout, matcher in claude_code.HOOKS:
        shim = REPO / "ctxmode" / "hooks" / SHIMS[event]
        entry: dict[str, Any] = {
            "hooks": [
                {"type": "command", "command": f"'{python}' -I -S '{shim}'", "timeout": timeout}
            ]
        }
        if event in RECORDED_EVENTS:
            entry["hooks"].append({"type": "command", "command": recorder, "timeout": 10})
        if matcher is not None:
            entry["matcher"] = matcher
        hooks[event] = [entry]
    return {"hooks": hooks}


# Bookkeeping the client writes in bulk (2.1.3xx: the API request's shape and blobs, a
# snapshot of the prompt, the tool and skill listings): kept as records, so the importer
# meets them as it does in a user's transcripts, but with long strings and lists cut, so
# a fixture stays a few KB. Conversation records (user, assistant, system) are never cut.
BULK_TYPES = ("api-request-shape", "api-request-blob", "api-request", "cost-state")
BULK_ATTACHMENTS = (
    "prompt_snapshot",
    "skill_listing",
    "agent_listing_delta",
    "deferred_tools_delta",
    "deferred_tools_record",
    "environment",
    "session_context",
    "remote_session_change",
)
CUT = 160


def _cut(node: Any) -> Any:
    if isinstance(node, str) and len(node) > CUT:
        return node[:CUT] + f"…[{len(node) - CUT} chars cut by record_transcripts]"
    if isinstance(node, list):
        return [_cut(v) for v in node[:4]]
    if isinstance(node, dict):
        return {k: _cut(v) for k, v in list(node.items())[:6]}
    return node


def slim(line: str) -> str:
    """A bulky bookkeeping record with its long values cut; any other line as it is."""
    try:
        record = json.loads(line)
    except ValueError:
        return line
    attachment = record.get("attachment") if isinstance(record, dict) else None
    kind = attachment.get("type") if isinstance(attachment, dict) else None
    if record.get("type") in BULK_TYPES or kind in BULK_ATTACHMENTS:
        return json.dumps(_cut(record), ensure_ascii=False)
    return line


def normalise(text: str, home: Path) -> str:
    for real, fake in ((REPO, FAKE_REPO), (home, FAKE_HOME)):
        text = text.replace(mangle(str(real)), mangle(fake)).replace(str(real), fake)
    return text


def record(install: claude_cli.ClaudeInstall, work: Path) -> tuple[Path, dict[str, str], Path]:
    home, proj = work / "home", work / "home" / "proj"
    (home / ".claude").mkdir(parents=True)
    out = work / "hooks.jsonl"
    hook = work / "record_hook.py"
    hook.write_text(RECORD_HOOK)
    doc = settings(sys.executable, f"'{sys.executable}' '{hook}'")
    (home / ".claude" / "settings.json").write_text(json.dumps(doc, indent=2))
    proj.mkdir()
    (proj / "README.md").write_text("# Demo\n\nSee src/app.py.\n")
    d = Director()
    d.readme = str(proj / "README.md")
    api = MockAPI(d, max_requests=300, max_seconds=1200).start()

    def env(extra: dict[str, str] | None = None) -> dict[str, str]:
        values = {
            "ANTHROPIC_BASE_URL": api.base_url,
            "ANTHROPIC_API_KEY": "dummy",
            "CTXMODE_HOME": str(home / "ctxmode-data"),
            "CTXMODE_RECORD_OUT": str(out),
        }
        return claude_cli.hermetic_env({**values, **(extra or {})}, home=home)

    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "Initial"]):
        subprocess.run(["git", *args], cwd=proj, env=env(), check=True, capture_output=True)

    def run(name: str, args: list[str], extra: dict[str, str] | None = None) -> str:
        result = claude_cli.run_claude(install, args, cwd=proj, env=env(extra), timeout=300)
        if result.returncode != 0 or api.errors:
            raise SystemExit(f"{name}: claude failed\n{result.describe()}\n{api.dump()}")
        print(f"  {name}: {result.seconds:.1f}s", file=sys.stderr)
        return result.session_id

    hello = str(proj / "hello.py")
    commit = "git add hello.py && git commit -q -m 'Add hello.py' && git log --oneline -1"
    sessions: dict[str, str] = {}
    try:
        d.then(
            d.call("plain", "", "Write", file_path=hello, content='print("hello")\n'),
            d.call("plain", "", "Bash", command=commit, description="Commit hello.py"),
            d.call(
                "plain", "", "Edit", file_path=hello,
                old_string='print("hello")', new_string='print("hello, world")',
            ),
            load_tools("TaskCreate"),
            d.call(
                "plain", "", "TaskCreate", subject="Document hello.py in the README",
                description="Say what it prints.", activeForm="Documenting hello.py",
            ),
            say("Wrote hello.py, committed it, and opened a task."),
        )  # fmt: skip
        sessions["plain"] = run("plain", ["-p", "create hello.py and commit it"])

        d.then(
            d.call("failing", "", "Bash", command=FAILING, description="Load the VAT rate"),
            say("The VAT rate is missing."),
        )
        sessions["failing"] = run("failing", ["-p", "load the German VAT rate"])

        d.then(
            d.call(
                "agent", "", "Agent", description="Inspect the README",
                prompt="[scn:sub_inner] Read README.md and report its first line.",
                subagent_type="general-purpose",
            ),
            say("The subagent reported."),
        )  # fmt: skip
        sessions["agent"] = run("agent", ["-p", "use a subagent to inspect the README"])

        notes = str(proj / "notes.md")
        d.then(
            d.call("compacted", "", "Write", file_path=notes, content="# Notes\n"),
            load_tools("TaskCreate"),
            d.call(
                "compacted", "", "TaskCreate", input_tokens=HUGE_USAGE,
                subject="Fill in the notes", description="Write them.", activeForm="Noting",
            ),
            d.call(
                "compacted", "", "Edit", file_path=notes,
                old_string="# Notes\n", new_string="# Notes\n\n- rounding is half-up\n",
            ),
            say("Notes written after the auto-compaction."),
        )  # fmt: skip
        auto = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "100000"}
        sid = run("compacted", ["-p", "BIGCTX write the notes"], auto)
        run("compacted /compact", ["-p", "/compact", "--resume", sid])
        d.then(say("The notes are written; the task is open."))
        run("compacted after", ["-p", "what is left?", "--resume", sid])
        sessions["compacted"] = sid
    finally:
        api.stop()
    return home, sessions, out


def readme(client: str, sessions: dict[str, str]) -> str:
    """The README written beside the transcripts: what they are and how they were made."""
    rows = "\n".join(f"| `{name}` | `{sid}` |" for name, sid in sessions.items())
    return f"""# Transcripts of {client}

Recorded by `scripts/record_transcripts.py` (see its docstring): the real CLI in print mode
against the e2e suite's mock of the Messages API, in a temporary HOME and git project, with
ctxmode's hooks registered (so ctxmode's `<session_resume>` is echoed back in
`hook_additional_context` attachments after each compaction) beside a hook that recorded the
payloads of PostToolUse, PostToolUseFailure and UserPromptSubmit (`hooks.jsonl`).

- `projects/-home-dev-proj/<session>.jsonl`: the transcripts as the client laid them out,
  subagents under `<session>/subagents/`. HOME is `/home/dev`, the project `/home/dev/proj`,
  the ctxmode checkout `/home/dev/ctxmode`. The long values of bulky bookkeeping records
  (API request shapes, prompt snapshots, tool and skill listings) are cut so the files stay
  small; conversation records (user, assistant, system) are the client's bytes.
- `sessions.json`: scenario → session id. `hooks.jsonl`: one hook payload a line, in order.

| scenario | session |
|---|---|
{rows}

`plain`: Write, a git commit, Edit, TaskCreate. `failing`: a command that fails. `agent`: an
Agent call whose subagent reads a file and runs a command. `compacted`: an auto-compaction
mid-turn, then `/compact`, then a prompt (two compactions with their summaries).
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default=claude_cli.DEFAULT_VERSION, help="client version")
    parser.add_argument(
        "--out", type=Path, help="default: tests/fixtures/claude-code-<v>/transcripts"
    )
    parser.add_argument("--force", action="store_true", help="replace an existing folder")
    args = parser.parse_args()
    try:
        install = claude_cli.ensure_claude(args.version)
    except claude_cli.Unavailable as exc:
        print(f"record_transcripts: Claude Code unavailable: {exc}", file=sys.stderr)
        return 2
    out = args.out or REPO / "tests" / "fixtures" / f"claude-code-{install.version}" / "transcripts"
    if out.exists() and not args.force:
        print(f"record_transcripts: {out} exists (use --force)", file=sys.stderr)
        return 2
    print(f"recording Claude Code {install.version} transcripts into {out}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="ctxmode-transcripts-") as tmp:
        home, sessions, hooks = record(install, Path(tmp).resolve())
        shutil.rmtree(out, ignore_errors=True)
        projects = home / ".claude" / "projects"
        for path in sorted(projects.rglob("*")):
            if not path.is_file():
                continue
            target = out / "projects" / normalise(str(path.relative_to(projects)), home)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = normalise(path.read_text(encoding="utf-8"), home)
            if path.suffix == ".jsonl":
                text = "".join(slim(line) + "\n" for line in text.splitlines())
            target.write_text(text, encoding="utf-8")
        kept = []
        for line in hooks.read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)["raw"]
            kept.append(normalise(json.dumps(json.loads(raw)), home))
        (out / "hooks.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
        meta = {"client": f"claude-code {install.version}", "sessions": sessions}
        (out / "sessions.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        (out / "README.md").write_text(readme(meta["client"], sessions), encoding="utf-8")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"  {len(sessions)} sessions, {size // 1024} KB", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
