"""Doctor checks of the Codex CLI registration: hooks.json, the events, the trust entries.

Codex runs a hook only when the user's config.toml trusts it with the hash of its current
command (``ctxmode.hosts.codex.install``); an untrusted or "modified" hook is skipped in silence by
``codex exec``. So besides the events and the command paths, every ctxmode handler's trust
entry is checked. Nothing is reported when ctxmode is not registered for Codex.
"""

from __future__ import annotations

import os
import re
import shlex

from ctxmode import settings
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import codex
from ctxmode.hosts.codex import install as codex_config

GROUP = "codex"
FIX = "ctxmode install --host codex (add --project DIR for a project's .codex/hooks.json)"


def fix_for(scope: str, path: str) -> str:
    """The install that rewrites this scope's file: a command to run as it stands."""
    if scope != "project":
        return "ctxmode install --host codex"
    root = os.path.dirname(os.path.dirname(path))
    return f"ctxmode install --host codex --project {shlex.quote(root)}"


_SCRIPT = re.compile(r"'([^']*[/\\]ctxmode[/\\]hooks[/\\][a-z_]+\.py)'")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def check_codex(ctx: Context) -> list[Check]:
    home = codex_config.codex_home(ctx.env)
    files = [("user", os.path.join(home, "hooks.json"))]
    project_file = os.path.join(ctx.project_dir, ".codex", "hooks.json")
    if ctx.project_dir and os.path.exists(project_file):
        files.append(("project", project_file))
    if not os.path.isdir(home) and len(files) == 1:
        return []
    trust_text = _read(os.path.join(home, codex.TRUST_FILE)) or ""
    try:
        trusted = codex_config.trusted_keys(trust_text)
    except codex_config.CodexConfigError as exc:
        return [Check(GROUP, "trust", FAIL, str(exc), "fix the TOML syntax, then " + FIX)]
    checks: list[Check] = []
    registered_any = False
    for scope, path in files:
        text = _read(path)
        if text is None:
            continue
        try:
            found = settings.registrations(text)
            entries = codex_config.trust_entries(path, text)
        except settings.SettingsError as exc:
            checks.append(Check(GROUP, f"{scope} hooks", FAIL, f"{path}: {exc}", FIX))
            continue
        if not found:
            continue
        registered_any = True
        checks.extend(_file_checks(scope, path, text, found, entries, trusted))
        if scope == "project":
            checks.append(_project_trust(path, trust_text))
    # Codex without ctxmode is a choice, not a finding: nothing to report then.
    return checks if registered_any or checks else []


# The host's checks, in display order: what ``ctxmode doctor`` runs (ctxmode.hosts.contract).
checks = check_codex


def _file_checks(
    scope: str,
    path: str,
    text: str,
    found: list[settings.Registration],
    entries: list[tuple[str, str]],
    trusted: dict[str, str],
) -> list[Check]:
    checks = []
    events = {reg.event for reg in found}
    missing = [event for event, _, _ in codex.HOOKS if event not in events]
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
    untrusted = [key for key, value in entries if trusted.get(key) != value]
    if untrusted:
        checks.append(
            Check(
                GROUP,
                f"{scope} trust",
                FAIL,
                f"{len(untrusted)} of {len(entries)} ctxmode hooks in {path} are not trusted "
                "by config.toml (Codex skips them without a word)",
                fix_for(scope, path),
                tuple(untrusted),
            )
        )
    else:
        checks.append(
            Check(GROUP, f"{scope} trust", OK, f"all {len(entries)} ctxmode hooks trusted")
        )
    return checks


def _project_trust(path: str, trust_text: str) -> Check:
    """A project's .codex folder runs only in a project Codex trusts (0.169.0: otherwise
    `codex exec` warns once and runs none of its hooks)."""
    root = os.path.dirname(os.path.dirname(path))
    level = codex_config.project_trust(trust_text, root)
    if level == "trusted":
        return Check(GROUP, "project trusted", OK, f"Codex trusts {root}")
    return Check(
        GROUP,
        "project trusted",
        FAIL,
        f"Codex does not trust {root} ({level or 'no trust_level'}): it runs none of the "
        f"hooks in {path}",
        f"trust it once: `codex exec --trust` in {root} (or the codex TUI's prompt)"
        if level != "untrusted"
        else f'set trust_level = "trusted" for {root} in config.toml',
    )
