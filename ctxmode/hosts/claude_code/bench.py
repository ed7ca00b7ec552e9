"""``ctxmode bench``: Claude Code's hook calls, and which of its commands are measured.

The commands are the ones installed in Claude Code's settings files (local, project, user
of the current project; or ``--settings FILE``), else the ones ``ctxmode install`` would
write; the status line's likewise. Both capture modes are measured, whichever is installed:
the foreground command, and the same with ``--background`` (what Claude Code >= 2.1.19
starts without waiting for it). CLI-only: never imported by a hook.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Set

from ctxmode.bench.cases import (
    BIG_MEMORY_TARGET_MIB,
    TOOL_TARGET,
    BenchError,
    Case,
    HostCommands,
)
from ctxmode.bench.commands import commands_from_settings
from ctxmode.bench.commands import interpreter_of as first_word
from ctxmode.bench.results import Sample

# The "event" of the status line command (Claude Code's ``statusLine``, no hook event).
STATUS_LINE = "StatusLine"
# The prefix of a case's "event" that runs the event's capture command in the background
# form (``--background``: what Claude Code >= 2.1.19 starts without waiting for it).
BACKGROUND = "background:"

# In the order of a session; the order matters: PreCompact stores the snapshot that the
# following SessionStart (compact) claims, and the failure's error is resolved by the
# Bash success that follows it in the same round.
CASES: tuple[Case, ...] = (
    Case("PostToolUse Edit", "PostToolUse", "edit", *TOOL_TARGET),
    # The same capture as the client runs it in the background: the agent does not wait
    # for it; this is the process's own cost, spent beside the agent loop.
    Case("PostToolUse Edit, background", BACKGROUND + "PostToolUse", "edit", *TOOL_TARGET),
    Case("PostToolUse Read", "PostToolUse", "read", *TOOL_TARGET),
    Case("PostToolUseFailure Bash", "PostToolUseFailure", "failure", *TOOL_TARGET),
    Case("PostToolUse Bash", "PostToolUse", "bash", *TOOL_TARGET),
    Case("PostToolUse TaskCreate", "PostToolUse", "task", *TOOL_TARGET),
    Case("UserPromptSubmit", "UserPromptSubmit", "prompt", 2.5),
    Case("Stop", "Stop", "stop", 2.5),  # once per turn, in the foreground
    Case("PreCompact (1,000 events)", "PreCompact", "pre_compact", 3.5),
    Case("SessionStart compact (1,000 events)", "SessionStart", "session_start_compact", 3.0),
    Case("PostCompact", "PostCompact", "post_compact"),
    Case("SessionEnd (1,000 events)", "SessionEnd", "session_end"),
    Case("SessionStart startup", "SessionStart", "session_start_startup"),
    # Not a hook, but run as often (after each message): held to a capture hook's bounds.
    Case("Status line (1,000 events)", STATUS_LINE, "statusline", *TOOL_TARGET),
    Case(
        "PostToolUse Write, 20 MB",
        "PostToolUse",
        "big",
        target_rss_mib=BIG_MEMORY_TARGET_MIB,
        memory_case=True,
    ),
)
# Its payload templates are in the bundled file (benchmarks/make_bench_payloads.py).
PAYLOADS: dict[str, dict[str, object]] = {}


def commands(settings_path: str | None, python: str | None) -> HostCommands:
    """The hook commands to measure (see the module docstring); ``python`` is not used:
    the installed commands say which interpreter they run."""
    from ctxmode.hosts.claude_code.install import BACKGROUND_FLAG

    found, source, plan = resolve_commands(settings_path)
    found[STATUS_LINE] = statusline_command(settings_path)
    # Both capture modes, whichever is installed: the foreground command (the agent waits
    # for it) as "PostToolUse", the same with --background (it does not) beside it.
    capture = found.get("PostToolUse", "")
    installed_background = capture.endswith(" " + BACKGROUND_FLAG)
    if installed_background:
        capture = capture[: -len(BACKGROUND_FLAG) - 1]
        found["PostToolUse"] = capture
    if capture:
        found[BACKGROUND + "PostToolUse"] = f"{capture} {BACKGROUND_FLAG}"
    notes = [capture_note(installed_background, plan)]
    pythons = {event: interpreter_of(command) for event, command in found.items()}
    main = pythons.get("PostToolUse") or next(iter(pythons.values()))
    return HostCommands(found, main, pythons, source, notes)


def capture_note(background: bool, plan: tuple[bool, str] | None) -> str:
    """What the 'background' row means for the captures measured: as registered, or
    (``plan``: nothing is installed) as ``ctxmode install`` would register them here."""
    mode = "background" if background else "foreground"
    if plan is None:
        how = f"captures are registered in the {mode}"
        wait = "the agent does not wait for them" if background else "the agent waits for each"
    else:
        how = (
            "nothing is installed; `ctxmode install` would register the captures in the "
            f"{mode} ({plan[1]})"
        )
        wait = (
            "the agent would not wait for them" if background else "the agent would wait for each"
        )
    if background:
        row = (
            "the 'background' row is the process's own cost, spent beside the agent loop "
            "(scripts/bench_background.py measures the loop through the real client)"
        )
    else:
        row = (
            "the 'background' row is what a client that runs them in the background "
            "(Claude Code >= 2.1.19) would leave to run beside the agent loop"
        )
    return f"{how}: {wait}; {row}"


def prepare(project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
    """The 20 MB Write, written to a file once (``big``), when the run has its case."""
    from ctxmode.bench.payloads import big_payload

    if "big" not in wanted:
        return {}
    path = os.path.join(scratch, "big-payload.json")
    with open(path, "wb") as handle:
        handle.write(big_payload(project, session))
    return {"big": path}


def check(case: Case, sample: Sample) -> list[str]:
    """The proof a case did its work (a hook that does nothing is fast, too)."""
    if case.payload == "session_start_compact" and b"<session_resume" not in sample.stdout:
        return ["printed no <session_resume> snapshot"]
    if case.event == STATUS_LINE and not sample.stdout.startswith(b"ctx 1,000 ev"):
        # Proof it read the seeded session (a status line that reads nothing is fast too).
        return [f"printed {sample.stdout[:80]!r}, not the session's status line"]
    return []


# -- which commands ----------------------------------------------------------------------


NOT_INSTALLED = "not installed: the commands `ctxmode install` would write"


def capture_plan() -> tuple[bool, str]:
    """Whether ``ctxmode install`` would register the captures in the background here,
    and why (one clause): the Claude Code it would find decides (``install.find_client``)."""
    from ctxmode.hosts.claude_code import background_mode, install

    return background_mode(install.find_client().version)


def default_commands(background: bool = False) -> dict[str, str]:
    """The commands ``ctxmode install`` would write for this installation (every event;
    ``background``: the captures as install registers them for a client with async hooks)."""
    from ctxmode.hosts.claude_code import install

    return {spec.event: spec.command for spec in install.hook_specs(background=background)}


def _settings_candidates(project_dir: str) -> list[str]:
    """Claude Code's settings files, most specific first: local, project, user."""
    from ctxmode.hosts.claude_code import install

    files = [
        os.path.join(project_dir, ".claude", "settings.local.json"),
        os.path.join(project_dir, ".claude", "settings.json"),
        os.path.join(install.user_config_dir(), "settings.json"),
    ]
    unique: list[str] = []
    for path in files:
        if path not in unique:
            unique.append(path)
    return unique


def resolve_commands(
    settings_path: str | None = None, project_dir: str | None = None
) -> tuple[dict[str, str], str, tuple[bool, str] | None]:
    """(command per event, where they came from, install's plan or None).

    With ``settings_path``: that file's ctxmode commands. Otherwise the installed ones
    (local, project, then user settings of the current project); when none is
    installed, the commands this installation would write, the captures in the mode
    install would choose, and that choice (:func:`capture_plan`). Events a settings
    file lacks are filled in with the latter, and the source says so.
    """
    defaults = default_commands()
    if settings_path is not None:
        found = commands_from_settings(settings_path)
        if not found:
            raise BenchError(f"no ctxmode hook is registered in {settings_path}")
        sources = [settings_path]
    else:
        if project_dir is None:
            from ctxmode import paths

            project_dir = paths.project_dir(os.getcwd(), os.environ)
        found = {}
        sources = []
        for candidate in _settings_candidates(project_dir):
            if not os.path.isfile(candidate):
                continue
            try:
                here = commands_from_settings(candidate)
            except BenchError:
                continue  # not ours to judge here: `ctxmode doctor` reports it
            new = {event: cmd for event, cmd in here.items() if event not in found}
            if new:
                found.update(new)
                sources.append(candidate)
        if not found:
            plan = capture_plan()
            return default_commands(plan[0]), NOT_INSTALLED, plan
    missing = [event for event in defaults if event not in found]
    source = ", ".join(sources)
    if missing:
        source += (
            f" (not registered there, so as `ctxmode install` would write: {', '.join(missing)})"
        )
    return {**defaults, **found}, source, None


def statusline_command(settings_path: str | None = None, project_dir: str | None = None) -> str:
    """ctxmode's status line command: the one installed in the settings file (or the
    first of local, project, user settings holding one), else the one ``ctxmode install
    --statusline`` would write. A status line composed with the user's own is measured
    without theirs: their command is not ctxmode's cost."""
    from ctxmode.hosts.claude_code import install, settings_statusline

    if settings_path is not None:
        candidates = [settings_path]
    else:
        if project_dir is None:
            from ctxmode import paths

            project_dir = paths.project_dir(os.getcwd(), os.environ)
        candidates = _settings_candidates(project_dir)
    for path in candidates:
        try:
            with open(path, encoding="utf-8") as handle:
                command = settings_statusline.current(handle.read())
        except (OSError, ValueError):
            continue
        if isinstance(command, str) and settings_statusline.is_ours(command):
            return settings_statusline.ours_alone(command)
    return install.statusline_command()


def interpreter_of(command: str) -> str:
    """The interpreter a hook command starts (its first word, or for a shared project
    file's command the one its per-user launcher runs)."""
    from ctxmode import settings
    from ctxmode.hosts.claude_code import install

    if settings.runs_launcher(command):
        try:
            with open(install.launcher_path(), encoding="utf-8") as handle:
                python = install.launcher_target(handle.read())[0]
        except OSError:
            python = None
        return python or sys.executable
    return first_word(command)
