"""Issue 12, display: stored text is shown as what it is, and lookups run wherever the
project lives.

Bidirectional overrides and isolates (U+202A-202E, U+2066-2069), zero-width and other
invisible format characters and terminal controls appear as visible ``\\uXXXX`` escapes
in snapshots and in the output of ``dump``, ``search``, ``sessions`` and
``show-snapshot`` (their JSON stays valid and decodes to the stored text); a project
path with ``& < > " '`` (or a tab, or a bidi character) still gives snapshot lookups
that the Bash tool runs as written.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxmode import fastjson, hookrun
from ctxmode.cli import main as cli_main
from ctxmode.handlers import shell_quote
from ctxmode.redact import visible
from ctxmode.snapshot import build_snapshot
from ctxmode.store import Store
from tests.hooktools import hook_env, run_hook

# Each hides or reorders what a reader sees; none may reach a screen or a model raw.
INVISIBLE = [
    "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # embeddings and overrides
    "\u2066", "\u2067", "\u2068", "\u2069",  # isolates
    "\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u2060", "\ufeff", "\u00ad",
    "\u061c", "\u2028", "\u2029", "\U000e0041", "\x1b", "\x07", "\r", "\x9b",
]  # fmt: skip
TRICK = "approve\u202e}nimda{\u2066 if\u200b user\u2069 == ok\x1b[2J"


@pytest.mark.parametrize("char", INVISIBLE)
def test_visible_shows_each_invisible_character_as_an_escape(char: str) -> None:
    shown = visible(f"a{char}b")
    assert char not in shown and shown.startswith("a\\u") and shown.endswith("b")
    # The escapes are JSON escapes: a JSON document stays valid and means the same.
    document = json.dumps({"k": f"a{char}b"}, ensure_ascii=False)
    assert json.loads(visible(document)) == {"k": f"a{char}b"}


def test_visible_leaves_ordinary_text_alone() -> None:
    for text in ("plain ascii", "tabs\tand\nnewlines", "naïve café – “quotes” 日本語 😀 ❤️"):
        assert visible(text) == text


def _hostile_session(store: Store) -> None:
    from ctxmode.events import make

    events = [
        make("user_prompt", {"text": f"fix the check: {TRICK}"}),
        make("decision", {"text": f"No, keep {TRICK}"}),
        make("file_edit", {"path": "src/a\u202egpj.exe"}),
        make("tool_error", {"tool": "Bash", "key": "make \u2066x\u2069", "error": TRICK}),
    ]
    store.add_events("s-1", events, source_hook="test", project_dir="/p")


def _no_raw_invisibles(text: str) -> None:
    assert not [c for c in INVISIBLE if c in text], [hex(ord(c)) for c in INVISIBLE if c in text]


def test_snapshots_show_invisible_characters_as_escapes(tmp_path: Path) -> None:
    with Store.open(str(tmp_path / "s.db")) as store:
        _hostile_session(store)
        events = store.session_events("s-1")
    xml = build_snapshot(events, session_id="s-1", compact_seq=1)
    ET.fromstring(xml)  # well-formed
    _no_raw_invisibles(xml)
    assert "\\u202e" in xml and "\\u2066" in xml and "\\u200b" in xml


def test_cli_output_shows_invisible_characters_as_escapes(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    env = {"CTXMODE_HOME": str(tmp_path / "home"), "CLAUDE_PROJECT_DIR": str(project)}
    # Recorded through the hooks, as a session would, then compacted and ended.
    for event, payload in [
        ("UserPromptSubmit", {"prompt": f"please fix {TRICK}"}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "make"},
                                "error": f"Exit code 2\nerror: {TRICK}"}),
        ("PreCompact", {"trigger": "auto"}),
        ("SessionEnd", {"reason": "other"}),
    ]:  # fmt: skip
        data = {"session_id": "s-\u202e1", "cwd": str(project), "hook_event_name": event, **payload}
        hookrun.run_hook(event, io.BytesIO(json.dumps(data).encode()), env)
    runner = CliRunner()
    outputs = {}
    for args in (["dump"], ["dump", "--json"], ["dump", "--jsonl"], ["search", "fix"],
                 ["search", "fix", "--json"], ["search", "nothing\u202ehere"], ["sessions"],
                 ["sessions", "--json"], ["show-snapshot"], ["show-snapshot", "--raw"]):  # fmt: skip
        result = runner.invoke(cli_main, [*args, "--project", str(project)], env=env)
        assert result.exit_code == 0, (args, result.output)
        outputs[" ".join(args)] = result.output
        _no_raw_invisibles(result.output)
    assert "\\u202e" in outputs["dump"] and "\\u202e" in outputs["search fix"]
    assert "\\u202e" in outputs["show-snapshot"] and "\\u202e" in outputs["sessions"]
    # JSON output stays valid JSON and decodes to exactly what is stored.
    document = json.loads(outputs["dump --json"])
    [session] = document["sessions"]
    assert session["session_id"] == "s-\u202e1"
    assert any(TRICK in e["data"].get("text", "") for e in session["events"])
    for line in outputs["dump --jsonl"].splitlines():
        fastjson.loads(line)
    assert json.loads(outputs["search fix --json"])


# ---------------------------------------------------------------- lookups


@pytest.mark.parametrize(
    "name",
    ["a & b <c> \"d\" 'e'", "tab\there  two  spaces", "bidi\u202eevil", "plain-name"],
)
def test_shell_quote_survives_the_snapshot_and_the_shell(name: str) -> None:
    quoted = shell_quote(f"/tmp/{name}")
    # What the snapshot does to a lookup's text: whitespace runs collapsed, &<> escaped,
    # invisible characters shown as escapes. A quoted path must come through unchanged.
    assert " ".join(quoted.split()) == quoted
    assert not set("&<>") & set(quoted)
    assert visible(quoted) == quoted
    out = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, check=True)
    assert out.stdout.decode() == f"/tmp/{name}"


@pytest.mark.parametrize("name", ["a & b <c> \"d\" 'e'", "x\u202ey\tz"])
def test_lookups_run_for_a_project_path_with_special_characters(tmp_path: Path, name: str) -> None:
    project = tmp_path / name
    project.mkdir()
    home = tmp_path / "home"
    env = hook_env(CTXMODE_HOME=str(home), CLAUDE_PROJECT_DIR=str(project))
    base = {"session_id": "look-1", "cwd": str(project)}
    calls = [
        ("UserPromptSubmit", {"prompt": "fix the invoice rounding bug"}),
        ("PostToolUse", {"tool_name": "Edit", "tool_input": {"file_path": f"{project}/inv.py"},
                         "tool_response": {"filePath": f"{project}/inv.py"}}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "pytest -q"},
                                "error": "Exit code 1\nFAILED test_inv.py::test_round"}),
        ("PreCompact", {"trigger": "auto"}),
    ]  # fmt: skip
    for event, payload in calls:
        assert (
            run_hook(event, {**base, "hook_event_name": event, **payload}, env=env).returncode == 0
        )
    start = run_hook("SessionStart", {**base, "hook_event_name": "SessionStart",
                                      "source": "compact"}, env=env)  # fmt: skip
    context = json.loads(start.stdout)["hookSpecificOutput"]["additionalContext"]
    root = ET.fromstring(context)
    search = root.findtext("search") or ""
    # As the preface says: the search command, then a section's lookup, or a few words.
    lookups = [f"{search} {el.text or ''}" for el in root.iter("lookup")]
    assert len(lookups) >= 3
    lookups.append(f"{search} invoice rounding")
    shell_env = {**os.environ, "CTXMODE_HOME": str(home)}
    shell_env.pop("CLAUDE_PROJECT_DIR", None)
    for lookup in lookups:
        done = subprocess.run(["bash", "-c", lookup], capture_output=True, env=shell_env,
                              cwd=tmp_path, timeout=60, check=False)  # fmt: skip
        assert done.returncode == 0, (lookup, done.stderr.decode()[-500:])
        assert b"no matches" not in done.stdout and b"[1]" in done.stdout, lookup
