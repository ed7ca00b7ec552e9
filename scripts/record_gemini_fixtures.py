#!/usr/bin/env python3
"""Record the hook payloads and the requests of the real Gemini CLI: tests/fixtures/gemini-cli-<v>/.

Runs the pinned ``@google/gemini-cli`` (npm, cached like the e2e suite's:
tests/e2e/gemini_cli.py) offline against the scripted mock of its API
(tests/e2e/gemini_mock.py), in a throwaway HOME whose ``~/.gemini/settings.json`` holds the
mock's auth settings and one capture hook (``matcher: ""``) for each event ctxmode can use
(user scope: no trust entry). The hook writes its stdin verbatim, with the GEMINI*/CLAUDE*
variables it saw (``_env``) and its working directory (``_cwd``), and prints nothing.

Runs (``gemini --skip-trust --approval-mode yolo -o json -p``, in a git repository):
1. "ledger": ``please fix the ledger module``: write_file ``src/ledger/reconcile.py``, replace
   in it, ``python3 tests/test_reconcile.py`` (exits 2: the test file is missing), final text;
2. "tour" (``--resume``): the mock reports 900,000 prompt tokens on its first reply (a
   read_file), so the CLI compresses before its second request; then read_file of a missing
   file, ``echo tour-ok``, ``echo tour-fail >&2; exit 3``, a replace that matches nothing,
   list_directory, glob, grep_search, final text.

Written: the first payload of each kind, ``<Event>[.<source|trigger|reason|tool>[.<what>]].json``
(``BeforeModel.after_compress.json``: the first one whose request holds the summary);
``stream.jsonl``, every hook call in order (``{"run", "event", "payload"}``);
``requests.jsonl``, every request the mock received (``{"run", "rpc", "model", "body"}``, the
system prompt and tool declarations replaced by their sizes);
``request.after_compress.json``, the body of the first agent request after the compression;
``_hook_env.json``, per fixture file the hook's cwd and GEMINI*/CLAUDE* variables;
``tools_offered.json``, the tools the agent requests declared (``--approval-mode yolo``). The temp
project becomes ``/tmp/proj`` and the temp HOME ``/tmp/home``; ids and times are left as
they are.

Usage: scripts/record_gemini_fixtures.py [OUT_DIR]  (default tests/fixtures/gemini-cli-<version>/)
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
sys.path[:0] = [str(REPO), str(REPO / "tests" / "e2e")]

from gemini_cli import ensure_gemini, hermetic_env, prepare_home, run_gemini  # noqa: E402
from gemini_mock import COMPRESS_TOKENS, MockGemini, Steps, call  # noqa: E402

EVENTS = (
    "SessionStart",
    "SessionEnd",
    "BeforeAgent",
    "AfterAgent",
    "BeforeModel",
    "BeforeTool",
    "AfterTool",
    "PreCompress",
)

CAPTURE = r"""import json, os, sys, time
event, out = sys.argv[1], sys.argv[2]
data = sys.stdin.buffer.read()
try:
    payload = json.loads(data)
except ValueError:
    payload = {"_unparsed": data.decode("utf-8", "replace")}
record = {
    "_env": {k: v for k, v in os.environ.items() if k.startswith(("GEMINI_", "CLAUDE_"))},
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
# The <what> of a tool payload's file name, by a distinctive argument.
DETAILS = {
    FAILING: "failing_command",
    "echo tour-fail >&2; exit 3": "exit3",
    "missing/nowhere.py": "missing",
    "NO SUCH TEXT": "no_match",
}
# Names of the variables whose values are kept in _hook_env.json (the rest: a secret).
ENV_KEPT = ("GEMINI_SESSION_ID", "GEMINI_PROJECT_DIR", "GEMINI_CWD", "CLAUDE_PROJECT_DIR",
            "GEMINI_PLANS_DIR", "GEMINI_CLI_NO_RELAUNCH", "GEMINI_CLI_TRUST_WORKSPACE")  # fmt: skip


def _write_settings(home: Path, capture: Path, out: Path) -> None:
    hooks = {
        event: [
            {
                "matcher": "",
                "hooks": [
                    {
                        "type": "command",
                        "name": f"capture-{event.lower()}",
                        "command": f"{sys.executable} {capture} {event} {out}",
                        "timeout": 10000,
                    }
                ],
            }
        ]
        for event in EVENTS
    }
    prepare_home(home, {"hooks": hooks})


def _project(base: Path) -> Path:
    proj = base / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "README.md").write_text("# tour readme\n")
    env = hermetic_env(base / "home")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=proj, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=proj, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=proj, check=True, env=env)
    return proj


def _scrub(text: str, base: Path) -> str:
    real = os.path.realpath(base)
    for prefix in {real, str(base)}:
        text = text.replace(prefix + "/home", "/tmp/home").replace(prefix + "/proj", "/tmp/proj")
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
    """A request body without the CLI's constant bulk (its system prompt and tool
    declarations, ~40 KB each time): their sizes stand in for them."""
    out = dict(body)
    for key in ("systemInstruction", "tools"):
        if key in out:
            out[key] = {"_chars": len(json.dumps(out[key]))}
    return out


def _name(payload: dict[str, Any]) -> str:
    event = str(payload.get("hook_event_name", "unknown"))
    parts = [event]
    for key in ("source", "trigger", "reason"):
        if isinstance(payload.get(key), str):
            parts.append(payload[key])
    tool = payload.get("tool_name")
    if isinstance(tool, str):
        parts.append(tool)
        args = json.dumps(payload.get("tool_input", {}))
        detail = next((what for needle, what in DETAILS.items() if needle in args), "")
        if detail:
            parts.append(detail)
    if event == "BeforeModel" and "<state_snapshot>" in json.dumps(payload):
        parts.append("after_compress")
    return ".".join(parts)


def _check(run: Any) -> None:
    if run.returncode != 0 or "Hook" in run.stderr:
        raise SystemExit(run.describe())


def record(out_dir: Path) -> list[str]:
    install = ensure_gemini()
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxmode-gemini-rec-") as tmp:
        base = Path(tmp)
        home, captured = base / "home", base / "captured"
        captured.mkdir()
        capture = base / "capture.py"
        capture.write_text(CAPTURE)
        _write_settings(home, capture, captured)
        proj = _project(base)
        env = hermetic_env(home)
        ledger = Steps(
            call("write_file", file_path=FILE, content=CODE),
            call(
                "replace",
                file_path=FILE,
                instruction="use floats and round the total",
                old_string="    total = 0\n    for e in entries:\n        total += e\n",
                new_string="    total = 0.0\n    for e in entries:\n        total += float(e)\n",
            ),
            call("run_shell_command", command=FAILING, description="run the tests"),
            final="The module is written; its test file is missing.",
        )
        tour = Steps(
            call("read_file", prompt_tokens=COMPRESS_TOKENS, file_path="README.md"),
            call("read_file", file_path="missing/nowhere.py"),
            call("run_shell_command", command="echo tour-ok"),
            call("run_shell_command", command="echo tour-fail >&2; exit 3"),
            call(
                "replace",
                file_path="README.md",
                instruction="an edit that cannot apply",
                old_string="NO SUCH TEXT",
                new_string="x",
            ),
            call("list_directory", dir_path="."),
            call("glob", pattern="**/*.md"),
            call("grep_search", pattern="tour"),
            final="Tour finished.",
        )
        runs: list[tuple[str, int, int]] = []  # (label, hook calls, requests) after each run
        with MockGemini(ledger) as api:
            first = run_gemini(
                install, api.base_url, "please fix the ledger module", cwd=proj, env=env
            )
            _check(first)
            runs.append(("ledger", len(os.listdir(captured)), len(api.requests)))
            api.script = tour
            second = run_gemini(
                install,
                api.base_url,
                "now the fixture tour please",
                cwd=proj,
                env=env,
                resume=first.session_id,
            )
            _check(second)
            runs.append(("tour", len(os.listdir(captured)), len(api.requests)))
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
                    "env": {k: env_seen[k] for k in ENV_KEPT if k in env_seen},
                    "other_names": sorted(k for k in env_seen if k not in ENV_KEPT),
                }
        (out_dir / "stream.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stream))
        (out_dir / "_hook_env.json").write_text(json.dumps(hook_env, indent=2) + "\n")
        lines, after = [], None
        offered: set[str] = set()
        for req in requests:
            for group in req.body.get("tools", []) if req.is_agent_turn else []:
                for declaration in group.get("functionDeclarations", []):
                    offered.add(declaration.get("name", ""))
            run = next(label for label, _, count in runs if req.seq < count)
            body = json.loads(_scrub(json.dumps(req.body), base))
            slim = _slim(body)
            lines.append(json.dumps({"run": run, "rpc": req.rpc, "model": req.model, "body": slim}))
            if after is None and req.is_agent_turn and "<state_snapshot>" in req.text():
                after = body
        (out_dir / "requests.jsonl").write_text("\n".join(lines) + "\n")
        (out_dir / "tools_offered.json").write_text(json.dumps(sorted(offered), indent=2) + "\n")
        written += ["stream.jsonl", "_hook_env.json", "requests.jsonl", "tools_offered.json"]
        if after is None:
            raise SystemExit("no request after a compression: the CLI did not compress")
        (out_dir / "request.after_compress.json").write_text(json.dumps(after, indent=2) + "\n")
        written.append("request.after_compress.json")
    return written


def main() -> None:
    from gemini_cli import requested_version

    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else (REPO / "tests" / "fixtures" / f"gemini-cli-{requested_version()}")
    )
    for name in record(out):
        print(out / name)


if __name__ == "__main__":
    main()
