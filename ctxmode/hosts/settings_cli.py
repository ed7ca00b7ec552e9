"""What ``ctxmode install/uninstall --host NAME`` says, and ``install.sh --host NAME
--dry-run``, for the hosts whose install writes ctxmode's hooks into one settings file
(Gemini CLI, Copilot CLI, Qwen Code): one wording, one flow; each host passes its own
``install``/``uninstall`` and names. The dry run serves Codex and OpenCode too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import ctxmode
from ctxmode.config_files import InstallError, Report, display_path

VERBS = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}


def parse_or_raise(text: str, path: str) -> None:
    """Refuse a settings file that is no JSON object (an empty one is an empty object)."""
    from ctxmode import settings

    try:
        value = settings.parse(text, path) if text.strip() else {}
    except settings.SettingsError as exc:
        raise InstallError(str(exc)) from None  # it names the file
    if not isinstance(value, dict):
        raise InstallError(f"{path}: the top level is not a JSON object; left untouched")


def dry_run_main(argv: Sequence[str], option: str, label: str, install: Callable[..., Any]) -> int:
    """``install.sh --host OPTION --dry-run``: the change this checkout would make, written
    nowhere (run from the checkout by the system interpreter; no click). ``argv``: the
    interpreter and package directory the environment would have, then the scope
    arguments and ``--host OPTION``."""
    python, package_dir, *rest = argv
    rest = [arg for arg in rest if arg not in ("--host", option)]
    scope, directory = "user", None
    if rest and rest[0] == "--project" and len(rest) == 2:
        scope, directory = "project", rest[1]
    elif rest not in ([], ["--user"]):
        print(f"ctxmode: error: unexpected arguments for {label} {rest}", file=sys.stderr)
        return 2
    try:
        result = install(scope, directory, dry_run=True, python=python, package_dir=package_dir)
    except InstallError as exc:
        print(f"ctxmode: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(result.diff or "nothing to change\n")
    return 0


def say_installed(
    report: Report,
    result: Any,
    *,
    option: str,
    label: str,
    proof: ModuleType | None,
    sample: str,
    also: str = "",
) -> None:
    """Say what ``install`` did (``result``); with ``proof`` (the host's proof module, for
    ``--verify``), prove it on a sample session first. ``also``: one more clause."""
    for note in result.notes:
        report.note(f"note: {note}")
    if result.dry_run:
        report.write(result.diff or "nothing to change\n")
        return
    line = (
        f"ctxmode {ctxmode.__version__} {VERBS[result.action]} for {label}: {result.hooks} "
        f"hooks in {display_path(result.path)}"
    )
    if result.action == "updated":
        line += " (old entries replaced)"
    line += also
    if proof is not None:
        from ctxmode import proof as harness

        outcome = proof.verify(result.path)
        if not outcome.ok:
            raise InstallError(
                harness.failed(line, outcome, label, f"ctxmode uninstall --host {option}")
            )
        line += harness.verified(outcome, sample)
    report.say(line)


def say_uninstalled(report: Report, result: Any, *, label: str) -> None:
    """Say what ``uninstall`` did (``result``)."""
    if result.dry_run:
        report.write(result.diff or f"nothing to change: ctxmode is not installed for {label}\n")
        return
    where = display_path(result.path)
    if result.action == "not installed":
        report.say(f"ctxmode is not installed in {where}: nothing changed")
    elif result.action == "deleted":
        report.say(f"ctxmode hooks removed: {where} deleted (ctxmode had created it)")
    else:
        report.say(f"ctxmode hooks removed from {where}")
