"""A hit's neighbours: the events just before and after it in its session, shown beside it.

What a question names and what answers it are often two events apart (the server's
restart matches "which port did the restarted server take?", the port is in the next
call's output). ``Store.neighbours`` reads them in the calls' order; the compact output
shows each as one bounded ``↑``/``↓`` line under the best hits, ``--json`` as ``context``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from ctxmode import paths
from ctxmode.bench.recall import hit_texts
from ctxmode.cli.search_output import CONTEXT_CHARS, CONTEXT_HITS, neighbour_line
from ctxmode.events import SessionEvent, make
from ctxmode.store import Store
from ctxmode.store.query import analyze
from tests.helpers import cli

SESSION = "cccc3333-0000-4000-8000-000000000003"
OTHER = "dddd4444-0000-4000-8000-000000000004"
START = 1_000_000_000


def at(minute: int) -> str:
    return f"2026-12-02T14:{minute:02d}:00.000Z"


def store_of(project: Path) -> Store:
    return Store.open(paths.store_path(str(project), os.environ))


def add(store: Store, session: str, place: int, event: SessionEvent, call: str = "") -> None:
    """``event`` at call place ``place`` (the calls' order, not the arrival's)."""
    if call:
        event.tool_use_id = call
    store.add_events(
        session,
        [event],
        source_hook="PostToolUse",
        project_dir="/p",
        now=at(place),
        call_at=START + place,
    )


def shell(command: str, output: str, exit_code: int = 0) -> SessionEvent:
    return make("shell_call", {"command": command, "exit": exit_code, "output": output})


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "proj"
    folder.mkdir()
    monkeypatch.chdir(folder)
    store = store_of(folder)
    # Stored out of the calls' order (a background capture finishing late): the restart
    # arrives last, yet its place is before the port's output.
    add(store, SESSION, 1, make("user_prompt", {"text": "the dev server is stuck, restart it"}))
    add(store, SESSION, 4, shell("curl -s localhost:3001/health", '{"ok":true}'))
    add(store, OTHER, 3, shell("ls", "nothing to see"))  # another session, between them
    add(
        store,
        SESSION,
        3,
        shell("tail -n 2 /tmp/out.txt", "ready - listening on http://0.0.0.0:3001"),
    )
    add(store, SESSION, 2, shell("npm run dev &", "", 0), call="toolu_restart")
    store.close()
    return folder


def test_neighbours_follow_the_calls_order_within_the_session(project: Path) -> None:
    store = store_of(project)
    events = store.session_events(SESSION)  # the calls' order
    commands = [json.loads(e.data).get("command") or e.type for e in events]
    assert commands == [
        "user_prompt",
        "npm run dev &",
        "tail -n 2 /tmp/out.txt",
        "curl -s localhost:3001/health",
    ]
    restart, log = events[1], events[2]
    found = store.neighbours([restart], 1)[int(restart.id or 0)]
    assert [(n, e.id) for n, e in found] == [(-1, events[0].id), (1, log.id)]
    wide = store.neighbours([log], 2)[int(log.id or 0)]
    assert [(n, e.id) for n, e in wide] == [
        (-2, events[0].id),
        (-1, restart.id),
        (1, events[3].id),
    ]  # one event after it: the session ends there; the other session's "ls" never shows
    assert store.neighbours([log], 0) == {}
    store.close()


def test_the_compact_output_shows_the_answer_beside_the_hit(project: Path) -> None:
    # No word of the question is in the answer's event: the restart is what it names.
    result = cli("search", "--", "where did npm run dev end up after the restart?")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    restart = next(n for n, line in enumerate(lines) if "npm run dev" in line)
    after = next(line for line in lines[restart:] if line.lstrip().startswith("↓"))
    assert after == (
        "    ↓ shell_call: command: tail -n 2 /tmp/out.txt · "
        "output: ready - listening on http://0.0.0.0:3001"
    )


def test_json_hits_carry_their_context(project: Path) -> None:
    result = cli("search", "--json", "--", "npm run dev")
    hits = json.loads(result.output)
    best = hits[0]
    assert json.loads(best["data"])["command"] == "npm run dev &"
    assert [(c["offset"], c["type"]) for c in best["context"]] == [
        (-1, "user_prompt"),
        (1, "shell_call"),
    ]
    assert "0.0.0.0:3001" in json.loads(best["context"][1]["data"])["output"]
    # The benchmark counts an answer in a hit's context, and tells it apart.
    assert "0.0.0.0:3001" in hit_texts(result.output)[0]
    assert "0.0.0.0:3001" not in hit_texts(result.output, context=False)[0]


def test_a_neighbour_that_is_a_hit_shown_is_not_repeated(project: Path) -> None:
    # Both shell calls match: the output's call is a hit of its own, not context too.
    result = cli("search", "--", "npm dev listening")
    assert result.exit_code == 0, result.output
    assert result.output.count("tail -n 2 /tmp/out.txt") == 1, result.output


def test_a_listing_and_full_output_show_no_context(project: Path) -> None:
    listing = cli("search", "--session", SESSION[:8])
    full = cli("search", "--full", "--", "npm run dev")
    for result in (listing, full):
        assert result.exit_code == 0, result.output
        assert not re.search(r"^\s+[↑↓] ", result.output, re.M), result.output


def test_only_the_best_hits_show_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    store = store_of(tmp_path)
    for n in range(12):  # twelve matching calls, each between two quiet ones
        add(store, SESSION, 3 * n, make("user_prompt", {"text": f"step {n}"}))
        add(store, SESSION, 3 * n + 1, shell(f"make target{n}", f"built widget {n}"))
        add(store, SESSION, 3 * n + 2, make("file_read", {"path": f"src/quiet{n}.c"}))
    store.close()
    result = cli("search", "--limit", "8", "--", "widget")
    assert result.exit_code == 0, result.output
    blocks = result.output.split("\n\n")[:-1]
    assert len(blocks) == 8
    with_context = [bool(re.search(r"^\s+[↑↓] ", b, re.M)) for b in blocks]
    assert with_context == [True] * CONTEXT_HITS + [False] * (8 - CONTEXT_HITS)


def test_a_failed_calls_error_beside_it_is_not_repeated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    store = store_of(tmp_path)
    output = "npm ERR! missing script: deploy"
    add(store, SESSION, 1, shell("npm run deploy", output, 1), call="toolu_x")
    add(store, SESSION, 2, make("tool_error", {"tool": "Bash", "error": output}), call="toolu_x")
    add(store, SESSION, 3, make("file_read", {"path": "package.json"}))
    store.close()
    result = cli("search", "--type", "shell_call", "--", "deploy")
    assert result.exit_code == 0, result.output
    assert "↓ file_read: path: package.json" not in result.output  # the next one is the error
    assert "tool_error" not in result.output, result.output


def test_a_neighbour_line_is_bounded_and_keeps_short_fields_whole() -> None:
    long_output = "\n".join(f"line {n}: " + "x" * 80 for n in range(200)) + "\nERROR disk full"
    event = shell("make -j8 all", long_output, 2)
    line = neighbour_line(1, event, analyze("why did the build fail disk"))
    assert len(line) <= CONTEXT_CHARS + 2  # "…" marks at a cut
    assert line.startswith("    ↓ shell_call: command: make -j8 all")
    assert "exit: 2" in line
    assert "disk full" in line  # the long output is cut around what the query names
    short = neighbour_line(-1, shell("node -v", "v22.3.0\n"), analyze("node version"))
    assert short == "    ↑ shell_call: command: node -v · output: v22.3.0"
