"""``ctxmode install --host copilot --verify``: the proof run as Copilot CLI makes the calls.

The common part is :mod:`ctxmode.proof`; here is what is Copilot's, as 1.0.102 was seen to do
it (``tests/fixtures/copilot-cli-1.0.102/``):

- the shell: a hook's command runs as ``bash -c COMMAND`` in the session's cwd;
- the environment: the CLI's own, plus ``COPILOT_CLI``, ``COPILOT_PROJECT_DIR`` and
  ``CLAUDE_PROJECT_DIR`` (the folder copilot started in);
- the payloads: camelCase, naming no event; a failed command is a ``postToolUse`` whose text
  ends ``<shellId: N completed with exit code C>``;
- the compaction: ``preCompact``, then nothing until the next ``userPromptSubmitted``, whose
  flat ``{"additionalContext": …}`` must carry the snapshot (claimed once).

CLI-only: never imported by a hook.
"""

from __future__ import annotations

import json
import os

from ctxmode import proof, settings
from ctxmode.hosts import copilot

SESSION = "7e69bd7b-56f1-4d55-a32d-dbe3243a7e29"
FAILING = "python3 tests/test_reconcile.py"
FILE = "src/ledger/reconcile.py"


def shell() -> tuple[str, ...]:
    return ("bash", "-c") if os.path.exists("/bin/bash") else ("sh", "-c")


def environment(home: str, project: str, scratch: str) -> dict[str, str]:
    env = proof.base_env(("CLAUDE_", "CLAUDECODE", "CODEX_", "GEMINI_", "COPILOT_"))
    env.update(
        CTXMODE_HOME=home,
        COPILOT_CLI="1",
        COPILOT_PROJECT_DIR=project,
        CLAUDE_PROJECT_DIR=project,
    )
    return env


def sample_session(project: str, scratch: str) -> list[proof.Call]:
    """A short ledger session in Copilot 1.0.102's shapes: a file created and edited, a test
    run that fails (exit 2, in the text only), a manual compaction, the next prompt."""
    os.makedirs(os.path.join(project, "src", "ledger"), exist_ok=True)
    path = os.path.join(project, FILE)
    transcript = os.path.join(scratch, "session-state", SESSION, "events.jsonl")
    base = {"sessionId": SESSION, "timestamp": 1796512139160, "cwd": project}

    def call(event: str, **fields: object) -> proof.Call:
        return proof.Call(event, {**base, **fields})

    def tool(name: str, args: dict[str, object], text: str) -> proof.Call:
        result = {"resultType": "success", "textResultForLlm": text}
        return call("postToolUse", toolName=name, toolArgs=args, toolResult=result)

    code = "def reconcile(entries):\n    return round(sum(entries), 2)\n"
    return [
        call("sessionStart", source="new", initialPrompt="please fix the ledger module"),
        call("userPromptSubmitted", prompt="please fix the ledger module"),
        tool(
            "create", {"path": path, "file_text": code}, f"Created file {path} with 60 characters"
        ),
        tool(
            "edit",
            {"path": path, "old_str": "2)", "new_str": "2) or 0.0"},
            f"File {path} updated with changes.",
        ),
        tool(
            "bash",
            {"command": FAILING, "description": "run the tests"},
            "AssertionError: 0.30000000000000004 != 0.3\n<shellId: 2 completed with exit code 2>",
        ),
        call(
            "permissionRequest",
            hookName="permissionRequest",
            toolName="bash",
            toolInput={"command": "rm -rf build"},
            permissionSuggestions=[],
        ),
        call("preCompact", transcriptPath=transcript, trigger="manual", customInstructions=""),
        call("userPromptSubmitted", prompt="carry on"),
        call("userPromptSubmitted", prompt="and then?"),
        call("sessionEnd", reason="complete"),
    ]


def snapshot_of(stdout: bytes) -> str | None:
    """The text a flat ``{"additionalContext": …}`` hands the model (None: not one)."""
    try:
        document = json.loads(stdout)
    except ValueError:
        return None
    context = document.get("additionalContext") if isinstance(document, dict) else None
    return context if isinstance(context, str) else None


def flat_contract(stdout: bytes) -> str | None:
    """What breaks Copilot's contract for a context: one JSON object, ``additionalContext``
    alone (the only shape 1.0.102 hands to the model)."""
    try:
        document = json.loads(stdout)
    except ValueError:
        return f"printed something other than one JSON object: {stdout[:200]!r}"
    if not isinstance(document, dict) or set(document) != {"additionalContext"}:
        return f"printed JSON Copilot CLI does not hand to the model: {stdout[:200]!r}"
    if not isinstance(document["additionalContext"], str):
        return "printed an additionalContext that is not text"
    return None


def permission_contract(stdout: bytes) -> str | None:
    """permissionRequest answered a command that is not ctxmode's lookup."""
    return f"permissionRequest allowed a command that is not a lookup: {stdout[:200]!r}"


def verify(path: str) -> proof.VerifyResult:
    """Run the ctxmode commands registered in the Copilot hooks file ``path`` on
    :func:`sample_session`, as Copilot runs them, in a throwaway data root and project."""
    try:
        with open(os.path.realpath(path), encoding="utf-8") as fh:
            text: str | None = fh.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        return proof.VerifyResult(problems=[f"cannot read {path}: {exc}"])
    try:
        commands, problem = proof.commands_in(path, text, [e for e, _, _ in copilot.HOOKS])
    except settings.SettingsError as exc:
        return proof.VerifyResult(problems=[f"{path}: {exc}"])
    if problem:
        return proof.VerifyResult(problems=[problem])
    client = proof.Client(
        "Copilot CLI",
        shell(),
        environment,
        sample_session,
        speaks=("sessionStart", "userPromptSubmitted"),
        expect=(FILE, FAILING),
        compacts=lambda call: call.event == "preCompact",
        delivers="userPromptSubmitted",
        snapshot_of=snapshot_of,
        contracts={
            "sessionStart": flat_contract,
            "userPromptSubmitted": flat_contract,
            "permissionRequest": permission_contract,
        },
    )
    return proof.run(commands, client)
