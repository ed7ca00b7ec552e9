#!/usr/bin/env python3
"""Record what ``ctxmode import`` reads from Codex and Gemini CLI: their own history files.

For each client, the pinned real CLI (npm, the e2e cache: tests/e2e/codex_cli.py,
gemini_cli.py) runs offline against the e2e suite's scripted mock, in a throwaway HOME,
with ctxmode's own hooks installed (as ``ctxmode install --host`` writes them) behind a
wrapper that first appends the payload to ``hooks.jsonl`` together with how many complete
lines the session's history file (``transcript_path``) held when the hook fired. So the
tests can replay the hooks exactly as they ran live (the file cut to that many lines) and
compare what they stored with what the import makes of the finished file; and the history
holds ctxmode's own output where the client keeps it (never to be imported back).

Codex (``codex exec``, model gpt-5.5, ``tools.update_plan.enabled``):
1. "ledger": update_plan, apply_patch Add File, apply_patch Update File, a git commit,
   ``python3 tests/test_reconcile.py`` (exits 2), an Update of a missing file (fails);
2. ``resume <ledger>`` with ``model_auto_compact_token_limit=1000``, below the usage the
   last reply reported (a compaction before the turn): the test file added, the same command again (passes), the plan completed;
3. "tour": ``echo tour-ok``, ``echo tour-fail >&2; exit 3``.

Gemini CLI (``gemini -p``, ``--approval-mode yolo``):
1. "ledger": write_file, replace, ``python3 tests/test_reconcile.py`` (exits 2);
2. ``--resume <ledger>``: the mock reports 900,000 prompt tokens, the CLI compresses before
   its next request; write_file of the test, the same command again (passes);
3. "tour": ``echo tour-ok``, ``echo tour-fail >&2; exit 3``, read_file of a missing file.

Written (``tests/fixtures/<client>-<version>/history/``): the client's files as they lie
under its home (``codex/sessions/YYYY/MM/DD/rollout-*.jsonl``; ``gemini/tmp/<project>/``
with ``chats/session-*.jsonl`` and ``.project_root``, and ``gemini/projects.json``), ``hooks.jsonl`` (``{"event", "lines",
"payload"}`` in the order the hooks ran), ``sessions.json`` (scenario → session id). The
temp project becomes ``/tmp/proj``, the temp HOME ``/tmp/home``; Codex's instructions
(``base_instructions`` and the developer messages, ~70 KB a session, never read) are
replaced by their length; the interpreter a command's output names becomes
``/usr/bin/python3``.

Usage: scripts/record_history.py codex|gemini [OUT_DIR]
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "e2e")]

# The hook wrapper: record the payload and the history file's complete lines, then run
# ctxmode's hook (the rest of argv) on the same stdin and pass its stdout on.
WRAPPER = r"""import json, os, subprocess, sys
event, out, command = sys.argv[1], sys.argv[2], sys.argv[3:]
data = sys.stdin.buffer.read()
try:
    payload = json.loads(data)
except ValueError:
    payload = {"_unparsed": data.decode("utf-8", "replace")}
lines = None
path = payload.get("transcript_path") if isinstance(payload, dict) else None
if isinstance(path, str) and os.path.isfile(path):
    with open(path, "rb") as fh:
        lines = fh.read().count(b"\n")
with open(out, "a") as fh:
    fh.write(json.dumps({"event": event, "lines": lines, "payload": payload}) + "\n")
done = subprocess.run(command, input=data, capture_output=True)
sys.stdout.buffer.write(done.stdout)
sys.stderr.buffer.write(done.stderr)
"""

LEDGER_ADD = (
    "*** Begin Patch\n*** Add File: src/ledger/reconcile.py\n+def reconcile(entries):\n"
    "+    total = 0\n+    for e in entries:\n+        total += e\n+    return total\n*** End Patch"
)
LEDGER_UPDATE = (
    "*** Begin Patch\n*** Update File: src/ledger/reconcile.py\n@@\n-    total = 0\n"
    "+    total = 0  # running total\n*** End Patch"
)
TEST_ADD = (
    "*** Begin Patch\n*** Add File: tests/test_reconcile.py\n"
    "+import sys\n+sys.path.insert(0, '.')\n+from src.ledger.reconcile import reconcile\n"
    "+assert reconcile([1, 2]) == 3\n*** End Patch"
)
MISSING = "*** Begin Patch\n*** Update File: missing/nowhere.py\n@@\n-a\n+b\n*** End Patch"
COMMIT = 'git add -A && git commit -q -m "Reconcile ledger totals" && git log -1 --format=%s'
FAILING = "python3 tests/test_reconcile.py"
TEST_CODE = "import sys\nsys.path.insert(0, '.')\nassert True\n"
PLAN = [
    {"step": "Add the reconcile helper", "status": "in_progress"},
    {"step": "Make its test pass", "status": "pending"},
]
DONE_PLAN = [{"step": s["step"], "status": "completed"} for s in PLAN]


def _project(base: Path, env: dict[str, str]) -> Path:
    proj = base / "proj"
    (proj / "tests").mkdir(parents=True)
    (proj / "src" / "ledger").mkdir(parents=True)
    (proj / "README.md").write_text("# ledger\n")
    for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=proj, check=True, env=env)
    return proj


def _scrub(text: str, base: Path) -> str:
    real = os.path.realpath(base)
    for prefix in sorted({real, str(base)}, key=len, reverse=True):
        text = text.replace(prefix + "/home", "/tmp/home").replace(prefix + "/proj", "/tmp/proj")
    return text


def _scrub_python(text: str) -> str:
    """The interpreters a command's output names (``python3`` in a shell) → /usr/bin/python3."""
    found = subprocess.run(
        ["python3", "-c", "import sys; print(sys.executable)"],
        capture_output=True, text=True, check=False,
    ).stdout.strip()  # fmt: skip
    pythons = {sys.executable, shutil.which("python3") or "", found} - {""}
    pythons |= {os.path.realpath(p) for p in pythons}
    for python in sorted(pythons, key=len, reverse=True):
        text = text.replace(python, "/usr/bin/python3")
    return text


def _slim_codex(line: str) -> str:
    """A rollout line with Codex's instructions replaced by their length (never read)."""
    record = json.loads(line)
    item = record.get("payload")
    if record.get("type") == "session_meta" and isinstance(item, dict):
        text = item.get("base_instructions")
        if isinstance(text, dict) and isinstance(text.get("text"), str):
            text["text"] = f"<{len(text['text'])} characters>"
    developer = (
        record.get("type") == "response_item"
        and isinstance(item, dict)
        and item.get("type") == "message"
        and item.get("role") == "developer"
    )
    for part in (item.get("content") or []) if developer else []:
        text = part.get("text") if isinstance(part, dict) else None
        if isinstance(text, str) and "<session_resume" not in text:  # ctxmode's own: kept
            part["text"] = f"<{len(text)} characters>"
    if record.get("type") == "compacted" and isinstance(item, dict):
        history = item.get("replacement_history")
        if isinstance(history, list):
            item["replacement_history"] = f"<{len(history)} items>"
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


def _wrapped(wrapper: Path, out: Path, event: str, command: str) -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(wrapper))} {event} {out} {command}"


def _hooks(hooks_file: Path, base: Path) -> list[dict[str, Any]]:
    found = []
    for line in hooks_file.read_text().splitlines():
        record = json.loads(_scrub_python(_scrub(line, base)))
        payload = record["payload"]
        if isinstance(payload, dict):
            payload.pop("transcript_path", None)  # the tests name the file where they put it
        found.append(record)
    return found


# -- Codex -----------------------------------------------------------------------------------


def record_codex(out_dir: Path) -> list[str]:
    from codex_cli import ensure_codex, hermetic_env, run_codex
    from codex_mock import Call, MockResponses, Reply, Steps, patch, shell

    from ctxmode.hosts.codex import EVENT_LABELS
    from ctxmode.hosts.codex.install import hook_specs, trusted_hash

    install = ensure_codex()
    with tempfile.TemporaryDirectory(prefix="ctxmode-codex-hist-") as tmp:
        base = Path(tmp)
        home = base / "home"
        hooks_out = base / "hooks.jsonl"
        wrapper = base / "wrap.py"
        wrapper.write_text(WRAPPER)
        env = hermetic_env(home, {"CTXMODE_HOME": str(base / "ctxmode")})
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True)
        hooks_file = codex_home / "hooks.json"
        hooks: dict[str, Any] = {}
        trust = []
        for spec in hook_specs():
            handler = {
                "type": "command",
                "command": _wrapped(wrapper, hooks_out, spec.event, spec.command),
                "timeout": spec.timeout,
            }
            hooks[spec.event] = [{"hooks": [handler]}]
            key = json.dumps(f"{hooks_file}:{EVENT_LABELS[spec.event]}:0:0")
            trust.append(
                f'[hooks.state.{key}]\ntrusted_hash = "{trusted_hash(spec.event, handler)}"\n'
            )
        hooks_file.write_text(json.dumps({"hooks": hooks}, indent=2) + "\n")
        (codex_home / "config.toml").write_text("\n".join(trust))
        proj = _project(base, env)
        plan = ("tools.update_plan.enabled=true",)
        ledger = Steps(
            Reply(calls=[Call("update_plan", {"plan": PLAN})]),
            patch(LEDGER_ADD),
            patch(LEDGER_UPDATE),
            shell(COMMIT),
            shell(FAILING),
            patch(MISSING),
            # A large usage on the last reply: the next turn compacts first (its own
            # replies report little, so it compacts only once).
            Reply(text="Done: reconcile.py committed; its test is missing.", input_tokens=5000),
        )
        sessions: dict[str, str] = {}
        with MockResponses(ledger) as api:
            first = run_codex(
                install,
                api.base_url,
                "Work on the ledger module and run its tests.",
                cwd=proj,
                env=env,
                config=plan,
            )
            _check_codex(first)
            sessions["ledger"] = first.session_id
            api.script = Steps(
                patch(TEST_ADD),
                shell(FAILING),
                Reply(calls=[Call("update_plan", {"plan": DONE_PLAN})]),
                final="The test passes now.",
            )
            second = run_codex(
                install,
                api.base_url,
                "add the missing test and run it again",
                cwd=proj,
                env=env,
                resume=first.session_id,
                config=(*plan, "model_auto_compact_token_limit=1000"),
            )
            _check_codex(second)
            api.script = Steps(
                shell("echo tour-ok"), shell("echo tour-fail >&2; exit 3"), final="Tour done."
            )
            third = run_codex(install, api.base_url, "Take the tour.", cwd=proj, env=env)
            _check_codex(third)
            sessions["tour"] = third.session_id
        shutil.rmtree(out_dir / "codex", ignore_errors=True)  # its README stays
        written: list[str] = []
        for path in sorted((codex_home / "sessions").rglob("rollout-*.jsonl")):
            rel = path.relative_to(codex_home)
            target = out_dir / "codex" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            text = _scrub_python(_scrub(path.read_text(), base))
            lines = [_slim_codex(line) for line in text.splitlines()]
            target.write_text("".join(line + "\n" for line in lines))
            written.append(str(target.relative_to(out_dir)))
        _write_common(out_dir, _hooks(hooks_out, base), sessions, written)
    return written


def _check_codex(run: Any) -> None:
    if run.returncode != 0 or run.hook_problems():
        raise SystemExit(run.describe())


# -- Gemini CLI ------------------------------------------------------------------------------


def record_gemini(out_dir: Path) -> list[str]:
    from gemini_cli import ensure_gemini, hermetic_env, prepare_home, run_gemini
    from gemini_mock import COMPRESS_TOKENS, MockGemini, Steps, call

    from ctxmode.hosts.gemini.install import hook_specs

    install = ensure_gemini()
    with tempfile.TemporaryDirectory(prefix="ctxmode-gemini-hist-") as tmp:
        base = Path(tmp)
        home = base / "home"
        hooks_out = base / "hooks.jsonl"
        wrapper = base / "wrap.py"
        wrapper.write_text(WRAPPER)
        env = hermetic_env(home, {"CTXMODE_HOME": str(base / "ctxmode")})
        hooks: dict[str, Any] = {}
        for spec in hook_specs():
            handler = {
                "type": "command",
                "name": spec.name,
                "command": _wrapped(wrapper, hooks_out, spec.event, spec.command),
                "timeout": spec.timeout,
            }
            group: dict[str, Any] = {"hooks": [handler]}
            if spec.matcher is not None:
                group["matcher"] = spec.matcher
            hooks[spec.event] = [group]
        prepare_home(home, {"hooks": hooks})
        proj = _project(base, env)
        file = "src/ledger/reconcile.py"
        code = "def reconcile(entries):\n    total = 0\n    for e in entries:\n        total += e\n    return total\n"
        ledger = Steps(
            call("write_file", file_path=file, content=code),
            call(
                "replace",
                file_path=file,
                instruction="a running total",
                old_string="    total = 0\n",
                new_string="    total = 0  # running total\n",
            ),
            call("run_shell_command", command=FAILING, description="run the tests"),
            final="The module is written; its test file is missing.",
        )
        sessions: dict[str, str] = {}
        with MockGemini(ledger) as api:
            first = run_gemini(
                install, api.base_url, "please fix the ledger module", cwd=proj, env=env
            )
            _check_gemini(first)
            sessions["ledger"] = first.session_id
            api.script = Steps(
                call(
                    "write_file",
                    prompt_tokens=COMPRESS_TOKENS,
                    file_path="tests/test_reconcile.py",
                    content=TEST_CODE,
                ),
                call("run_shell_command", command=FAILING, description="run the tests again"),
                final="The test passes now.",
            )
            second = run_gemini(
                install,
                api.base_url,
                "add the missing test and run it again",
                cwd=proj,
                env=env,
                resume=first.session_id,
            )
            _check_gemini(second)
            if not any("<state_snapshot>" in r.text() for r in api.requests if r.is_agent_turn):
                raise SystemExit("the CLI did not compress")
            api.script = Steps(
                call("run_shell_command", command="echo tour-ok"),
                call("run_shell_command", command="echo tour-fail >&2; exit 3"),
                call("read_file", file_path="missing/nowhere.py"),
                final="Tour done.",
            )
            third = run_gemini(install, api.base_url, "take the tour", cwd=proj, env=env)
            _check_gemini(third)
            sessions["tour"] = third.session_id
        shutil.rmtree(out_dir / "gemini", ignore_errors=True)  # its README stays
        written: list[str] = []
        gemini_home = home / ".gemini"
        kept = sorted(p for p in (gemini_home / "tmp").rglob("*") if p.is_file())
        for path in [*kept, gemini_home / "projects.json"]:
            target = out_dir / "gemini" / path.relative_to(gemini_home)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(_scrub_python(_scrub(path.read_text(), base)))
            written.append(str(target.relative_to(out_dir)))
        _write_common(out_dir, _hooks(hooks_out, base), sessions, written)
    return written


def _check_gemini(run: Any) -> None:
    if run.returncode != 0 or run.hook_problems():
        raise SystemExit(run.describe())


def _write_common(
    out_dir: Path, hooks: list[dict[str, Any]], sessions: dict[str, str], written: list[str]
) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "hooks.jsonl").write_text("".join(json.dumps(h) + "\n" for h in hooks))
    (out_dir / "sessions.json").write_text(json.dumps({"sessions": sessions}, indent=2) + "\n")
    written += ["hooks.jsonl", "sessions.json"]


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in ("codex", "gemini"):
        raise SystemExit(__doc__)
    client = sys.argv[1]
    if client == "codex":
        from codex_cli import requested_version

        default = REPO / "tests" / "fixtures" / f"codex-{requested_version()}" / "history"
        recorder = record_codex
    else:
        from gemini_cli import requested_version as gemini_version

        default = REPO / "tests" / "fixtures" / f"gemini-cli-{gemini_version()}" / "history"
        recorder = record_gemini
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else default
    for name in recorder(out):
        print(out / name)


if __name__ == "__main__":
    main()
