#!/usr/bin/env python3
"""Record what ctxmode's OpenCode plugin hands its hook scripts: tests/fixtures/opencode-<v>/.

Runs the pinned ``opencode-ai`` (npm, cached like the e2e suite's: tests/e2e/opencode_cli.py)
offline against the scripted Chat Completions mock (tests/e2e/chat_mock.py), in a throwaway
HOME whose ``~/.config/opencode/`` holds the mock provider and ctxmode's plugin, installed by
``ctxmode install --host opencode`` with one change: its hooks folder is a folder of
capture scripts, each of which writes its stdin (the plugin's payload, verbatim) and then
runs ctxmode's real shim on it, so the session is recorded *and* handled (the snapshot
after the compaction is real). OpenCode's default permissions (no ``--auto``).

Runs (``opencode run --format json``, in a git repository):
1. "ledger": write ``src/ledger/reconcile.py``, edit it, read ``README.md``, glob, grep,
   todowrite, ``python3 tests/test_reconcile.py`` (exits 2), an edit whose oldString is not
   in the file (the tool throws: ``tool.error``), a commit, final text;
2. "tour" (``--session``): the mock reports 199,000 prompt tokens on its first reply (a
   ``bash``), so OpenCode compacts before its next request; then ``echo after``, final text.

Written: the first payload of each kind, ``<hook>[.<tool>[.<what>]].json`` as
``{"event", "client", "payload"}`` (``event``: the shim's neutral event); ``stream.jsonl``, every
call in order (``{"run", "shim", "payload"}``); ``tools.run.json``, the tools the agent's
requests offered; ``history/opencode.db``, OpenCode's database of both runs (for
``ctxmode import``: tests/test_import_opencode.py). The temp project becomes
``/home/dev/project``, the temp HOME ``/home/dev`` (in the database too).

Usage: scripts/record_opencode_fixtures.py [OUT_DIR]  (default tests/fixtures/opencode-<version>/)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from ctxmode.hosts import opencode  # noqa: E402
from ctxmode.hosts.opencode import install as opencode_install  # noqa: E402
from tests.e2e import chat_mock as cm  # noqa: E402
from tests.e2e import opencode_cli as oc  # noqa: E402

FILE = "src/ledger/reconcile.py"
FAILING = "python3 tests/test_reconcile.py"
CODE = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"
SHIM_EVENTS = {
    "post_tool_use": "PostToolUse",
    "user_prompt_submit": "UserPromptSubmit",
    "pre_compact": "PreCompact",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
}
# A capture script: the payload to a file, then ctxmode's real shim on it (its stdout too).
CAPTURE = """\
import os, sys, subprocess, time
data = sys.stdin.buffer.read()
out = os.environ["CTXMODE_RECORD_DIR"]
name = "%d.%d.{shim}.json" % (time.time_ns(), os.getpid())
with open(os.path.join(out, name), "wb") as fh:
    fh.write(data)
done = subprocess.run([{python!r}, "-I", "-S", {script!r}, *sys.argv[1:]], input=data,
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
sys.stdout.buffer.write(done.stdout)
"""


def capture_hooks(folder: Path) -> Path:
    """A package folder whose ``hooks/`` holds a capture script per shim."""
    hooks = folder / "hooks"
    hooks.mkdir(parents=True)
    real = REPO / "ctxmode" / "hooks"
    for shim in SHIM_EVENTS:
        text = CAPTURE.format(shim=shim, python=sys.executable, script=str(real / f"{shim}.py"))
        (hooks / f"{shim}.py").write_text(text)
    return folder


def ledger_script(project: Path) -> cm.Script:
    steps = iter(
        [
            cm.call("write", filePath=str(project / FILE), content=CODE),
            cm.call(
                "edit",
                filePath=str(project / FILE),
                oldString="    total = 0\n",
                newString="    total = 0.0\n",
            ),
            cm.call("read", filePath=str(project / "README.md")),
            cm.call("glob", pattern="**/*.py"),
            cm.call("grep", pattern="reconcile", include="*.py"),
            cm.call(
                "todowrite",
                todos=[
                    {
                        "content": "fix the ledger",
                        "status": "in_progress",
                        "priority": "high",
                        "id": "1",
                    },
                    {
                        "content": "write its test",
                        "status": "pending",
                        "priority": "medium",
                        "id": "2",
                    },
                ],
            ),
            cm.call("bash", command=FAILING, description="run the tests"),
            cm.call("edit", filePath=str(project / FILE), oldString="no such text", newString="x"),
            cm.call(
                "bash",
                command=f"git add {FILE} && git commit -qm 'Reconcile ledger totals' && echo committed",
                description="commit",
            ),
        ]
    )

    def script(req: cm.Request) -> cm.Reply:
        if not req.tool_names:  # the title request
            return cm.say("Ledger fix")
        return next(steps, cm.say("The module is written; its test file is missing."))

    return script


def tour_script() -> cm.Script:
    steps = iter(
        [
            cm.Reply(
                calls=[cm.Call("bash", {"command": "echo tour"})], prompt_tokens=oc.COMPACT_TOKENS
            ),
            cm.call("bash", command="echo after"),
        ]
    )

    def script(req: cm.Request) -> cm.Reply:
        if not req.tool_names:
            if "summar" in json.dumps(req.messages[:1]).lower():
                return cm.say(
                    "Summary: the ledger module was written and committed; its test fails."
                )
            return cm.say("Tour")
        return next(steps, cm.say("Next: write tests/test_reconcile.py."))

    return script


def rewrite(value: Any, home: str, project: str) -> Any:
    if isinstance(value, str):
        return value.replace(project, "/home/dev/project").replace(home, "/home/dev")
    if isinstance(value, list):
        return [rewrite(v, home, project) for v in value]
    if isinstance(value, dict):
        return {k: rewrite(v, home, project) for k, v in value.items()}
    return value


def fixture_name(payload: dict[str, Any]) -> str:
    hook = str(payload.get("hook"))
    given = payload.get("input") or {}
    if hook == "tool.execute.after":
        tool = given.get("tool")
        meta = (payload.get("output") or {}).get("metadata") or {}
        detail = (
            f".exit{meta['exit']}" if isinstance(meta.get("exit"), int) and meta["exit"] else ""
        )
        return f"{hook}.{tool}{detail}"
    if hook == "tool.error":
        return f"{hook}.{given.get('properties', {}).get('part', {}).get('tool')}"
    return hook


def save_db(db: Path, out: Path, home: Path, project: Path) -> None:
    """OpenCode's database (every session of both runs) → ``out/history/opencode.db``, a
    consistent copy (the backup API reads through its WAL) with the temp paths rewritten in
    every text column, vacuumed so no old page keeps them."""
    import sqlite3

    target = out / "history" / "opencode.db"
    target.parent.mkdir(parents=True, exist_ok=True)
    source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    source.backup(copy)
    source.close()
    tables = [r[0] for r in copy.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    for table in tables:
        if table.startswith("sqlite_"):
            continue
        for column in copy.execute(f'PRAGMA table_info("{table}")').fetchall():
            name = column[1]
            copy.execute(
                f'UPDATE "{table}" SET "{name}" = replace(replace("{name}", ?, ?), ?, ?)'
                f" WHERE typeof(\"{name}\") = 'text'",
                (str(project), "/home/dev/project", str(home), "/home/dev"),
            )
    copy.commit()
    copy.execute("PRAGMA journal_mode=DELETE")
    copy.execute("VACUUM")
    copy.close()


def main(argv: list[str]) -> int:
    install = oc.ensure_opencode()
    out = (
        Path(argv[1])
        if len(argv) > 1
        else REPO / "tests" / "fixtures" / f"opencode-{install.version}"
    )
    with tempfile.TemporaryDirectory(prefix="ctxmode-record-opencode-") as tmp:
        root = Path(tmp).resolve()
        home, project, records = root / "home", root / "project", root / "records"
        for folder in (home, project, records):
            folder.mkdir()
        subprocess.run(["git", "init", "-q"], cwd=project, check=True)
        (project / "README.md").write_text("# Ledger\n")
        env = oc.hermetic_env(
            home, {"CTXMODE_HOME": str(root / "data"), "CTXMODE_RECORD_DIR": str(records)}
        )
        package = capture_hooks(root / "pkg")
        plugin = home / ".config" / "opencode" / "plugin" / opencode.PLUGIN_NAME
        plugin.parent.mkdir(parents=True)
        plugin.write_text(opencode_install.render(sys.executable, str(package)))
        offered: set[str] = set()
        runs = []
        with cm.MockChat(ledger_script(project), root / "requests.jsonl") as api:
            oc.prepare_home(home, api.base_url)
            first = oc.run_opencode(install, "please fix the ledger module", cwd=project, env=env)
            assert first.returncode == 0, first.describe()
            runs.append(("ledger", sorted(os.listdir(records))))
            api.script = tour_script()
            second = oc.run_opencode(
                install, "now the tour please", cwd=project, env=env, session=first.session_id
            )
            assert second.returncode == 0, second.describe()
            for req in api.requests:
                offered.update(req.tool_names)
        done = set(runs[0][1])
        runs.append(("tour", [n for n in sorted(os.listdir(records)) if n not in done]))
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        stream = []
        seen: set[str] = set()
        for run, names in runs:
            for name in names:
                shim = name.split(".")[2]
                payload = rewrite(json.loads((records / name).read_text()), str(home), str(project))
                stream.append({"run": run, "shim": shim, "payload": payload})
                kind = fixture_name(payload)
                if kind in seen:
                    continue
                seen.add(kind)
                record = {
                    "event": SHIM_EVENTS[shim],
                    "client": f"opencode-{install.version}",
                    "payload": payload,
                }
                (out / f"{kind}.json").write_text(json.dumps(record, indent=1) + "\n")
        (out / "stream.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stream))
        (out / "tools.run.json").write_text(json.dumps(sorted(offered), indent=1) + "\n")
        save_db(home / ".local" / "share" / "opencode" / "opencode.db", out, home, project)
        print(f"{len(stream)} calls, {len(seen)} fixtures, {len(offered)} tools → {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
