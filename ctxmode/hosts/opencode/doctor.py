"""Doctor checks of ctxmode's OpenCode plugin: present, current, and pointing at a ctxmode
that runs. Nothing is reported when OpenCode has no ctxmode plugin and no config folder."""

from __future__ import annotations

import os
import shlex

from ctxmode.config_files import read_text
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import opencode
from ctxmode.hosts.opencode import install as opencode_install

GROUP = "opencode"


def _fix(scope: str, path: str) -> str:
    if scope != "project":
        return "ctxmode install --host opencode"
    root = os.path.dirname(os.path.dirname(os.path.dirname(path)))
    return f"ctxmode install --host opencode --project {shlex.quote(root)}"


def checks(ctx: Context) -> list[Check]:
    home = opencode_install.config_home(ctx.env)
    files = [("user", os.path.join(home, *opencode.SETTINGS_FILES["user"][1].split("/")))]
    if ctx.project_dir:
        name = opencode.SETTINGS_FILES["project"][1]
        files.append(("project", os.path.join(ctx.project_dir, *name.split("/"))))
    found: list[Check] = []
    for scope, path in files:
        try:
            text = read_text(path)
        except Exception:  # unreadable: reported as such
            text = ""
        if text is None:
            continue
        if not opencode_install.is_ours(text):
            found.append(Check(GROUP, f"{scope} plugin", WARN, f"{path} is not ctxmode's"))
            continue
        command = opencode_install.installed_command(text)
        if command is None:
            found.append(
                Check(GROUP, f"{scope} plugin", FAIL, f"{path}: no command", _fix(scope, path))
            )
            continue
        python, hooks = command
        missing = [
            p for p in (python, os.path.join(hooks, "session_start.py")) if not os.path.exists(p)
        ]
        if missing:
            found.append(
                Check(
                    GROUP,
                    f"{scope} plugin",
                    FAIL,
                    f"{path} runs {', '.join(missing)}, which does not exist",
                    _fix(scope, path),
                )
            )
            continue
        current = opencode_install.render(ctx.python, ctx.package_dir)
        if text != current:
            found.append(
                Check(
                    GROUP,
                    f"{scope} plugin",
                    WARN,
                    f"{path} is another ctxmode version's plugin or runs another interpreter",
                    _fix(scope, path),
                )
            )
            continue
        found.append(Check(GROUP, f"{scope} plugin", OK, f"OpenCode loads {path}"))
    return found
