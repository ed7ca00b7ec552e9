#!/usr/bin/env python3
"""Record the hook payloads and the requests of the real Qwen Code CLI: tests/fixtures/qwen-code-<v>/.

Runs the pinned ``@qwen-code/qwen-code`` (npm, cached like the e2e suite's:
tests/e2e/qwen_cli.py) offline against the Chat Completions mock (tests/e2e/chat_mock.py), in a
throwaway HOME whose ``~/.qwen/settings.json`` selects the OpenAI auth and holds one capture
hook (``matcher: ""``) for each event ctxmode can use. The hook writes its stdin verbatim,
with the QWEN*/CLAUDE* variables it saw (``_env``) and its working directory (``_cwd``), and
prints nothing.

Runs (``qwen --yolo PROMPT``, in a git repository):
1. "ledger": write_file ``src/ledger/reconcile.py``, edit it, ``python3 tests/test_reconcile.py``
   (exits 2: the test file is missing), ``git add -A && git commit``, read_file, glob,
   grep_search, a deferred tool through tool_call (``cron_list``), final text;
2. "compress": ``qwen --continue /compress`` (the mock reports 60,000 prompt tokens: below
   that the CLI finds compression "not beneficial");
3. "after": ``qwen --continue`` with a new prompt: the first requests after the compression;
4. "default": a new session in the default approval mode (no ``--yolo``): the tools the
   CLI offers there; its shell call is refused headless.

Written: the first payload of each kind, ``<Event>[.<source|trigger>][.<tool>[.<what>]].json``;
``stream.jsonl``, every hook call in order (``{"run", "event", "payload"}``);
``requests.jsonl``, every request (``{"run", "body"}``, system prompt and tool declarations
replaced by their sizes); ``tools.yolo.json`` and ``tools.default.json``: the tools declared
and the deferred ones (reachable through tool_search/tool_call) of each mode;
``_hook_env.json``, per fixture the hook's cwd and QWEN*/CLAUDE* variables;
``chats/<session>.jsonl``, Qwen's own history of each session. The temp project
becomes ``/home/dev/project`` and the temp HOME ``/home/dev``; ids and times stay.

Usage: scripts/record_qwen_fixtures.py [OUT_DIR]  (default tests/fixtures/qwen-code-<version>/)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO)]

from tests.e2e.chat_mock import MockChat, Reply, Request, Steps, call  # noqa: E402
from tests.e2e.qwen_cli import (  # noqa: E402
    ensure_qwen,
    hermetic_env,
    prepare_home,
    requested_version,
    run_qwen,
)

EVENTS = (
    "SessionStart",
    "SessionEnd",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PostToolBatch",
    "PreCompact",
    "PostCompact",
    "Stop",
)

CAPTURE = r"""import json, os, sys, time
event, out = sys.argv[1], sys.argv[2]
data = sys.stdin.buffer.read()
try:
    payload = json.loads(data)
except ValueError:
    payload = {"_unparsed": data.decode("utf-8", "replace")}
record = {
    "_env": {k: v for k, v in os.environ.items() if k.startswith(("QWEN", "CLAUDE_"))},
    "_cwd": os.getcwd(),
    "payload": payload,
}
name = "%019d-%d-%s.json" % (time.time_ns(), os.getpid(), event)
with open(os.path.join(out, name), "w") as fh:
    json.dump(record, fh, indent=2)
"""

FILE = "src/ledger/reconcile.py"
CODE = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"
FAILING = "python3 tests/test_reconcile.py"
COMMIT = "git add -A && git commit -q -m 'Reconcile ledger totals'"
COMPRESS_TOKENS = 60_000
# The <what> of a tool payload's file name, by a distinctive argument.
DETAILS = {FAILING: "failing_command", "git commit": "commit", "cron_list": "cron_list"}
ENV_KEPT = ("QWEN_PROJECT_DIR", "CLAUDE_PROJECT_DIR", "QWEN_CODE_SESSION_ID", "QWEN_SESSION_ID")


def is_compaction(req: Request) -> bool:
    """Qwen's summary request asks for a ``<state_snapshot>``."""
    return "<state_snapshot>" in req.last_user_text() or "summarizes a conversation" in "".join(
        req.texts("user")
    )


def _write_settings(home: Path, capture: Path, out: Path) -> None:
    hooks = {
        event: [
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "command": f"{sys.executable} {capture} {event} {out}",
                        "timeout": 10,
                    }
                ],
            }
        ]
        for event in EVENTS
    }
    prepare_home(home, {"hooks": hooks})


def _project(base: Path) -> Path:
    proj = base / "project"
    (proj / "tests").mkdir(parents=True)
    (proj / "README.md").write_text("# ledger readme\n")
    env = hermetic_env(base / "home")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=proj, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=proj, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=proj, check=True, env=env)
    return proj


def _scrub(text: str, base: Path) -> str:
    real = os.path.realpath(base)
    for prefix in sorted({real, str(base)}, key=len, reverse=True):
        text = text.replace(prefix + "/project", "/home/dev/project")
        text = text.replace(prefix + "/home", "/home/dev")
        # Qwen's per-project folder name: the path with "/" as "-".
        mangled = "".join(c if c.isascii() and c.isalnum() else "-" for c in prefix + "/project")
        text = text.replace(mangled, "-home-dev-project")
    pythons = {sys.executable, shutil.which("python3") or sys.executable, _shell_python()}
    pythons |= {os.path.realpath(p) for p in pythons}
    for python in sorted(pythons, key=len, reverse=True):
        text = text.replace(python, "/usr/bin/python3")
    return text


def _shell_python() -> str:
    """The interpreter ``python3`` names in a shell here (it shows in a command's output)."""
    out = subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"],
        capture_output=True,
        text=True,
        check=False,
    )
    return out.stdout.strip() or sys.executable


def _slim(body: dict[str, Any]) -> dict[str, Any]:
    out = dict(body)
    if "tools" in out:
        out["tools"] = {"_chars": len(json.dumps(out["tools"]))}
    messages = []
    for message in out.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system":
            message = {**message, "content": {"_chars": len(json.dumps(message.get("content")))}}
        messages.append(message)
    out["messages"] = messages
    return out


def _name(payload: dict[str, Any]) -> str:
    event = str(payload.get("hook_event_name", "unknown"))
    parts = [event]
    for key in ("source", "trigger"):
        if isinstance(payload.get(key), str) and payload[key]:
            parts.append(payload[key])
    tool = payload.get("tool_name")
    if isinstance(tool, str):
        parts.append(tool)
        args = json.dumps(payload.get("tool_input", {}))
        detail = next((what for needle, what in DETAILS.items() if needle in args), "")
        if detail and detail != tool:
            parts.append(detail)
    if event == "UserPromptSubmit" and payload.get("prompt") == "":
        parts.append("empty")
    return ".".join(parts)


def offered(requests: list[Request]) -> dict[str, list[str]]:
    """The tools the agent's requests declared, and the deferred ones they named."""
    declared: set[str] = set()
    deferred: set[str] = set()
    for req in requests:
        if not req.body.get("tools"):
            continue
        declared.update(req.tool_names)
        for text in req.texts("user"):
            at = text.find("reachable through `tool_search`")
            if at != -1:
                block = text[at : text.find("</system-reminder>", at)]
                deferred.update(re.findall(r'^- "([A-Za-z0-9_]+)"', block, re.M))
    return {"declared": sorted(declared), "deferred": sorted(deferred - declared)}


def _check(run: Any) -> None:
    if run.returncode != 0:
        raise SystemExit(run.describe())


def record(out_dir: Path) -> list[str]:
    install = ensure_qwen()
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxmode-qwen-rec-") as tmp:
        base = Path(tmp)
        home, captured = base / "home", base / "captured"
        captured.mkdir()
        capture = base / "capture.py"
        capture.write_text(CAPTURE)
        _write_settings(home, capture, captured)
        proj = _project(base)
        env = hermetic_env(home)
        ledger = Steps(
            call("write_file", file_path=str(proj / FILE), content=CODE),
            call(
                "edit",
                file_path=str(proj / FILE),
                old_string="    total = 0\n    for e in entries:\n        total += e\n",
                new_string="    total = 0.0\n    for e in entries:\n        total += float(e)\n",
            ),
            call("run_shell_command", command=FAILING, description="run the tests"),
            call("run_shell_command", command=COMMIT, description="commit"),
            call("read_file", file_path=str(proj / "README.md")),
            call("glob", pattern="**/*.py"),
            call("grep_search", pattern="reconcile"),
            call("tool_call", name="cron_list", arguments={}),
            final="The module is written and committed; its test file is missing.",
            is_compaction=is_compaction,
        )
        after = Steps(final="Carrying on.", is_compaction=is_compaction)
        default = Steps(
            call("run_shell_command", command="echo default-mode"),
            final="Default mode done.",
            is_compaction=is_compaction,
        )

        def script(req: Request) -> Reply:
            reply = current[0](req)
            reply.prompt_tokens = COMPRESS_TOKENS
            return reply

        current = [ledger]
        runs: list[tuple[str, int, int]] = []
        tools: dict[str, dict[str, list[str]]] = {}
        with MockChat(script) as api:
            plan: list[tuple[str, Steps, str, tuple[str, ...]]] = [
                ("ledger", ledger, "please fix the ledger module", ("--yolo",)),
                ("compress", after, "/compress", ("--yolo", "--continue")),
                ("after", after, "what is left to do?", ("--yolo", "--continue")),
                ("default", default, "say hello in the default mode", ()),
            ]
            for label, steps, prompt, flags in plan:
                current[0] = steps
                start = len(api.requests)
                _check(run_qwen(install, api.base_url, prompt, cwd=proj, env=env, flags=flags))
                runs.append((label, len(os.listdir(captured)), len(api.requests)))
                if label in ("ledger", "default"):
                    mode = "yolo" if label == "ledger" else "default"
                    tools[mode] = offered(api.requests[start:])
            requests = list(api.requests)
        out_dir.mkdir(parents=True, exist_ok=True)
        stream, hook_env = [], {}
        seen: set[str] = set()
        for index, name in enumerate(sorted(os.listdir(captured))):
            run = next(label for label, count, _ in runs if index < count)
            record_ = json.loads(_scrub((captured / name).read_text(), base))
            payload = record_["payload"]
            stream.append({"run": run, "event": payload.get("hook_event_name"), "payload": payload})
            fixture = _name(payload)
            if fixture not in seen:
                seen.add(fixture)
                (out_dir / f"{fixture}.json").write_text(json.dumps(payload, indent=2) + "\n")
                written.append(f"{fixture}.json")
                env_seen = record_["_env"]
                hook_env[fixture] = {
                    "cwd": record_["_cwd"],
                    "env": {k: env_seen[k] for k in env_seen if k in ENV_KEPT},
                    "other_names": sorted(k for k in env_seen if k not in ENV_KEPT),
                }
        (out_dir / "stream.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stream))
        (out_dir / "_hook_env.json").write_text(json.dumps(hook_env, indent=2) + "\n")
        lines = []
        for req in requests:
            run = next(label for label, _, count in runs if req.seq < count)
            body = _slim(json.loads(_scrub(json.dumps(req.body), base)))
            lines.append(json.dumps({"run": run, "body": body}))
        (out_dir / "requests.jsonl").write_text("\n".join(lines) + "\n")
        # Qwen's own history of the sessions (``~/.qwen/projects/<path>/chats/<id>.jsonl``),
        # for the import of it: ``chats/<id>.jsonl``.
        chats = out_dir / "chats"
        chats.mkdir(exist_ok=True)
        for chat in sorted((home / ".qwen" / "projects").glob("*/chats/*.jsonl")):
            (chats / chat.name).write_text(_scrub(chat.read_text(), base))
            written.append(f"chats/{chat.name}")
        for mode, names in tools.items():
            (out_dir / f"tools.{mode}.json").write_text(json.dumps(names, indent=2) + "\n")
            written.append(f"tools.{mode}.json")
        written += ["stream.jsonl", "_hook_env.json", "requests.jsonl"]
    return written


def main() -> None:
    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else (REPO / "tests" / "fixtures" / f"qwen-code-{requested_version()}")
    )
    for name in record(out):
        print(out / name)


if __name__ == "__main__":
    main()
