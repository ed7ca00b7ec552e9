"""``ctxmode install --host gemini --verify``: the proof run as the Gemini CLI makes the calls.

The common part is :mod:`ctxmode.proof`; here is what is Gemini's, as 0.61.0 was seen to do
it (``tests/fixtures/gemini-cli-0.61.0/``, ``/work/shared/gemini-hooks.md``):

- the shell: a hook's command runs as ``bash -c COMMAND`` in the session's cwd;
- the environment: the CLI's own, plus ``GEMINI_SESSION_ID``, ``GEMINI_PROJECT_DIR``,
  ``GEMINI_CWD`` and ``CLAUDE_PROJECT_DIR`` (all the folder ``gemini`` started in, which
  is the payloads' cwd, not the repository's root: ctxmode climbs from the cwd),
  ``GEMINI_PLANS_DIR`` and ``GEMINI_CLI_NO_RELAUNCH``;
- the payloads: Gemini's names and shapes — ``AfterTool`` with ``tool_response
  {llmContent, returnDisplay}``, a failed command known only from ``Exit Code: N`` in its
  text, ``BeforeAgent`` whose prompt starts with SessionStart's ``<hook_context>``, and
  ``BeforeModel`` before every model request; PreCompress(auto) is not called (ctxmode
  registers PreCompress for "manual" only, an exact-string matcher);
- the compression: no event says it happened; the requests after it carry the
  ``<state_snapshot>`` summary, and each BeforeModel must append the same snapshot to it,
  claimed once in the store.

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os

from ctxmode import proof, settings
from ctxmode.hosts import gemini

SESSION = "2e1bbce4-c362-4e2b-ae8a-decd303019ab"
MODEL = "gemini-3.8-flash"
FAILING = "python3 tests/test_reconcile.py"
FILE = "src/ledger/reconcile.py"
SUMMARY = (
    "<state_snapshot>\nThe user asked to fix the ledger module; the assistant worked on it."
    "\n</state_snapshot>"
)
CONTEXT = "<session_context>\nThis is the Gemini CLI.\n</session_context>"


def shell() -> tuple[str, ...]:
    return ("bash", "-c") if os.path.exists("/bin/bash") else ("sh", "-c")


def environment(home: str, project: str, scratch: str) -> dict[str, str]:
    env = proof.base_env(("CLAUDE_", "CLAUDECODE", "CODEX_", "GEMINI_"))
    started = project  # the folder gemini started in (the payloads' cwd)
    env.update(
        CTXMODE_HOME=home,
        GEMINI_SESSION_ID=SESSION,
        GEMINI_PROJECT_DIR=started,
        GEMINI_CWD=started,
        CLAUDE_PROJECT_DIR=started,
        GEMINI_PLANS_DIR=os.path.join(scratch, "plans"),
        GEMINI_CLI_NO_RELAUNCH="true",
    )
    return env


def _request(*messages: tuple[str, str]) -> dict[str, object]:
    return {
        "model": MODEL,
        "messages": [{"role": role, "content": text} for role, text in messages],
        "config": {"temperature": 1, "topP": 0.95, "topK": 64},
    }


def sample_session(project: str, scratch: str) -> list[proof.Call]:
    """A short ledger session in Gemini 0.61.0's shapes: a file written and edited, a test
    run that fails (exit 2, in the text only), a compression, two requests after it."""
    os.makedirs(os.path.join(project, "src"), exist_ok=True)
    transcript = os.path.join(scratch, "gemini", "chats", f"session-{SESSION[:8]}.jsonl")
    base = {"session_id": SESSION, "transcript_path": transcript, "cwd": project}
    stamp = {"timestamp": "2026-12-05T07:01:14.777Z"}

    def call(event: str, **fields: object) -> proof.Call:
        return proof.Call(event, {**base, "hook_event_name": event, **stamp, **fields})

    def tool(name: str, args: dict[str, object], response: dict[str, object]) -> proof.Call:
        return call("AfterTool", tool_name=name, tool_input=args, tool_response=response)

    prompt = "please fix the ledger module"
    code = "def reconcile(entries):\n    return round(sum(entries), 2)\n"
    diff = f"--- reconcile.py\tOriginal\n+++ reconcile.py\tWritten\n@@ -0,0 +1,2 @@\n+{code}"
    failing = (
        "<untrusted_context>\nOutput: AssertionError: 0.30000000000000004 != 0.3\n"
        "Exit Code: 2\nProcess Group PGID: 3521\n</untrusted_context>"
    )
    asked = ("user", f"{CONTEXT}<hook_context>resume</hook_context>\n\n{prompt}")
    after = ("user", CONTEXT + SUMMARY)
    thanks = ("model", "Got it. Thanks for the additional context!")
    return [
        call("SessionStart", source="startup"),
        call("BeforeAgent", prompt=prompt),
        call("BeforeModel", llm_request=_request(asked)),
        tool(
            "write_file",
            {"file_path": FILE, "content": code},
            {
                "llmContent": f"Successfully created and wrote to new file: {FILE}.",
                "returnDisplay": {"fileDiff": diff, "filePath": FILE, "isNewFile": True},
            },
        ),
        tool(
            "replace",
            {"file_path": FILE, "old_string": "2)", "new_string": "2) or 0.0"},
            {
                "llmContent": f"Successfully modified file: {FILE} (1 replacements).",
                "returnDisplay": {"fileDiff": "@@ -2 +2 @@\n-a\n+b\n", "isNewFile": False},
            },
        ),
        tool(
            "run_shell_command",
            {"command": FAILING, "description": "run the tests"},
            {"llmContent": failing, "returnDisplay": "AssertionError"},
        ),
        call("BeforeModel", llm_request=_request(asked)),
        call("AfterAgent", prompt=prompt, prompt_response="done", stop_hook_active=False),
        call("SessionEnd", reason="exit"),
        # `gemini --resume`: the history is compressed before the first request.
        call("SessionStart", source="resume"),
        call("BeforeAgent", prompt="<hook_context>x</hook_context>\n\ncontinue"),
        call("BeforeModel", llm_request=_request(after, thanks, ("user", "continue"))),
        call(
            "BeforeModel",
            llm_request=_request(after, thanks, ("user", "continue"), ("model", "Reading.")),
        ),
        call("SessionEnd", reason="exit"),
    ]


def snapshot_of(stdout: bytes) -> str | None:
    """The snapshot a BeforeModel's stdout appends to the summary (None: not one)."""
    try:
        document = json.loads(stdout)
        content = document["hookSpecificOutput"]["llm_request"]["messages"][-1]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(content, str):
        return None
    end = content.find(gemini.SUMMARY_CLOSE)
    return content[end + len(gemini.SUMMARY_CLOSE) :].strip() if end != -1 else None


def before_model_contract(stdout: bytes) -> str | None:
    """What in BeforeModel's stdout breaks Gemini's contract: one JSON object whose
    ``hookSpecificOutput.llm_request.messages`` end with the summary's message, which holds
    exactly one snapshot."""
    try:
        document = json.loads(stdout)
    except ValueError:
        return f"BeforeModel printed something other than one JSON object: {stdout[:200]!r}"
    inner = document.get("hookSpecificOutput") if isinstance(document, dict) else None
    request = inner.get("llm_request") if isinstance(inner, dict) else None
    messages = request.get("messages") if isinstance(request, dict) else None
    if (
        set(document) != {"hookSpecificOutput"}
        or not isinstance(inner, dict)
        or inner.get("hookEventName") != "BeforeModel"
        or not isinstance(messages, list)
        or not messages
    ):
        return f"BeforeModel printed JSON that Gemini CLI does not accept: {stdout[:200]!r}"
    last = messages[-1].get("content") if isinstance(messages[-1], dict) else None
    if not isinstance(last, str) or last.count(gemini.RESUME_MARK + " ") != 1:
        return "BeforeModel's changed message does not hold exactly one snapshot"
    return None


def verify(path: str) -> proof.VerifyResult:
    """Run the ctxmode commands registered in the Gemini settings file ``path`` on
    :func:`sample_session`, as Gemini runs them, in a throwaway data root and project."""
    try:
        with open(os.path.realpath(path), encoding="utf-8") as fh:
            text: str | None = fh.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        return proof.VerifyResult(problems=[f"cannot read {path}: {exc}"])
    try:
        commands, problem = proof.commands_in(path, text, [e for e, _, _ in gemini.HOOKS])
    except settings.SettingsError as exc:
        return proof.VerifyResult(problems=[f"{path}: {exc}"])
    if problem:
        return proof.VerifyResult(problems=[problem])
    # Gemini's timeouts are in milliseconds; the proof's are seconds.
    commands = {
        event: (command, timeout / 1000 if isinstance(timeout, (int, float)) else timeout)
        for event, (command, timeout) in commands.items()
    }
    client = proof.Client(
        "Gemini CLI",
        shell(),
        environment,
        sample_session,
        speaks=("SessionStart", "BeforeAgent"),
        # The written file, and the failed run (from the text of its output).
        expect=(FILE, FAILING),
        compacts=lambda call: (
            call.event == "BeforeModel" and gemini.SUMMARY_OPEN in str(call.payload)
        ),
        delivers="BeforeModel",
        snapshot_of=snapshot_of,
        repeats=True,
        contracts={"BeforeModel": before_model_contract},
    )
    return proof.run(commands, client)
