#!/usr/bin/env python3
"""Record the hook payloads and a rollout file of the real Codex CLI: tests/fixtures/codex-<v>/.

Runs the pinned ``@openai/codex`` (npm, cached like the e2e suite's: tests/e2e/codex_cli.py)
offline against the scripted mock of the Responses API (tests/e2e/codex_mock.py), in a
throwaway HOME whose ``~/.codex/hooks.json`` registers a capture hook for every event Codex
fires, each trusted through a ``trusted_hash`` in ``~/.codex/config.toml`` (computed by
``ctxmode.hosts.codex.install.trusted_hash``: no trust bypass). The hook writes its stdin verbatim,
with the names of the CODEX*/CLAUDE*/PWD variables it saw (``_env_keys``) and its working
directory (``_cwd``).

Runs (``codex exec``, model gpt-5.5):
1. "ledger": apply_patch Add File, apply_patch Update File, ``git add -A && git commit …``,
   ``python3 tests/test_reconcile.py`` (exits 2), final text;
2. "tour": apply_patch Add File ``notes/todo.md``, an Update of a missing file (fails: no
   PostToolUse), ``echo tour-ok``, ``echo tour-fail >&2; exit 3``, an exec_command asking for
   escalated permissions;
3. ``resume <ledger> "what next?"`` with ``model_auto_compact_token_limit=50``: a compaction
   before the turn (PreCompact, PostCompact, SessionStart resume and compact);
4. "goal": ``create_goal`` (PostToolUse fires for it, its response a JSON object).

Written: the first payload of each kind, ``<Event>[.<source|trigger|tool>[.<what>]].json``;
``rollout.ledger.jsonl``, the ledger session's rollout file after all three runs; and
``stream.jsonl``, every hook call in order (``{"run", "event", "payload"}``). The temp
project becomes ``/tmp/proj`` and the temp HOME ``/tmp/home``; ids are left as they are.

Usage: scripts/record_codex_fixtures.py [OUT_DIR]  (default tests/fixtures/codex-<version>/)
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
sys.path[:0] = [str(REPO), str(REPO / "tests" / "e2e")]

from codex_cli import ensure_codex, hermetic_env, run_codex  # noqa: E402
from codex_mock import Call, MockResponses, Reply, Shell, Steps, patch, shell  # noqa: E402

from ctxmode.hosts.codex import EVENT_LABELS  # noqa: E402
from ctxmode.hosts.codex.install import trusted_hash  # noqa: E402

CAPTURE = r"""import json, os, sys, time
event, out = sys.argv[1], sys.argv[2]
data = sys.stdin.buffer.read()
try:
    payload = json.loads(data)
except ValueError:
    payload = {"_unparsed": data.decode("utf-8", "replace")}
record = {
    "_env_keys": sorted(k for k in os.environ if k.startswith(("CODEX", "CLAUDE")) or k == "PWD"),
    "_cwd": os.getcwd(),
}
record.update(payload)
name = "%019d-%d-%s.json" % (time.time_ns(), os.getpid(), event)
with open(os.path.join(out, name), "w") as fh:
    json.dump(record, fh, indent=2)
"""

LEDGER_ADD = (
    "*** Begin Patch\n*** Add File: src/ledger/reconcile.py\n+def reconcile(entries):\n"
    "+    total = 0\n+    for e in entries:\n+        total += e\n+    return total\n*** End Patch"
)
LEDGER_UPDATE = (
    "*** Begin Patch\n*** Update File: src/ledger/reconcile.py\n@@\n-    total = 0\n"
    "+    total = 0  # running total\n*** End Patch"
)
COMMIT = 'git add -A && git commit -q -m "Reconcile ledger totals" && git log -1 --format=%s'
FAILING = "python3 tests/test_reconcile.py"
TOUR_ADD = "*** Begin Patch\n*** Add File: notes/todo.md\n+- reconcile totals\n*** End Patch"
TOUR_MISSING = "*** Begin Patch\n*** Update File: missing/nowhere.py\n@@\n-a\n+b\n*** End Patch"
ESCALATED = "touch /tmp/ctxmode-escalated-probe"
GOAL = "Make the ledger reconcile with the bank statement"

# The <what> of a tool payload's file name, by its command or patch.
DETAILS = {
    LEDGER_ADD: "add",
    LEDGER_UPDATE: "update",
    COMMIT: "git_commit",
    FAILING: "failing_command",
    TOUR_MISSING: "failed_patch",
    "echo tour-ok": "",
    "echo tour-fail >&2; exit 3": "exit3",
    ESCALATED: "escalated",
}


def _write_hooks(home: Path, capture: Path, out: Path) -> None:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    hooks_file = codex_home / "hooks.json"
    hooks: dict[str, Any] = {}
    trust = []
    for event, label in EVENT_LABELS.items():
        timeout = 3 if event in ("SessionEnd", "Interrupt") else 10
        handler = {
            "type": "command",
            "command": f"{sys.executable} {capture} {event} {out}",
            "timeout": timeout,
        }
        hooks[event] = [{"hooks": [handler]}]
        key = json.dumps(f"{hooks_file}:{label}:0:0")
        trust.append(f'[hooks.state.{key}]\ntrusted_hash = "{trusted_hash(event, handler)}"\n')
    hooks_file.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
    (codex_home / "config.toml").write_text("\n".join(trust))


def _project(base: Path) -> Path:
    proj = base / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "README.md").write_text("# ledger\n")
    env = hermetic_env(base / "home")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=proj, check=True, env=env)
    subprocess.run(["git", "add", "."], cwd=proj, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=proj, check=True, env=env)
    return proj


def _scrub(text: str, base: Path) -> str:
    real = os.path.realpath(base)
    for prefix in {real, str(base)}:
        text = text.replace(prefix + "/home", "/tmp/home").replace(prefix + "/proj", "/tmp/proj")
    return text


def _name(record: dict[str, Any]) -> str:
    event = str(record.get("hook_event_name", "unknown"))
    parts = [event]
    for key in ("source", "trigger"):
        if isinstance(record.get(key), str):
            parts.append(record[key])
    tool = record.get("tool_name")
    if isinstance(tool, str):
        parts.append(tool)
        text = record.get("tool_input", {}).get("command", "")
        detail = DETAILS.get(text, "")
        if detail:
            parts.append(detail)
    return ".".join(parts)


def record(out_dir: Path) -> list[str]:
    install = ensure_codex()
    written: list[str] = []
    with tempfile.TemporaryDirectory(prefix="ctxmode-codex-rec-") as tmp:
        base = Path(tmp)
        home, captured = base / "home", base / "captured"
        captured.mkdir()
        capture = base / "capture.py"
        capture.write_text(CAPTURE)
        _write_hooks(home, capture, captured)
        proj = _project(base)
        env = hermetic_env(home)
        ledger = Steps(
            patch(LEDGER_ADD),
            patch(LEDGER_UPDATE),
            shell(COMMIT),
            shell(FAILING),
            final="Done: reconcile.py written and committed; the test file is still missing.",
        )
        tour = Steps(
            patch(TOUR_ADD),
            patch(TOUR_MISSING),
            shell("echo tour-ok"),
            shell("echo tour-fail >&2; exit 3"),
            Reply(
                calls=[
                    Shell(
                        ESCALATED,
                        {
                            "sandbox_permissions": "require_escalated",
                            "justification": "a fixture probe",
                        },
                    )
                ]
            ),
            final="Tour finished.",
        )
        runs: list[tuple[str, int]] = []
        with MockResponses(ledger) as api:
            first = run_codex(
                install,
                api.base_url,
                "Work on the ledger module: add the totals helper, commit it and run its tests.",
                cwd=proj,
                env=env,
            )
            if first.returncode != 0:
                raise SystemExit(first.describe())
            runs.append(("ledger", len(os.listdir(captured))))
            api.script = tour
            second = run_codex(install, api.base_url, "Take the fixture tour.", cwd=proj, env=env)
            if second.returncode != 0:
                raise SystemExit(second.describe())
            runs.append(("tour", len(os.listdir(captured))))
            api.script = Steps(final="Next: add tests/test_reconcile.py.")
            third = run_codex(
                install,
                api.base_url,
                "what next?",
                cwd=proj,
                env=env,
                resume=first.session_id,
                config=("model_auto_compact_token_limit=50",),
            )
            if third.returncode != 0:
                raise SystemExit(third.describe())
            runs.append(("resume-compact", len(os.listdir(captured))))
            # A goal (open work until complete): Codex's own way of tracking work.
            api.script = Steps(
                Reply(calls=[Call("create_goal", {"objective": GOAL})]), final="Goal set."
            )
            fourth = run_codex(install, api.base_url, "Set the goal.", cwd=proj, env=env)
            if fourth.returncode != 0:
                raise SystemExit(fourth.describe())
            runs.append(("goal", len(os.listdir(captured))))
        out_dir.mkdir(parents=True, exist_ok=True)
        stream = []
        seen: set[str] = set()
        files = sorted(os.listdir(captured))
        for index, name in enumerate(files):
            run = next(label for label, count in runs if index < count)
            text = _scrub((captured / name).read_text(), base)
            payload = json.loads(text)
            stream.append({"run": run, "event": payload.get("hook_event_name"), "payload": payload})
            fixture = _name(payload)
            if fixture not in seen:
                seen.add(fixture)
                (out_dir / f"{fixture}.json").write_text(json.dumps(payload, indent=2) + "\n")
                written.append(f"{fixture}.json")
        (out_dir / "stream.jsonl").write_text("".join(json.dumps(s) + "\n" for s in stream))
        written.append("stream.jsonl")
        rollouts = sorted((home / ".codex" / "sessions").rglob(f"*{first.session_id}.jsonl"))
        if rollouts:
            (out_dir / "rollout.ledger.jsonl").write_text(_scrub(rollouts[0].read_text(), base))
            written.append("rollout.ledger.jsonl")
    return written


def main() -> None:
    from codex_cli import requested_version

    out = (
        Path(sys.argv[1])
        if len(sys.argv) > 1
        else (REPO / "tests" / "fixtures" / f"codex-{requested_version()}")
    )
    for name in record(out):
        print(out / name)


if __name__ == "__main__":
    main()
