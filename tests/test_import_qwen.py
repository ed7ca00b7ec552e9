"""``ctxmode import`` of Qwen Code's own chat history (``~/.qwen/projects/<path>/chats/``).

The chats are the ones the real Qwen Code 0.24.4 wrote for the recorded session
(tests/fixtures/qwen-code-0.24.4/chats/, scripts/record_qwen_fixtures.py), moved into the
test's project. What an import must do: record the calls and prompts as the hooks would
have (the same extractors, the same masking), the compression with its summary and a
replayed snapshot, nothing twice (again, or after the hooks captured the same calls).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ctxmode.history import Call
from ctxmode.hosts.qwen import history
from tests.helpers import cli
from tests.test_host_qwen import FIXTURES, RECORDED_PROJECT, hook, load, moved

LEDGER = "2f51af57-982c-4c1e-80ec-2b54def87773"
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def chats(project: Path, secret: bool = False) -> Path:
    """The recorded chats under this test's HOME, moved to ``project``."""
    folder = Path(os.environ["HOME"]) / ".qwen" / "projects" / history.slug(str(project)) / "chats"
    folder.mkdir(parents=True)
    for chat in sorted((FIXTURES / "chats").glob("*.jsonl")):
        text = chat.read_text().replace(RECORDED_PROJECT, str(project))
        if secret:
            text = text.replace("please fix the ledger module", f"please fix it, token {SECRET}")
        (folder / chat.name).write_text(text)
    return folder


def sessions(project: Path) -> dict[str, dict[str, Any]]:
    doc = json.loads(cli("dump", "--project", str(project), "--json").output)
    return {s["session_id"]: s for s in doc["sessions"]}


def types(session: dict[str, Any]) -> list[str]:
    return [e["type"] for e in session["events"]]


def test_the_chats_are_imported_as_the_hooks_would_have_recorded_them(project: Path) -> None:
    chats(project)
    result = json.loads(cli("import", "--project", str(project), "--json").output)
    assert result["files"] == 2 and result["compactions"] == 1 and result["unknown"] == 0
    found = sessions(project)
    ledger = found[LEDGER]
    assert ledger["client"] == "qwen"
    events = {e["type"]: e["data"] for e in ledger["events"]}
    assert events["file_write"]["path"] == "src/ledger/reconcile.py"
    assert events["file_edit"]["path"] == "src/ledger/reconcile.py"
    assert events["tool_error"]["key"] == "python3 tests/test_reconcile.py"
    assert events["tool_error"]["error"].startswith("Exit code 2")
    assert events["git_commit"]["message"] == "Reconcile ledger totals"
    prompts = [e["data"]["text"] for e in ledger["events"] if e["type"] == "user_prompt"]
    assert prompts == ["please fix the ledger module", "what is left to do?"]
    (compaction,) = ledger["compactions"]
    assert compaction["trigger"] == "manual" and compaction["origin"] == "import"
    assert compaction["summary"].startswith("Summary: the ledger helper was added")
    assert "Resume the prior task" not in compaction["summary"]
    assert result["replayed"] == 1  # the snapshot of the past compaction, rebuilt
    # Again: nothing new.
    again = json.loads(cli("import", "--project", str(project), "--json").output)
    assert again["events_added"] == 0 and again["unchanged"] == 2
    assert types(sessions(project)[LEDGER]) == types(ledger)


def test_what_the_hooks_captured_is_not_imported_twice(project: Path) -> None:
    """The hooks record the model's call id (``tool_call_id``), which the chat keeps too."""
    for name in ("PostToolUse.write_file.json", "PostToolUse.edit.json"):
        hook("PostToolUse", moved(load(name), project), project)
    chats(project)
    cli("import", "--project", str(project))
    ledger = sessions(project)[LEDGER]
    assert types(ledger).count("file_write") == 1 and types(ledger).count("file_edit") == 1
    assert types(ledger).count("tool_error") == 1  # the failure came from the import


def test_a_secret_in_the_chat_is_masked_before_it_is_stored(project: Path) -> None:
    chats(project, secret=True)
    cli("import", "--project", str(project))
    text = json.dumps(sessions(project))
    assert SECRET not in text
    assert "[REDACTED:github-token]" in text


def test_ctxmode_s_own_context_in_a_prompt_is_no_prompt(project: Path) -> None:
    folder = chats(project)
    path = folder / f"{LEDGER}.jsonl"
    lines = path.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if "what is left to do?" in line)
    record = json.loads(lines[at])
    record["message"]["parts"].append(
        {"text": "<qwen:user-prompt-submit-context>\nsession_resume session=x\n</qwen:…>"}
    )
    lines[at] = json.dumps(record)
    path.write_text("\n".join(lines) + "\n")
    cli("import", "--project", str(project))
    ledger = sessions(project)[LEDGER]
    prompts = [e["data"]["text"] for e in ledger["events"] if e["type"] == "user_prompt"]
    assert prompts == ["please fix the ledger module", "what is left to do?"]


def test_the_reader_leaves_a_call_without_its_result_for_later() -> None:
    data = (FIXTURES / "chats" / f"{LEDGER}.jsonl").read_bytes()
    cut = data.index(b'"type":"tool_result"')
    head = data[: data.rindex(b"\n", 0, cut) + 1]
    chunk = history.read(head)
    assert chunk.offset < len(head)  # the pending call's line is read again next time
    rest = history.read(data, chunk.offset, boundaries_before=chunk.boundaries)
    first = rest.items[0]
    assert isinstance(first, Call) and first.inp.tool_name == "write_file"
    assert history.claims(str(FIXTURES / "chats" / f"{LEDGER}.jsonl"))
    assert not history.claims(str(FIXTURES / "stream.jsonl"))


def test_a_first_record_of_megabytes_still_places_the_chat(project: Path) -> None:
    """The cwd is read from the first records however long their lines (a first prompt
    with a pasted image): a chat placed nowhere would not be imported."""
    folder = chats(project)
    chat = folder / f"{LEDGER}.jsonl"
    lines = chat.read_text().splitlines()
    first = json.loads(lines[0])
    first["pasted"] = "iVBORw0KGgo" * 100_000  # ~1.1 MB on the line that names the cwd
    chat.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert history.head_cwd(str(chat)) == (str(project), LEDGER)
