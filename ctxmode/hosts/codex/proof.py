"""``ctxmode install --host codex --verify``: the proof run as the Codex CLI makes the calls.

The common part (throwaway root and project, the contract checked on each call, the
snapshot, the store) is :mod:`ctxmode.proof`; here is what is Codex's, as 0.169.0 was seen
to do it (``tests/fixtures/codex-0.169.0/``, ``/work/shared/codex-hooks.md``):

- the shell: a hook's command runs as ``/bin/bash -c COMMAND`` (its ``/proc/<pid>/cmdline``,
  whatever ``$SHELL`` said), in the session's cwd;
- the environment: Codex's own, plus ``CODEX_MANAGED_BY_NPM`` from its npm launcher, and no
  project or session variable (ctxmode finds both in stdin), ``CODEX_HOME`` only when the
  user set it;
- the payloads: Codex's shapes — the shell as ``Bash`` with a *string* response, patches as
  ``apply_patch`` ``{"command": "*** Begin Patch…"}``, ``turn_id``, ``permission_mode`` —
  and its order around an automatic compaction: PreCompact, then SessionStart ``resume``
  *and* ``compact`` (the model must get the snapshot once, from either);
- the rollout file (``transcript_path``): each tool call's outcome is written there after
  its PostToolUse, which is the only place a failed command's exit code is. The sample
  writes it between the calls as Codex does, so the proof covers the late outcomes too:
  the snapshot must name the failed test run.

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os

from ctxmode import proof, settings
from ctxmode.hosts import codex

SESSION = "01a23b8a-493d-73a0-a69c-11f84e7e07cc"
TURN = "01a23b8a-497b-7371-a7aa-5308c2e9ca38"
LATER_TURN = "01a23b8a-5ada-72c1-9235-83d98aa1676d"
MODEL = "gpt-5.5"
PATCH = (
    "*** Begin Patch\n*** Add File: src/ledger/reconcile.py\n+def reconcile(entries):\n"
    "+    return sum(entries)\n*** End Patch"
)
COMMIT = 'git add -A && git commit -q -m "Reconcile ledger totals" && git log -1 --format=%s'
FAILING = "python3 tests/test_reconcile.py"


def shell() -> tuple[str, ...]:
    """The argv Codex puts before a hook's command (``sh -c`` where there is no bash)."""
    return ("/bin/bash", "-c") if os.path.exists("/bin/bash") else ("sh", "-c")


def environment(home: str, project: str, scratch: str) -> dict[str, str]:
    env = proof.base_env(("CLAUDE_", "CLAUDECODE", "CODEX_"))
    env.update(CTXMODE_HOME=home, CODEX_MANAGED_BY_NPM="1", PWD=project)
    return env


def _rollout_line(kind: str, **payload: object) -> str:
    record = {
        "timestamp": "2026-12-03T10:54:09.000Z",
        "type": "response_item",
        "payload": {"type": kind, **payload},
    }
    return json.dumps(record) + "\n"


# The rollout's records of a tool call and of its outcome, as Codex 0.169.0 writes them.


def _exec_call(call_id: str, cmd: str) -> str:
    arguments = json.dumps({"cmd": cmd})
    return _rollout_line("function_call", name="exec_command", arguments=arguments, call_id=call_id)


def _exec_result(call_id: str, code: int, text: str) -> str:
    output = (
        f"Chunk ID: 6e96b5\nWall time: 0.0001 seconds\nProcess exited with code {code}\n"
        f"Original token count: 6\nOutput:\n{text}"
    )
    return _rollout_line("function_call_output", call_id=call_id, output=output)


def _patch_output(text: str) -> str:
    return f"Exit code: 0\nWall time: 0 seconds\nOutput:\n{text}"


def sample_session(project: str, scratch: str) -> list[proof.Call]:
    """A short ledger session in Codex 0.169.0's shapes: a patch, a commit, a test run that
    fails (exit 2, known from the rollout file only), the turn's reply (Stop), an automatic
    compaction, a resume."""
    rollout = os.path.join(
        scratch,
        "codex-home",
        "sessions",
        "2026",
        "12",
        "03",
        f"rollout-2026-12-03T10-54-08-{SESSION}.jsonl",
    )
    base = {"session_id": SESSION, "transcript_path": rollout, "cwd": project}

    def call(event: str, before: str = "", **fields: object) -> proof.Call:
        # Every payload names the model but SessionEnd's (as recorded).
        model = {"model": MODEL} if event != "SessionEnd" else {}
        payload = {**base, "hook_event_name": event, **model, **fields}
        return proof.Call(event, payload, (lambda: _append(rollout, before)) if before else None)

    def tool(call_id: str, name: str, command: str, response: str, before: str) -> proof.Call:
        return call(
            "PostToolUse",
            before,
            turn_id=TURN,
            permission_mode="bypassPermissions",
            tool_name=name,
            tool_input={"command": command},
            tool_response=response,
            tool_use_id=call_id,
        )

    meta = json.dumps(
        {
            "timestamp": "2026-12-03T10:54:08.000Z",
            "type": "session_meta",
            "payload": {"id": SESSION, "cwd": project, "cli_version": "0.169.0"},
        }
    )
    patched = _patch_output("Success. Updated the following files:\nA src/ledger/reconcile.py\n")
    missing = (
        f"python3: can't open file '{project}/tests/test_reconcile.py': [Errno 2] No such file\n"
    )
    return [
        call("SessionStart", meta + "\n", permission_mode="bypassPermissions", source="startup"),
        call(
            "UserPromptSubmit",
            turn_id=TURN,
            permission_mode="bypassPermissions",
            prompt="Work on the ledger module: add the totals helper, commit it and run its tests.",
        ),
        tool(
            "call_000003",
            "apply_patch",
            PATCH,
            patched,
            _rollout_line(
                "custom_tool_call", call_id="call_000003", name="apply_patch", input=PATCH
            ),
        ),
        tool(
            "call_000009",
            "Bash",
            COMMIT,
            "Reconcile ledger totals\n",
            _rollout_line("custom_tool_call_output", call_id="call_000003", output=patched)
            + _exec_call("call_000009", COMMIT),
        ),
        tool(
            "call_000012",
            "Bash",
            FAILING,
            missing,
            _exec_result("call_000009", 0, "Reconcile ledger totals\n")
            + _exec_call("call_000012", FAILING),
        ),
        # The turn ends: Stop hands over the text it ended with (prints nothing).
        call(
            "Stop",
            turn_id=TURN,
            permission_mode="bypassPermissions",
            stop_hook_active=False,
            last_assistant_message="Done: reconcile.py written and committed; its test "
            "file is still missing.",
        ),
        # The next turn starts with an automatic compaction; the failed run's exit code
        # reached the rollout file after its PostToolUse.
        call(
            "PreCompact",
            _exec_result("call_000012", 2, missing),
            turn_id=LATER_TURN,
            trigger="auto",
        ),
        call("SessionStart", permission_mode="bypassPermissions", source="resume"),
        call("SessionStart", permission_mode="bypassPermissions", source="compact"),
        call(
            "UserPromptSubmit",
            turn_id=LATER_TURN,
            permission_mode="bypassPermissions",
            prompt="what next?",
        ),
        call("SessionEnd", reason="other"),
    ]


def _append(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def verify(path: str) -> proof.VerifyResult:
    """Run the ctxmode commands registered in the Codex hooks file ``path`` on
    :func:`sample_session`, as Codex runs them, in a throwaway data root and project."""
    try:
        with open(os.path.realpath(path), encoding="utf-8") as fh:
            text: str | None = fh.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        return proof.VerifyResult(problems=[f"cannot read {path}: {exc}"])
    try:
        commands, problem = proof.commands_in(path, text, [e for e, _, _ in codex.HOOKS])
    except settings.SettingsError as exc:
        return proof.VerifyResult(problems=[f"{path}: {exc}"])
    if problem:
        return proof.VerifyResult(problems=[problem])
    client = proof.Client(
        "Codex",
        shell(),
        environment,
        sample_session,
        speaks=codex.CONTEXT_EVENTS,
        # The patched file, the commit, and the failed run (from the rollout file).
        expect=("src/ledger/reconcile.py", "Reconcile ledger totals", FAILING),
    )
    return proof.run(commands, client)
