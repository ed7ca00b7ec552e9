"""``ctxmode demo``'s engine: replay the bundled sample session through the real hooks.

Each hook call runs exactly as Claude Code runs it: a fresh process of this interpreter,
``-I -S`` on the package's hook script, the payload on stdin. The data root
(``CTXMODE_HOME``) is a throwaway folder, so the user's own store is never touched, and
``CLAUDE_PROJECT_DIR`` names the sample's project (``/home/user/demo-project``), which
need not exist: the hooks only read it. Afterwards the throwaway store is read back.

The sample (``ctxmode/data/sample_session.jsonl``, one ``{"event", "payload"}`` per line)
was built from payloads captured from Claude Code 2.1.197, with paths rewritten.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ctxmode
from ctxmode import hooklog, paths, settings
from ctxmode.events import SessionEvent
from ctxmode.wording import plural

SAMPLE = os.path.join(os.path.dirname(ctxmode.__file__), "data", "sample_session.jsonl")
DEMO_PROJECT = "/home/user/demo-project"
# Events whose stdout is meant for the model; any other hook must print nothing.
CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
# Strings of the sample that must never reach the store (redaction and <private>).
SECRETS = ("sk-live-FAKE0000mock0000secret0000value", "tok-FAKE-123456")
CALL_TIMEOUT = 30.0


@dataclass(frozen=True)
class HookCall:
    event: str
    payload: dict[str, Any]

    @property
    def label(self) -> str:
        """``PostToolUse Bash``, ``SessionStart compact``: what the call was."""
        detail = (
            self.payload.get("tool_name")
            or self.payload.get("source")
            or self.payload.get("trigger")
            or self.payload.get("reason")
            or ""
        )
        return f"{self.event} {detail}".strip()


@dataclass(frozen=True)
class CallResult:
    call: HookCall
    returncode: int | None  # None when it could not run or timed out
    stdout: bytes
    stderr: bytes
    seconds: float
    error: str | None = None  # OSError / timeout text


@dataclass
class DemoResult:
    """What the replay did and what the throwaway store holds afterwards."""

    home: str
    project: str
    store_path: str
    results: list[CallResult] = field(default_factory=list)
    events: list[SessionEvent] = field(default_factory=list)
    resumes: list[dict[str, Any]] = field(default_factory=list)
    snapshot: str | None = None  # the additionalContext SessionStart compact printed
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def seconds(self) -> float:
        return sum(result.seconds for result in self.results)


def load_sample(path: str | None = None) -> list[HookCall]:
    """The sample session (default: the bundled one), in order."""
    path = SAMPLE if path is None else path
    calls = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("event") not in settings.SHIMS or not isinstance(
                record.get("payload"), dict
            ):
                raise ValueError(f"{path}:{number}: not a replayable hook call")
            calls.append(HookCall(record["event"], record["payload"]))
    return calls


def hook_argv(event: str, python: str = sys.executable) -> list[str]:
    """The command Claude Code would run for ``event`` (what ``ctxmode install`` writes)."""
    script = os.path.join(os.path.dirname(ctxmode.__file__), "hooks", settings.SHIMS[event] + ".py")
    return [python, "-I", "-S", script]


def hook_env(
    home: str,
    project: str,
    base: Mapping[str, str] | None = None,
    *,
    lookups_name_home: bool = False,
) -> dict[str, str]:
    """The environment of a replayed hook: ours, minus Claude Code's and ctxmode's switches.

    ``lookups_name_home``: the snapshots' lookup commands start with
    ``CTXMODE_HOME=<home>``, so that they find the throwaway store when run from the
    user's shell, as ``ctxmode demo`` prints them (see handlers.search_command).
    """
    env = {
        key: value
        for key, value in (os.environ if base is None else base).items()
        if not key.startswith(("CLAUDE_", "CLAUDECODE", "CTXMODE_"))
    }
    env["CTXMODE_HOME"] = home
    env["CLAUDE_PROJECT_DIR"] = project
    if lookups_name_home:
        env["CTXMODE_LOOKUP_HOME"] = "1"
    return env


def run_call(call: HookCall, env: Mapping[str, str], cwd: str, python: str) -> CallResult:
    data = json.dumps(call.payload).encode("utf-8")
    started = time.monotonic()
    try:
        proc = subprocess.run(
            hook_argv(call.event, python),
            input=data,
            capture_output=True,
            env=dict(env),
            cwd=cwd,
            timeout=CALL_TIMEOUT,
            check=False,
            # A process group of its own, as the client starts each hook: the hook reads
            # its call's place in the session from its group's start (hookrun.call_stamp).
            # In ours, every call of the replay's first second got the same place, and the
            # snapshot's order (a task's status, an error's resolution) varied run to run.
            start_new_session=True,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return CallResult(call, None, b"", b"", time.monotonic() - started, f"{exc}")
    return CallResult(call, proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started)


def context_of(stdout: bytes) -> str | None:
    """The ``additionalContext`` of a hook's JSON output, or None."""
    try:
        document = json.loads(stdout)
        text = document["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return None
    return text if isinstance(text, str) else None


def call_problems(result: CallResult) -> list[str]:
    """What is wrong with one hook call (the Claude Code hook contract)."""
    label = result.call.label
    if result.error is not None:
        return [f"{label}: could not run ({result.error})"]
    problems = []
    if result.returncode != 0:
        problems.append(f"{label} exited {result.returncode}")
    if result.stderr:
        text = result.stderr.decode("utf-8", "replace").strip().splitlines()
        problems.append(f"{label} wrote to stderr: {text[-1] if text else ''}"[:300])
    if result.stdout and result.call.event not in CONTEXT_EVENTS:
        problems.append(f"{label} printed to stdout (only SessionStart/UserPromptSubmit may)")
    elif result.stdout and context_of(result.stdout) is None:
        problems.append(f"{label} printed something other than the hook JSON contract")
    return problems


def _check_snapshot(text: str | None) -> str | None:
    import xml.etree.ElementTree as ElementTree

    if text is None:
        return "SessionStart compact injected no snapshot"
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as exc:
        return f"the injected snapshot is not well-formed XML ({exc})"
    if root.tag != "session_resume":
        return f"the injected text is a <{root.tag}>, not a <session_resume>"
    return None


def replay(
    home: str,
    calls: Sequence[HookCall] | None = None,
    *,
    project: str = DEMO_PROJECT,
    python: str = sys.executable,
    lookups_name_home: bool = False,
) -> DemoResult:
    """Run ``calls`` (default: the sample) through the hooks with ``home`` as data root
    (``lookups_name_home``: see :func:`hook_env`)."""
    from ctxmode.store import Store, StoreError

    calls = load_sample() if calls is None else calls
    env = hook_env(home, project, lookups_name_home=lookups_name_home)
    store_path = paths.store_path(project, env)
    result = DemoResult(home=home, project=project, store_path=store_path)
    # The hooks never need the project to exist; run them from inside the throwaway
    # folder so nothing can land in the user's working directory.
    for call in calls:
        outcome = run_call(call, env, home, python)
        result.results.append(outcome)
        result.problems.extend(call_problems(outcome))
        if call.event == "SessionStart" and call.payload.get("source") == "compact":
            result.snapshot = context_of(outcome.stdout)
    problem = _check_snapshot(result.snapshot)
    if problem:
        result.problems.append(problem)
    try:
        with Store.open(store_path, readonly=True) as store:
            for meta in store.sessions():
                result.events.extend(store.session_events(meta["session_id"]))
            result.resumes = store.resumes()
    except StoreError as exc:
        result.problems.append(f"cannot read the throwaway store: {exc}")
    if not result.events and not any("store" in p for p in result.problems):
        result.problems.append("the hooks ran but stored no event")
    leaked = [s for s in SECRETS if any(s in event.data for event in result.events)]
    if leaked:
        result.problems.append(f"{plural(len(leaked), 'secret')} of the sample reached the store")
    for record in hooklog.read_records(os.path.join(home, "logs")):
        if record["level"] in ("ERROR", "WARN"):
            result.problems.append(
                f"hook log: {record['level']} {record['event']}: {record['message']}"[:300]
            )
    return result


def category_counts(events: Sequence[SessionEvent]) -> list[tuple[str, int, list[str]]]:
    """(category, count, its event types in order of appearance), biggest first."""
    table: dict[str, tuple[int, dict[str, None]]] = {}
    for event in events:
        count, types = table.get(event.category, (0, {}))
        types[event.type] = None
        table[event.category] = (count + 1, types)
    rows = [(category, count, list(types)) for category, (count, types) in table.items()]
    rows.sort(key=lambda row: (-row[1], row[0]))
    return rows


def highlights(events: Sequence[SessionEvent], limit: int = 8) -> list[SessionEvent]:
    """A few telling events: the most important of each category, in session order."""
    best: dict[str, SessionEvent] = {}
    for event in events:
        current = best.get(event.category)
        if current is None or event.priority < current.priority:
            best[event.category] = event
    chosen = sorted(best.values(), key=lambda e: (e.priority, e.id or 0))[:limit]
    return sorted(chosen, key=lambda e: e.id or 0)


def size_text(size: int) -> str:
    """``3.1 KB`` (or ``812 B``)."""
    return f"{size} B" if size < 1024 else f"{size / 1024:.1f} KB"


def summary_line(result: DemoResult) -> str:
    """The one line of ``ctxmode demo --quiet``."""
    size = len(result.snapshot.encode("utf-8")) if result.snapshot else 0
    head = (
        f"demo: {plural(len(result.results), 'hook call')} replayed, "
        f"{plural(len(result.events), 'event')} captured, "
        f"snapshot {size_text(size)} injected after compaction"
    )
    if result.ok:
        return f"{head} — OK"
    more = f" (+{len(result.problems) - 1} more)" if len(result.problems) > 1 else ""
    return f"{head} — FAILED: {result.problems[0]}{more}"
