#!/usr/bin/env python3
"""Record the hook payloads of the real GitHub Copilot CLI: tests/fixtures/copilot-cli-<v>/.

Runs the pinned ``@github/copilot`` (npm, cached like the e2e suite's:
tests/e2e/copilot_cli.py) offline against the scripted Chat Completions mock
(tests/e2e/chat_mock.py), in a throwaway HOME whose ``~/.copilot/settings.json`` holds one
capture hook per native event (user scope: no trust step). The hook is this script
(``--hook EVENT``): it appends its stdin verbatim to the stream and prints nothing.

Runs (``copilot -p``, in a git repository):
1. "ledger" (``--allow-all-tools``): ``please fix the ledger module``: create
   ``src/ledger/reconcile.py``, edit it, ``python3 tests/test_reconcile.py`` (exits 2: the
   test file is missing), a commit, view, final text;
2. "compact" (``--resume``, ``-p /compact``): a manual compaction (preCompact);
3. "after" (``--resume``, the default permissions): ``carry on``: ``touch notes.txt`` (asks:
   a permissionRequest, denied in prompt mode), final text.

Written: ``stream.jsonl``, every hook call in order (``{"run", "event", "payload"}``);
``tools.print.json``, the tools the model requests declared (prompt mode);
``events.jsonl``, the session's own history as Copilot kept it
(``~/.copilot/session-state/<id>/events.jsonl``, the system prompt replaced by its size). The temp
project becomes ``/home/dev/project`` and the temp HOME ``/home/dev``.

Usage: scripts/record_copilot_fixtures.py [OUT_DIR]  (default tests/fixtures/copilot-cli-<version>/)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
EVENTS = (
    "sessionStart",
    "sessionEnd",
    "userPromptSubmitted",
    "preToolUse",
    "postToolUse",
    "postToolUseFailure",
    "errorOccurred",
    "agentStop",
    "preCompact",
    "permissionRequest",
)
RECORD_ENV = "CTXMODE_COPILOT_RECORD"
HOME_AS = "/home/dev"
PROJECT_AS = "/home/dev/project"
SUMMARY_ASK = "Please create a detailed summary of the conversation so far"
FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"


def hook(event: str) -> None:
    """The capture hook: stdin appended to the stream, nothing printed."""
    data = sys.stdin.buffer.read().decode("utf-8", "replace")
    target = os.environ.get(RECORD_ENV)
    if target:
        with open(target, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"event": event, "payload": data}) + "\n")


def is_compaction(req: Any) -> bool:
    return bool(req.last_user_text().startswith(SUMMARY_ASK))


def record(out: Path) -> None:
    sys.path[:0] = [str(REPO)]
    from tests.e2e import chat_mock, copilot_cli

    install = copilot_cli.ensure_copilot()
    with tempfile.TemporaryDirectory(prefix="ctxmode-copilot-rec-") as tmp:
        home = Path(tmp)
        project = home / "project"
        (project / "src" / "ledger").mkdir(parents=True)
        env = copilot_cli.hermetic_env(home)
        subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
        (project / "README.md").write_text("# ledger\n")
        subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=project, env=env, check=True)
        stream = home / "stream.jsonl"
        command = f"{sys.executable} {Path(__file__).resolve()} --hook"
        hooks = {
            event: [{"type": "command", "bash": f"{command} {event}", "timeoutSec": 20}]
            for event in EVENTS
        }
        (home / ".copilot").mkdir()
        (home / ".copilot" / "settings.json").write_text(json.dumps({"hooks": hooks}, indent=2))
        code = "def reconcile(entries):\n    return round(sum(entries), 2)\n"
        path = str(project / FILE)
        script = chat_mock.Steps(
            chat_mock.call("create", path=path, file_text=code),
            chat_mock.call("edit", path=path, old_str="2)", new_str="2) or 0.0"),
            chat_mock.call("bash", command=FAILING, description="run the tests"),
            chat_mock.call(
                "bash",
                command="git add -A && git commit -qm 'Reconcile ledger totals'",
                description="commit",
            ),
            chat_mock.call("view", path=path),
            final="The ledger is reconciled; its test file is still missing.",
            is_compaction=is_compaction,
        )
        after = chat_mock.Steps(
            chat_mock.call("bash", command="touch notes.txt", description="note"),
            final="Noted.",
            is_compaction=is_compaction,
        )
        runs: list[tuple[str, str, Any, tuple[str, ...]]] = [
            ("ledger", "please fix the ledger module", script, ("--allow-all-tools",)),
            ("compact", "/compact", script, ("--allow-all-tools",)),
            ("after", "carry on", after, ()),
        ]
        tools: list[str] = []
        session = None
        lines: list[str] = []
        for run, prompt, steps, flags in runs:
            with chat_mock.MockChat(steps) as api:
                result = copilot_cli.run_copilot(
                    install,
                    api.base_url,
                    prompt,
                    cwd=project,
                    env={**env, RECORD_ENV: str(stream)},
                    resume=session,
                    flags=flags,
                )
                if result.returncode != 0:
                    raise SystemExit(result.describe())
                if not tools and api.requests:
                    tools = api.requests[0].tool_names
            session = session or copilot_cli.session_ids(home)[-1]
            for line in stream.read_text().splitlines()[len(lines) :]:
                entry = json.loads(line)
                lines.append(line)
                payload = json.loads(entry["payload"]) if entry["payload"].strip() else None
                text = json.dumps({"run": run, "event": entry["event"], "payload": payload})
                text = text.replace(str(project), PROJECT_AS).replace(str(home), HOME_AS)
                (out / "stream.jsonl").open("a", encoding="utf-8").write(text + "\n")
        (out / "tools.print.json").write_text(json.dumps(sorted(tools), indent=2) + "\n")
        history = home / ".copilot" / "session-state" / str(session) / "events.jsonl"
        kept = []
        for line in history.read_text().splitlines():
            record = json.loads(line)
            if record.get("type") == "system.message":  # the CLI's system prompt: its size
                content = record["data"].get("content", "")
                record["data"]["content"] = f"[{len(content)} characters]"
            text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            kept.append(text.replace(str(project), PROJECT_AS).replace(str(home), HOME_AS))
        (out / "events.jsonl").write_text("\n".join(kept) + "\n")


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "--hook":
        hook(argv[1])
        return 0
    sys.path[:0] = [str(REPO)]
    from tests.e2e import copilot_cli

    out = (
        Path(argv[0])
        if argv
        else (REPO / "tests" / "fixtures" / f"copilot-cli-{copilot_cli.requested_version()}")
    )
    out.mkdir(parents=True, exist_ok=True)
    (out / "stream.jsonl").write_text("")
    record(out)
    print(f"written: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
