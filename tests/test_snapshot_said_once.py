"""A prompt is one item, however it decides (issue 30, item 3.10).

A decision or a standing instruction is a sentence read out of a prompt; when the prompt
is that one sentence ("Use Decimal.quantize with ROUND_HALF_UP instead of round().") the
decision is all of it. The store keeps it (it is still a decision once the prompt has
left the snapshot's last requests), but while the snapshot shows that prompt it is not
shown again under ``<decisions>``, and ``stats``/``show-snapshot`` count it once: as the
request. A sentence read out of a longer prompt stays an instruction of its own.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from ctxmode import hookrun
from ctxmode.snapshot import build_snapshot
from ctxmode.snapshot.coverage import key_items
from tests.helpers import cli
from tests.snapshot_sessions import ev, stamp

CORRECTION = "Use Decimal.quantize with ROUND_HALF_UP instead of round()."
TOTALS = "Now add a totals row at the end of the CSV. Don't change the column order."


class _Session:
    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path / "proj"
        (self.dir / ".git").mkdir(parents=True)
        self.env = {"CTXMODE_HOME": str(tmp_path / "data"), "CLAUDE_PROJECT_DIR": str(self.dir)}

    def run(self, event: str, **fields: Any) -> bytes:
        payload = {"session_id": "s", "cwd": str(self.dir), "hook_event_name": event, **fields}
        return hookrun.run_hook(event, io.BytesIO(json.dumps(payload).encode()), self.env)

    def prompt(self, text: str) -> None:
        self.run("UserPromptSubmit", prompt=text)

    def compact(self) -> str:
        self.run("PreCompact", trigger="manual", custom_instructions="")
        out = self.run("SessionStart", source="compact")
        return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def _notes(xml: str) -> list[str]:
    return [n.text or "" for n in ET.fromstring(xml).findall("decisions/*") if n.tag != "lookup"]


def test_a_one_sentence_correction_is_one_key_item(tmp_path: Path) -> None:
    session = _Session(tmp_path)
    session.prompt("Round the invoice totals half-up.")
    session.prompt(CORRECTION)
    xml = session.compact()
    # Shown once, as the last request; not again as a decision.
    assert [p.text for p in ET.fromstring(xml).findall("requests/prompt")][-1] == CORRECTION
    assert CORRECTION not in _notes(xml)
    assert [(i.kind, i.text) for i in key_items(xml)] == [("request", CORRECTION)]
    # stats counts it once.
    out = cli("stats", "--json", "--project", str(session.dir), env=session.env).output
    (compaction,) = json.loads(out)["sessions"][0]["compaction_coverage"]
    assert compaction["key_items"] == 1


def test_a_sentence_read_out_of_a_longer_request_stays_an_instruction(tmp_path: Path) -> None:
    session = _Session(tmp_path)
    session.prompt("Build the CSV export.")
    session.prompt(TOTALS)
    xml = session.compact()
    assert _notes(xml) == ["Don't change the column order."]
    assert [(i.kind, i.text) for i in key_items(xml)] == [
        ("request", TOTALS),
        ("instruction", "Don't change the column order."),
    ]


def test_a_decision_is_shown_again_once_its_request_left_the_snapshot() -> None:
    prompts = ["Build the CSV export (the goal).", CORRECTION, "Add tests.", "Run them.", "Go on."]
    rows: list[tuple[str, dict[str, Any]]] = []
    for text in prompts:
        rows.append(("user_prompt", {"text": text}))
        if text == CORRECTION:
            rows.append(("decision", {"text": CORRECTION}))
    events = [ev(t, d, at=stamp(i * 1000), id=i + 1) for i, (t, d) in enumerate(rows)]
    # While it is among the last three requests, once; then under <decisions>.
    assert CORRECTION not in _notes(build_snapshot(events[:-1], session_id="s", compact_seq=1))
    xml = build_snapshot(events, session_id="s", compact_seq=1)
    assert CORRECTION not in [p.text for p in ET.fromstring(xml).findall("requests/*")]
    assert _notes(xml) == [CORRECTION]


def test_a_stored_snapshot_that_repeats_the_request_counts_it_once() -> None:
    # Snapshots stored by earlier versions show the one-sentence prompt again.
    xml = (
        "<session_resume><requests><prompt>Build it.</prompt><prompt>"
        + CORRECTION
        + "</prompt></requests><decisions><decision>"
        + CORRECTION
        + "</decision><decision>Never use float for money.</decision></decisions>"
        "</session_resume>"
    )
    assert [(i.kind, i.text) for i in key_items(xml)] == [
        ("request", CORRECTION),
        ("instruction", "Never use float for money."),
    ]
