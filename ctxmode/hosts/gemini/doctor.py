"""Doctor checks of the Gemini CLI registration: settings.json, the events, the folder trust.

Gemini (0.61.0) runs user hooks (``~/.gemini/settings.json``) with no trust step, and a
project's hooks (``DIR/.gemini/settings.json``) only in a folder trusted in
``~/.gemini/trustedFolders.json``; a PreCompress/SessionStart/SessionEnd matcher is an exact
string (``"a|b"`` matches nothing), and its timeouts are milliseconds. Nothing is reported
when ctxmode is not registered for Gemini.
"""

from __future__ import annotations

import os
import re
import shlex

from ctxmode import settings
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import gemini
from ctxmode.hosts.gemini import install as gemini_config

GROUP = "gemini"
FIX = "ctxmode install --host gemini (add --project DIR for a project's .gemini/settings.json)"


def fix_for(scope: str, path: str) -> str:
    """The install that rewrites this scope's file: a command to run as it stands."""
    if scope != "project":
        return "ctxmode install --host gemini"
    root = os.path.dirname(os.path.dirname(path))
    return f"ctxmode install --host gemini --project {shlex.quote(root)}"


_SCRIPT = re.compile(r"'([^']*[/\\]ctxmode[/\\]hooks[/\\][a-z_]+\.py)'")
# Gemini compares these events' matchers with the source/reason/trigger as exact strings.
_EXACT = ("SessionStart", "SessionEnd", "PreCompress")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def check_gemini(ctx: Context) -> list[Check]:
    home = gemini_config.gemini_home(ctx.env)
    files = [("user", os.path.join(home, "settings.json"))]
    if ctx.project_dir:
        files.append(("project", os.path.join(ctx.project_dir, ".gemini", "settings.json")))
    checks: list[Check] = []
    for scope, path in files:
        text = _read(path)
        if text is None:
            continue
        try:
            found = settings.registrations(text)
        except settings.SettingsError as exc:
            checks.append(Check(GROUP, f"{scope} hooks", FAIL, str(exc), FIX))
            continue
        if not found:
            continue
        checks.extend(_file_checks(scope, path, text, found))
        if scope == "project":
            checks.append(_project_trust(path, ctx))
    return checks


# The host's checks, in display order: what ``ctxmode doctor`` runs (ctxmode.hosts.contract).
checks = check_gemini


def _file_checks(
    scope: str, path: str, text: str, found: list[settings.Registration]
) -> list[Check]:
    checks = []
    events = {reg.event for reg in found}
    missing = [event for event, _, _ in gemini.HOOKS if event not in events]
    if missing:
        checks.append(
            Check(
                GROUP,
                f"{scope} events",
                WARN,
                f"{path}: no hook for {', '.join(missing)}",
                fix_for(scope, path),
            )
        )
    else:
        checks.append(Check(GROUP, f"{scope} events", OK, f"{path}: every event registered"))
    odd = [
        f"{reg.event} matcher {reg.matcher!r} (an exact string: it matches nothing)"
        for reg in found
        if reg.event in _EXACT and isinstance(reg.matcher, str) and "|" in reg.matcher
    ]
    odd += [
        f"{reg.event} timeout {reg.timeout} (milliseconds: too short to run)"
        for reg in found
        if isinstance(reg.timeout, int) and reg.timeout < 1000
    ]
    if odd:
        checks.append(
            Check(
                GROUP, f"{scope} handlers", WARN, "; ".join(odd), fix_for(scope, path), tuple(odd)
            )
        )
    stale = sorted({m for m in _SCRIPT.findall(text) if not os.path.exists(m)})
    if stale:
        checks.append(
            Check(
                GROUP,
                f"{scope} commands",
                FAIL,
                f"{len(stale)} hook script(s) named in {path} do not exist",
                fix_for(scope, path),
                tuple(stale),
            )
        )
    return checks


def _project_trust(path: str, ctx: Context) -> Check:
    """A project's hooks run only in a folder trustedFolders.json trusts (0.61.0)."""
    root = os.path.dirname(os.path.dirname(path))
    trust_file = gemini_config.trust_path(ctx.env)
    level = gemini_config.folder_trust(_read(trust_file), root)
    if level == "TRUST_FOLDER":
        return Check(GROUP, "project trusted", OK, f"Gemini trusts {root}")
    return Check(
        GROUP,
        "project trusted",
        WARN,
        f"{trust_file} does not trust {root} ({level or 'not named'}): Gemini runs none of "
        f"the hooks in {path} there",
        f"trust {root} in Gemini once (its trust prompt, or /permissions); or use the user "
        "scope, which needs no trust: ctxmode install --host gemini",
    )
