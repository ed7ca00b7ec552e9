"""The Claude Code settings files doctor reads: which exist, what they register (ctxmode's
hooks, its plugin, other tools' hooks and plugins) and what switches hooks off; and how a
path or an install scope is written back in a report."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxmode import settings
from ctxmode.doctor.core import Context
from ctxmode.hosts import claude_code
from ctxmode.hosts.claude_code import settings_permissions
from ctxmode.settings import Registration, SettingsError


@dataclass
class SettingsFile:
    """One Claude Code settings file as doctor sees it."""

    scope: str  # user, project, local, managed
    path: str
    exists: bool = False
    error: str | None = None
    registrations: list[Registration] = field(default_factory=list)
    plugins: list[str] = field(default_factory=list)  # enabled ctxmode plugin keys
    other_plugins: list[str] = field(default_factory=list)  # other enabled plugin keys
    foreign: list[tuple[str, str]] = field(default_factory=list)  # (event, command) not ours
    env: dict[str, str] = field(default_factory=dict)  # "env": given to every hook
    disable_all_hooks: bool = False  # "disableAllHooks": true
    managed_hooks_only: bool = False  # "allowManagedHooksOnly": true
    lookup_rules: list[str] = field(default_factory=list)  # ctxmode's permissions.allow rules


def home_dir(env: Mapping[str, str]) -> str:
    """``$HOME`` when it is an absolute path, else the account's home."""
    home = env.get("HOME", "")
    return home if os.path.isabs(home) else os.path.expanduser("~")


def user_settings_path(env: Mapping[str, str]) -> str:
    """``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``."""
    configured = env.get(claude_code.USER_DIR_ENV, "").strip() or claude_code.USER_DIR_DEFAULT
    base = home_dir(env) + configured[1:] if configured.startswith("~") else configured
    return os.path.join(os.path.abspath(base), *claude_code.SETTINGS_FILES["user"][1].split("/"))


def settings_paths(ctx: Context) -> list[tuple[str, str]]:
    """(scope, path) of every settings file Claude Code merges for the project."""
    return [
        ("user", user_settings_path(ctx.env)),
        *(
            (scope, os.path.join(ctx.project_dir, *name.split("/")))
            for scope, (base, name) in claude_code.SETTINGS_FILES.items()
            if base == "project"
        ),
        ("managed", ctx.managed_settings or settings.managed_settings_path()),
    ]


def _foreign_commands(value: Any) -> list[tuple[str, str]]:
    hooks = value.get("hooks") if isinstance(value, dict) else None
    found: list[tuple[str, str]] = []
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and not settings.is_ctxmode_command(command):
                    found.append((str(event), command))
    return found


def read_settings(scope: str, path: str) -> SettingsFile:
    info = SettingsFile(scope, path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return info
    except OSError as exc:
        info.exists = True
        info.error = f"cannot read: {exc.strerror}"
        return info
    info.exists = True
    try:
        text = data.decode("utf-8")
        value = settings.parse(text, path)
        info.registrations = settings.registrations(text)
        info.plugins = settings.enabled_plugins(text)
        info.lookup_rules = settings_permissions.current(text)
    except UnicodeDecodeError:
        info.error = "not UTF-8 text"
        return info
    except SettingsError as exc:
        info.error = str(exc).removeprefix(f"{path}: ")  # the report names the file itself
        return info
    plugins = value.get("enabledPlugins") if isinstance(value, dict) else None
    if isinstance(plugins, dict):
        info.other_plugins = [
            key for key, on in plugins.items() if on is True and key not in info.plugins
        ]
    info.foreign = _foreign_commands(value)
    if isinstance(value, dict):
        env = value.get("env")
        if isinstance(env, dict):
            info.env = {str(k): str(v) for k, v in env.items() if isinstance(v, (str, int))}
        info.disable_all_hooks = value.get("disableAllHooks") is True
        info.managed_hooks_only = value.get("allowManagedHooksOnly") is True
    return info


def display(path: str, env: Mapping[str, str]) -> str:
    """``path`` with the home folder written ``~``."""
    home = home_dir(env)
    if home not in ("", "/") and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def scope_flag(scope: str, project_dir: str) -> str:
    """The ``ctxmode install`` option that writes to ``scope`` (none for the user's file)."""
    if scope in ("user", "managed"):
        return ""
    return f" --{scope} {shlex.quote(project_dir)}"
