"""ctxmode's OpenCode plugin itself, run by Node as OpenCode runs it (its hooks called with
OpenCode 1.18.33's shapes: tests/fixtures/opencode-1.18.33/): it must never break OpenCode.

Every hook resolves and leaves OpenCode's objects alone when the interpreter is missing,
when the hook hangs (killed at its timeout: the process is gone after), or when it is fed
nonsense; with the real shims, the snapshot of a compaction reaches the system prompt of
each later request once. The real OpenCode runs it in tests/e2e/test_opencode_e2e.py.
Skipped where no ``node`` is installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import ctxmode
from ctxmode.hosts.opencode import install as opencode_install
from tests.helpers import cli

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
SESSION = "ses_db7808d5effeioekT5HaHlw5v9"

# Calls every hook as OpenCode 1.18.33 does (a session, a tool, a prompt, a compaction, two
# model requests), then nonsense; prints what the two requests' system prompts became.
DRIVER = """
const [, , pluginPath, directory, session] = process.argv;
const mod = await import(pluginPath);
const plugin = await mod.CtxmodePlugin({ directory });
const event = (type, extra) => plugin.event({ event: { id: "evt_1", type, properties: { sessionID: session, ...extra } } });
await event("session.created", { info: { id: session, directory } });
await plugin["chat.message"]({ sessionID: session }, { message: { id: "msg_1", role: "user", sessionID: session }, parts: [{ type: "text", text: "fix the naïve ledger — 5 €" }] });
await plugin["tool.execute.after"](
  { tool: "write", sessionID: session, callID: "call_1", args: { filePath: directory + "/src/ledger.py", content: "x = 1\\n" } },
  { title: "src/ledger.py", metadata: { exists: false }, output: "Wrote file successfully." });
await plugin["tool.execute.after"](
  { tool: "bash", sessionID: session, callID: "call_2", args: { command: "python3 tests/test_ledger.py" } },
  { title: "t", metadata: { output: "boom\\n", exit: 2, truncated: false }, output: "boom\\n" });
const summaryRequest = { system: ["You are a context summarization agent."] };
await plugin["experimental.session.compacting"]({ sessionID: session }, { context: [] });
await plugin["experimental.chat.system.transform"]({ sessionID: session }, summaryRequest);
await event("session.compacted");
const first = { system: ["You are opencode."] };
const second = { system: ["You are opencode."] };
await plugin["experimental.chat.system.transform"]({ sessionID: session }, first);
await plugin["experimental.chat.system.transform"]({ sessionID: session }, second);
await event("session.idle");
// A subagent's session (the task tool): it takes no snapshot, not even with inject_on_startup.
const child = "ses_child";
await plugin.event({ event: { type: "session.created", properties: { sessionID: child, info: { id: child, parentID: session } } } });
const subagent = { system: ["You are a subagent."] };
await plugin["experimental.chat.system.transform"]({ sessionID: child }, subagent);
for (const [name, hook] of Object.entries(plugin)) {
  for (const args of [[], [null, null], [undefined, {}], [{ sessionID: 3 }, { system: null }], ["x", 1]]) {
    await hook(...args);
  }
}
console.log(JSON.stringify({ summary: summaryRequest.system, first: first.system, second: second.system, subagent: subagent.system }));
"""


def run_plugin(tmp_path: Path, text: str, project: Path) -> dict[str, Any]:
    """Load ``text`` as the plugin in Node, drive it; assert it exited 0 and wrote nothing
    to stderr (an exception out of a hook would); what the system prompts became."""
    plugin = tmp_path / "plugin" / "ctxmode.mjs"  # .mjs: an ES module for any Node
    plugin.parent.mkdir(exist_ok=True)
    plugin.write_text(text)
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(driver), str(plugin), str(project), SESSION],
        capture_output=True,
        text=True,
        cwd=project,
        env={k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_the_snapshot_of_a_compaction_reaches_each_later_request_once(
    tmp_path: Path, project: Path
) -> None:
    # Hand-overs on: the session's end snapshot (session.idle) is there for the taking.
    cli("config", "set", "inject_on_startup", "true")
    result = run_plugin(tmp_path, opencode_install.render(sys.executable), project)
    assert result["summary"] == ["You are a context summarization agent."]
    first, second = result["first"], result["second"]
    assert first[0] == "You are opencode." and len(first) == 2
    assert first[1].startswith("<session_resume") and "src/ledger.py" in first[1]
    assert "python3 tests/test_ledger.py" in first[1]
    assert "fix the naïve ledger — 5 €" in first[1]  # UTF-8 through the pipe, whole
    assert second == first
    assert result["subagent"] == ["You are a subagent."]


def test_a_missing_interpreter_breaks_nothing(tmp_path: Path, project: Path) -> None:
    text = opencode_install.render(str(tmp_path / "no-such-python"))
    result = run_plugin(tmp_path, text, project)
    assert result["first"] == ["You are opencode."] and result["second"] == ["You are opencode."]


def test_a_hanging_hook_is_killed_at_its_timeout(tmp_path: Path, project: Path) -> None:
    """A hook that never ends: every call still resolves, and each hung process is gone."""
    pids = tmp_path / "pids"
    pids.mkdir()
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\necho $$ > {pids}/$$\nexec sleep 600\n")
    fake.chmod(0o755)
    limits = dict.fromkeys(opencode_install.timeouts(), 300)
    text = opencode_install.render(str(fake), os.path.dirname(ctxmode.__file__), limits)
    result = run_plugin(tmp_path, text, project)
    assert result["first"] == ["You are opencode."]
    started = [int(p.name) for p in pids.iterdir()]
    assert len(started) >= 8  # one per hook call
    for pid in started:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            continue  # gone
        assert state == "Z", f"hook process {pid} still running ({state})"
