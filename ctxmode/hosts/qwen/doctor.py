"""Doctor checks of the Qwen Code registration: settings.json, the events, the lookups'
allow rule, the folder trust.

Qwen Code (0.24.4) runs user hooks (``~/.qwen/settings.json``, or ``$QWEN_HOME``) as they
are, and a project's (``DIR/.qwen/settings.json``) in any folder while folder trust is off
(its default); with ``security.folderTrust.enabled`` on, only in a folder trusted in
``~/.qwen/trustedFolders.json``. Nothing is reported when ctxmode is not registered for Qwen.
"""

from __future__ import annotations

import os
import re
import shlex

from ctxmode import settings
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import qwen
from ctxmode.hosts.claude_code import settings_permissions
from ctxmode.hosts.qwen import install as qwen_config

GROUP = "qwen"
FIX = "ctxmode install --host qwen (add --project DIR for a project's .qwen/settings.json)"

_SCRIPT = re.compile(r"'([^']*[/\\]ctxmode[/\\]hooks[/\\][a-z_]+\.py)'")


def fix_for(scope: str, path: str) -> str:
    """The install that rewrites this scope's file: a command to run as it stands."""
    if scope != "project":
        return "ctxmode install --host qwen"
    root = os.path.dirname(os.path.dirname(path))
    return f"ctxmode install --host qwen --project {shlex.quote(root)}"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError):
        return None


def check_qwen(ctx: Context) -> list[Check]:
    files = [("user", qwen_config.settings_path("user", env=ctx.env))]
    if ctx.project_dir:
        files.append(("project", os.path.join(ctx.project_dir, ".qwen", "settings.json")))
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
        if scope == "user":
            checks.append(_lookups(path, text))
        else:
            checks.append(_project_trust(path, ctx))
    return checks


# The host's checks, in display order: what ``ctxmode doctor`` runs (ctxmode.hosts.contract).
checks = check_qwen


def _file_checks(
    scope: str, path: str, text: str, found: list[settings.Registration]
) -> list[Check]:
    checks = []
    events = {reg.event for reg in found}
    missing = [event for event, _, _ in qwen.HOOKS if event not in events]
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
    return checks


def _lookups(path: str, text: str) -> Check:
    """The snapshot's lookups run without asking only with install's allow rule."""
    rules, why = qwen_config.lookup_rules("user")
    try:
        present = settings_permissions.current(text)
    except settings.SettingsError:
        present = []
    if not rules:
        return Check(GROUP, "lookups allowed", WARN, why)
    if all(rule in present for rule in rules):
        return Check(GROUP, "lookups allowed", OK, f"{path}: permissions.allow has {rules[0]}")
    return Check(
        GROUP,
        "lookups allowed",
        WARN,
        f"{path} has no {rules[0]} in permissions.allow: the snapshot's lookups ask before "
        "they run (headless: they are refused)",
        "ctxmode install --host qwen",
    )


def _project_trust(path: str, ctx: Context) -> Check:
    """With folder trust on, a project's hooks run only in a trusted folder (0.24.4)."""
    root = os.path.dirname(os.path.dirname(path))
    user = _read(qwen_config.settings_path("user", env=ctx.env))
    if not qwen_config.folder_trust_enabled(user):
        return Check(
            GROUP,
            "project trusted",
            OK,
            f"folder trust is off in Qwen's settings: it loads {path} in any folder",
        )
    trust_file = qwen_config.trust_path(ctx.env)
    level = qwen_config.folder_trust(_read(trust_file), root)
    if level == "TRUST_FOLDER":
        return Check(GROUP, "project trusted", OK, f"Qwen trusts {root}")
    return Check(
        GROUP,
        "project trusted",
        WARN,
        f"{trust_file} does not trust {root} ({level or 'not named'}): Qwen runs none of "
        f"the hooks in {path} there",
        f"trust {root} in Qwen once (its trust dialog, or /permissions); or use the user "
        "scope, which needs no trust: ctxmode install --host qwen",
    )
