"""Doctor checks of the GitHub Copilot CLI registration: the hooks files, the events, the trust.

Copilot (1.0.102) runs user hooks (``~/.copilot/settings.json``) with no trust step, and a
repository's hooks (``.github/hooks/*.json``; ctxmode's is ``ctxmode.json``) only in a folder
it trusts (``trusted_folders`` in ``~/.copilot/config.json``, or one run's ``--trust-folder``
/ ``COPILOT_ALLOW_ALL``). Nothing is reported when ctxmode is not registered for Copilot.
"""

from __future__ import annotations

import os
import re
import shlex

from ctxmode import settings
from ctxmode.config_files import read_text
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import copilot
from ctxmode.hosts.copilot import install as copilot_config

GROUP = "copilot"
FIX = "ctxmode install --host copilot (add --project DIR for a repository's .github/hooks)"

_SCRIPT = re.compile(r"'([^']*[/\\]ctxmode[/\\]hooks[/\\][a-z_]+\.py)'")


def fix_for(scope: str, root: str) -> str:
    """The install that rewrites this scope's file: a command to run as it stands."""
    if scope != "project":
        return "ctxmode install --host copilot"
    return f"ctxmode install --host copilot --project {shlex.quote(root)}"


def check_copilot(ctx: Context) -> list[Check]:
    files = [("user", copilot_config.settings_path("user", env=ctx.env), "")]
    if ctx.project_dir:
        root = ctx.project_dir
        name = copilot.SETTINGS_FILES["project"][1]
        files.append(("project", os.path.join(root, *name.split("/")), root))
    checks: list[Check] = []
    for scope, path, root in files:
        text = read_text(path)
        if text is None:
            continue
        try:
            found = settings.registrations(text)
        except settings.SettingsError as exc:
            checks.append(Check(GROUP, f"{scope} hooks", FAIL, str(exc), FIX))
            continue
        if not found:
            continue
        checks.extend(_file_checks(scope, path, root, text, found))
        if scope == "project":
            checks.append(_project_trust(path, root, ctx))
    return checks


# The host's checks, in display order: what ``ctxmode doctor`` runs (ctxmode.hosts.contract).
checks = check_copilot


def _file_checks(
    scope: str, path: str, root: str, text: str, found: list[settings.Registration]
) -> list[Check]:
    checks = []
    events = {reg.event for reg in found}
    missing = [event for event, _, _ in copilot.HOOKS if event not in events]
    if missing:
        checks.append(
            Check(
                GROUP,
                f"{scope} events",
                WARN,
                f"{path}: no hook for {', '.join(missing)}",
                fix_for(scope, root),
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
                fix_for(scope, root),
                tuple(stale),
            )
        )
    return checks


def _project_trust(path: str, root: str, ctx: Context) -> Check:
    """A repository's hooks run only in a folder Copilot trusts (1.0.102)."""
    config = copilot_config.config_path(ctx.env)
    if copilot_config.folder_trusted(read_text(config), root):
        return Check(GROUP, "project trusted", OK, f"Copilot trusts {root}")
    return Check(
        GROUP,
        "project trusted",
        WARN,
        f"{config} does not trust {root}: Copilot runs none of the hooks in {path} there "
        "(but for a run with --trust-folder or COPILOT_ALLOW_ALL)",
        f"trust {root} in Copilot once (its trust prompt: this and future sessions); or use "
        "the user scope, which needs no trust: ctxmode install --host copilot",
    )
