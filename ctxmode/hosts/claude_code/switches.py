"""What switches ctxmode's hooks off although they are registered."""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

from ctxmode.doctor.core import WARN, Check, Context
from ctxmode.hosts.claude_code.settings_files import SettingsFile, display


def switch_checks(files: Sequence[SettingsFile], ctx: Context) -> list[Check]:
    """Whatever switches ctxmode's hooks off for this project, although they are registered:
    ``CTXMODE_DISABLE`` (in this environment or a settings file's ``env``), a
    ``.ctxmode-ignore`` marker in the project (found as the hooks find it), and Claude
    Code's own ``disableAllHooks`` / managed ``allowManagedHooksOnly``."""
    from ctxmode.hookrun import disabled

    env = ctx.env
    found: list[str] = []
    fixes: list[str] = []
    if disabled(env):
        found.append(
            f"CTXMODE_DISABLE={env.get('CTXMODE_DISABLE', '').strip()} in this environment: "
            "every hook started from it does nothing"
        )
        fixes.append("unset CTXMODE_DISABLE (and remove it from your shell profile)")
    for info in files:
        if disabled(info.env):
            found.append(
                f"{info.scope} settings set CTXMODE_DISABLE={info.env['CTXMODE_DISABLE']} in "
                f'"env" ({display(info.path, env)}): every hook does nothing'
            )
            fixes.append(f'remove CTXMODE_DISABLE from "env" in {display(info.path, env)}')
    marker = os.path.join(ctx.project_dir, ".ctxmode-ignore")
    if os.path.exists(marker):
        found.append(f"{marker} switches ctxmode off for this project: nothing is recorded here")
        fixes.append(f"rm {shlex.quote(marker)} to record this project again")
    for info in files:
        if info.disable_all_hooks:
            found.append(
                f'{info.scope} settings set "disableAllHooks": true ({display(info.path, env)}): '
                + (
                    "Claude Code runs no hook at all"
                    if info.scope == "managed"
                    else "Claude Code runs no hook but managed ones"
                )
            )
            fixes.append(
                "ask your administrator (managed settings)"
                if info.scope == "managed"
                else f'remove "disableAllHooks" from {display(info.path, env)}'
            )
        if info.scope == "managed" and info.managed_hooks_only and not info.registrations:
            found.append(
                f'managed settings set "allowManagedHooksOnly": true ({info.path}): '
                "ctxmode's hooks in your own settings files never run"
            )
            fixes.append("ask your administrator to register ctxmode in the managed settings")
    if not found:
        return []
    return [
        Check(
            "hooks",
            "switched off",
            WARN,
            f"ctxmode is switched off here although its hooks are registered: {found[0]}",
            "; ".join(dict.fromkeys(fixes)),
            tuple(found[1:]),
        )
    ]
