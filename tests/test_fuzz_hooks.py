"""Hostile input on the hook entry points: no exception, output within contract, bounded memory.

Three layers:

- in process, ``hookrun.run_hook`` with ``BytesIO`` (fast, hypothesis-driven, shrinking):
  structure-aware inputs built from every captured payload (fuzz/payloads.py) and raw
  bytes. ``run_hook`` swallows everything by design, so "no exception escapes" is
  checked where it matters: no ERROR record may reach the log (an ERROR is an
  exception some module let through), and the bytes returned meet the contract;
- a sample of the same inputs through the real hook scripts (separate processes,
  ``-I -S``), where the interpreter state differs from pytest's (no ``json`` package
  loaded, for one);
- memory: a 50 MB payload must not be held twice (peak RSS of the hook process).

The slow variants (``-m slow``, or scripts/soak.sh) run thousands of cases.
"""

from __future__ import annotations

import io
import json
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxmode import hookrun, payload
from fuzz.payloads import (
    CONTEXT_EVENTS,
    HOOK_EVENTS,
    PROJECT,
    HypothesisChooser,
    check_output,
    environment,
    hook_input,
    load_seeds,
)
from tests.hooktools import hook_command

SEEDS = load_seeds()
SCALE = int(os.environ.get("CTXMODE_SOAK_SCALE", "1"))


def _log_records(root: Path) -> list[str]:
    """The log's record lines (tracebacks left out), oldest first, across rotations."""
    lines: list[str] = []
    for name in ("ctxmode.log.2", "ctxmode.log.1", "ctxmode.log"):
        path = root / "logs" / name
        if path.exists():
            lines += [ln for ln in path.read_text("utf-8", "replace").splitlines() if ln[:1] != " "]
    return lines


def _errors(root: Path) -> list[str]:
    return [line for line in _log_records(root) if "\tERROR\t" in line]


class _Random:
    """A chooser over ``random.Random`` for the subprocess sample (no shrinking needed)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def int(self, low: int, high: int) -> int:
        return self.rng.randint(low, high) if high > low else low

    def text(self, max_size: int) -> str:
        alphabet = "ab/._-$'\"\\{}[]<>&;| \n\t\x00é😀\ud800"
        return "".join(self.rng.choice(alphabet) for _ in range(self.rng.randint(0, max_size)))


# ---------------------------------------------------------------- in process


def _run_in_process(event: str, data: bytes, env: dict[str, str]) -> bytes:
    out = hookrun.run_hook(event, io.BytesIO(data), env)
    assert isinstance(out, bytes)
    check_output(event, out)
    return out


def _fuzz_in_process(data: st.DataObject, root: Path, env: dict[str, str]) -> None:
    chooser = HypothesisChooser(data)
    event, stdin = hook_input(chooser, SEEDS)
    before = len(_errors(root))
    _run_in_process(event, stdin, env)
    errors = _errors(root)
    assert len(errors) == before, errors[before:]


# One data root per fuzz test (not per example): the store grows as in a long session.
_FUZZ_ROOTS: dict[str, Path] = {}

# Derandomized under CI by the hypothesis profile in tests/conftest.py, random locally.
FUZZ_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
}


@settings(max_examples=200, **FUZZ_SETTINGS)
@given(data=st.data())
def test_structured_fuzz_in_process(data: st.DataObject, tmp_path_factory) -> None:
    root = _FUZZ_ROOTS.setdefault("default", tmp_path_factory.mktemp("fuzz-root"))
    _fuzz_in_process(data, root, environment(str(root)))


@settings(max_examples=150, **FUZZ_SETTINGS)
@given(event=st.sampled_from(HOOK_EVENTS), stdin=st.binary(max_size=2048))
def test_random_bytes_in_process(event: str, stdin: bytes, tmp_path_factory) -> None:
    root = _FUZZ_ROOTS.setdefault("bytes", tmp_path_factory.mktemp("fuzz-bytes"))
    _run_in_process(event, stdin, environment(str(root)))
    assert _errors(root) == []


@pytest.mark.slow
def test_structured_fuzz_in_process_long(request, tmp_path) -> None:
    """Thousands of structure-aware cases (hypothesis, random order each run)."""
    env = environment(str(tmp_path))

    @settings(max_examples=5000 * SCALE, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(data=st.data())
    def run(data: st.DataObject) -> None:
        _fuzz_in_process(data, tmp_path, env)

    run()


def test_fuzzed_session_keeps_claims_consistent(tmp_path: Path) -> None:
    """Hostile calls interleaved with a real session leave its resume policy intact."""
    env = environment(str(tmp_path))
    chooser = _Random(7)
    session = {"session_id": "fz-1", "cwd": PROJECT}
    write = {
        **session, "hook_event_name": "PostToolUse", "tool_name": "Write",
        "tool_input": {"file_path": f"{PROJECT}/kept.py", "content": "x"},
        "tool_response": {"type": "create", "filePath": f"{PROJECT}/kept.py"},
    }  # fmt: skip
    assert _run_in_process("PostToolUse", json.dumps(write).encode(), env) == b""
    for _ in range(60):
        event, stdin = hook_input(chooser, SEEDS)
        _run_in_process(event, stdin, env)
    pre = {**session, "hook_event_name": "PreCompact", "trigger": "auto"}
    assert _run_in_process("PreCompact", json.dumps(pre).encode(), env) == b""
    start = {**session, "hook_event_name": "SessionStart", "source": "compact"}
    first = _run_in_process("SessionStart", json.dumps(start).encode(), env)
    assert b"kept.py" in first
    assert _run_in_process("SessionStart", json.dumps(start).encode(), env) == b""
    assert _errors(tmp_path) == []


# ---------------------------------------------------------------- real processes


def _run_processes(
    cases: list[tuple[str, bytes]], env: dict[str, str], parallel: int = 6
) -> list[tuple[str, int, bytes, bytes, float]]:
    """Run each (event, stdin) as a hook process, ``parallel`` at a time."""
    results = []
    for start in range(0, len(cases), parallel):
        batch = []
        for event, data in cases[start : start + parallel]:
            proc = subprocess.Popen(
                hook_command(event),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
            )
            batch.append((event, data, proc))
        for event, data, proc in batch:
            out, err = proc.communicate(data, timeout=60)
            results.append((event, proc.returncode, out, err))
    return results


def _subprocess_sample(root: Path, count: int, seed: int) -> None:
    env = environment(str(root))
    chooser = _Random(seed)
    cases = [hook_input(chooser, SEEDS) for _ in range(count)]
    for event, code, out, err in _run_processes(cases, env):
        assert (code, err) == (0, b""), (event, code, err[:500])
        check_output(event, out)
    # No ERROR: none failed, and none ran past its deadline (the watchdog logs an ERROR).
    assert _errors(root) == []


def test_structured_fuzz_as_processes(tmp_path: Path) -> None:
    _subprocess_sample(tmp_path, 30, seed=2026)


@pytest.mark.slow
def test_structured_fuzz_as_processes_long(request, tmp_path: Path) -> None:
    _subprocess_sample(tmp_path, 600 * SCALE, seed=random.SystemRandom().randrange(2**32))


# In a hook process the json package is not loaded, and _json then reports malformed
# input as SystemError, not JSONDecodeError (found by the subprocess sample; fixed in
# fastjson.loads/scan_string). Each case must stay a WARN, never an ERROR.
FASTJSON_CASES = {
    # A payload cut short (a client killed mid-write).
    "truncated-json": ("PostToolUse", b'{"session_id": "s", "tool_name": "Bash", "cwd": "/x'),
    # Over the parse cap: only the head is salvaged, and it ends inside "command".
    "salvage-cuts-a-field": (
        "PostToolUse",
        b'{"session_id": "big", "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse", '
        b'"tool_name": "Bash", "tool_input": {"command": "' + b"echo " * 2_000_000 + b'"}}',
    ),
}


@pytest.mark.parametrize("name", sorted(FASTJSON_CASES))
def test_fastjson_errors_are_not_internal_errors(name: str, tmp_path: Path) -> None:
    """Malformed JSON is a WARN ("input skipped"), never an ERROR, in a real hook process."""
    event, data = FASTJSON_CASES[name]
    [(_, code, out, err)] = _run_processes([(event, data)], environment(str(tmp_path)))
    assert (code, out, err) == (0, b"", b"")
    assert _errors(tmp_path) == []


# ---------------------------------------------------------------- memory

# Runs the hook as its child and reports the child's peak RSS: measured from a small
# parent, so the pytest process's own memory (copied by fork) is not counted.
LAUNCHER = (
    "import os, sys\n"
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.execv(sys.argv[1], sys.argv[1:])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "os.write(2, b'%d %d' % (os.waitstatus_to_exitcode(status), usage.ru_maxrss))\n"
)
MAX_RSS_KIB = 64 * 1024


def _peak_rss(event: str, chunks: list[bytes], env: dict[str, str]) -> tuple[int, int, bytes]:
    """(exit code, peak RSS in KiB, stdout) of one hook fed ``chunks`` through a pipe."""
    proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, *hook_command(event)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)  # fmt: skip
    assert proc.stdin is not None
    try:
        for chunk in chunks:
            proc.stdin.write(chunk)
        proc.stdin.close()
    except BrokenPipeError:  # the hook may stop reading early; that is its right
        pass
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    proc.wait(timeout=120)
    code, rss = (int(part) for part in err.split())
    return code, rss, out


def _huge_write(size: int, filler: bytes = b"x") -> list[bytes]:
    head = (
        b'{"session_id": "mem-1", "cwd": "/home/dev/proj", "hook_event_name": "PostToolUse", '
        b'"tool_name": "Write", "tool_input": {"file_path": "/home/dev/proj/big.bin", '
        b'"content": "'
    )
    block = filler * (1024 * 1024 // len(filler))
    chunks = [head] + [block] * (size // len(block))
    chunks.append(b'"}, "tool_response": {"type": "create"}}')
    return chunks


# A memory figure: measured with -m slow (scripts/soak.sh), not in the default run.
@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "chunks"),
    [
        ("50MB-ascii", _huge_write(50 * 1024 * 1024)),
        # Just under the parse cap, all 4-byte characters: the widest str CPython makes.
        ("8MB-emoji", _huge_write(payload.MAX_PARSE_BYTES - 2 * 1024 * 1024, "😀".encode())),
    ],
)
def test_memory_is_bounded_on_huge_input(name: str, chunks: list[bytes], tmp_path: Path) -> None:
    env = environment(str(tmp_path))
    code, small_rss, _ = _peak_rss("PostToolUse", _huge_write(1024), env)
    assert code == 0
    code, rss, out = _peak_rss("PostToolUse", chunks, env)
    print(f"\n[fuzz] {name}: peak RSS {rss / 1024:.1f} MiB (small payload {small_rss / 1024:.1f})")
    assert (code, out) == (0, b"")
    assert rss <= MAX_RSS_KIB, f"peak RSS {rss / 1024:.1f} MiB"
    assert _errors(tmp_path) == []
    # The call is still recorded: a huge Write says which file was written.
    from ctxmode import paths
    from ctxmode.store import Store

    store = Store.open(paths.store_path(PROJECT, {"CTXMODE_HOME": str(tmp_path)}), readonly=True)
    try:
        recorded = [json.loads(e.data)["path"] for e in store.session_events("mem-1")]
    finally:
        store.close()
    assert "big.bin" in recorded


def test_context_events_print_one_object(tmp_path: Path) -> None:
    """The contract checker itself rejects what it must (so the fuzz tests can fail)."""
    good = {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                   "additionalContext": "<session_resume/>"}}  # fmt: skip
    check_output("SessionStart", (json.dumps(good) + "\n").encode())
    bad = [
        ("PostToolUse", (json.dumps(good) + "\n").encode()),
        ("SessionStart", (json.dumps(good) + "\n").encode() * 2),
        ("SessionStart", json.dumps(good).encode()),
        ("UserPromptSubmit", (json.dumps(good) + "\n").encode()),
        ("SessionStart", b'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
                         b'"additionalContext": "<session_resume>"}}\n'),
        ("SessionStart", b'{"decision": "block"}\n'),
    ]  # fmt: skip
    for event, out in bad:
        with pytest.raises((AssertionError, ValueError, ET.ParseError)):
            check_output(event, out)
    assert set(CONTEXT_EVENTS) <= set(HOOK_EVENTS)
