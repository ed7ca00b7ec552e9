"""``ctxmode install --host opencode --verify``: the proof run as the plugin makes the calls.

The common part is :mod:`ctxmode.proof`; here is what is OpenCode's (1.18.33,
``tests/fixtures/opencode-1.18.33/``): the plugin spawns the interpreter and the shim named
in the installed plugin, no shell (here ``sh -c`` on the same argv), with OpenCode's own
environment, and sends its payloads (``{"hook", "directory", "input", "output"}``): a
session created, a prompt, a file written, a ``bash`` call that exited 2, the compaction
(``experimental.session.compacting``, then ``session.compacted``, whose SessionStart hands
the snapshot to the plugin), and the session going idle. The real plugin is run by the
end-to-end test (tests/e2e/test_opencode_e2e.py).

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os
import shlex

from ctxmode import proof
from ctxmode.hosts import opencode
from ctxmode.hosts.opencode.plugin_file import installed_command

SESSION = "ses_db7808d5effeioekT5HaHlw5v9"
FAILING = "python3 tests/test_reconcile.py"
FILE = "src/ledger/reconcile.py"


def environment(home: str, project: str, scratch: str) -> dict[str, str]:
    env = proof.base_env(("CLAUDE_", "CLAUDECODE", "CODEX_", "GEMINI_", "OPENCODE"))
    env.update(CTXMODE_HOME=home, OPENCODE="1")
    return env


def sample_session(project: str, scratch: str) -> list[proof.Call]:
    """A short ledger session as the plugin hands it over."""
    os.makedirs(os.path.join(project, "src", "ledger"), exist_ok=True)
    code = "def reconcile(entries):\n    return round(sum(entries), 2)\n"

    def call(hook: str, given: object, output: object = None, **extra: object) -> proof.Call:
        return proof.Call(
            hook, {"hook": hook, "directory": project, "input": given, "output": output, **extra}
        )

    def event(kind: str) -> proof.Call:
        return call(kind, {"id": "evt_1", "type": kind, "properties": {"sessionID": SESSION}})

    def tool(
        name: str, call_id: str, args: dict[str, object], output: str, exit: int | None = None
    ) -> proof.Call:
        meta: dict[str, object] = {"truncated": False}
        if exit is not None:
            meta.update(output=output, exit=exit)
        given = {"tool": name, "sessionID": SESSION, "callID": call_id, "args": args}
        return call(
            "tool.execute.after", given, {"title": name, "metadata": meta, "output": output}
        )

    prompt = "please fix the ledger module"
    return [
        event("session.created"),
        call(
            "chat.message",
            {"sessionID": SESSION},
            {
                "message": {"id": "msg_1", "role": "user", "sessionID": SESSION},
                "parts": [{"type": "text", "text": prompt, "sessionID": SESSION}],
            },
        ),
        tool(
            "write",
            "call_1",
            {"filePath": os.path.join(project, FILE), "content": code},
            "Wrote file successfully.",
        ),
        tool(
            "bash",
            "call_2",
            {"command": FAILING, "description": "run the tests"},
            "AssertionError\n",
            exit=2,
        ),
        call("experimental.session.compacting", {"sessionID": SESSION}, {"context": []}),
        event("session.compacted"),
        event("session.idle"),
    ]


def contract(stdout: bytes) -> str | None:
    """What the plugin cannot read in a SessionStart's stdout."""
    try:
        text = json.loads(stdout)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return f"SessionStart printed something the plugin cannot read: {stdout[:200]!r}"
    return None if isinstance(text, str) else "SessionStart's additionalContext is not text"


def verify(path: str) -> proof.VerifyResult:
    """Run the commands the installed plugin at ``path`` spawns on :func:`sample_session`,
    in a throwaway data root and project."""
    try:
        with open(os.path.realpath(path), encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        return proof.VerifyResult(problems=[f"cannot read {path}: {exc}"])
    found = installed_command(text)
    if found is None:
        return proof.VerifyResult(problems=[f"{path} is not ctxmode's plugin"])
    python, hooks = found
    commands: dict[str, tuple[str, object]] = {}
    for hook, timeout, _matcher in opencode.HOOKS:
        name = hook.removeprefix("event:")
        shim = opencode.SHIMS.get(name)
        if shim is not None:
            script = os.path.join(hooks, shim + ".py")
            command = f"{shlex.quote(python)} -I -S {shlex.quote(script)} --host opencode"
            commands[name] = (command, timeout / 1000)
    client = proof.Client(
        "OpenCode",
        ("sh", "-c"),
        environment,
        sample_session,
        speaks=("session.created", "session.compacted"),
        expect=(FILE, FAILING),
        compacts=lambda call: call.event == "experimental.session.compacting",
        delivers="session.compacted",
        contracts={"session.created": contract, "session.compacted": contract},
    )
    return proof.run(commands, client)
