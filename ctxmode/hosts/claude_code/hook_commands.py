"""What a registered hook command runs: its interpreter and script (are they there?),
whether a matcher lets an event through, and the per-user launcher that shared project
settings run."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ctxmode import settings
from ctxmode.hosts.claude_code.settings_files import display, home_dir
from ctxmode.settings import Registration


def matcher_matches(matcher: Any, value: str) -> bool:
    """Claude Code's matcher rule: empty/``*``/absent match all; ``A|B`` are exact names;
    anything else is a regular expression."""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return value in matcher.split("|")
    try:
        return re.search(matcher, value) is not None
    except re.error:
        return False


def command_paths(command: str) -> tuple[str | None, str | None]:
    """(interpreter, hook script) named by a ctxmode hook command, as far as they parse."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None, None
    script = next((word for word in words if settings.is_ctxmode_command(word)), None)
    interpreter = words[0] if words and words[0] != script else None
    return interpreter, script


def _exists_as_command(word: str, env: Mapping[str, str]) -> bool:
    if "$" in word:
        return True  # expanded by the shell at run time (e.g. ${CLAUDE_PLUGIN_ROOT}): not ours to judge
    if os.sep in word or "/" in word:
        return os.path.isfile(word) and os.access(word, os.X_OK)
    import shutil

    return shutil.which(word, path=env.get("PATH")) is not None


def stale_paths(reg: Registration, env: Mapping[str, str]) -> list[str]:
    """What a registered command runs that does not exist (interpreter, script)."""
    interpreter, script = command_paths(reg.command)
    missing = []
    if interpreter is not None and not _exists_as_command(interpreter, env):
        missing.append(f"interpreter {interpreter}")
    if script is not None and "$" not in script and not os.path.isfile(script):
        missing.append(f"script {script}")
    if interpreter is None and script is None:
        missing.append("a command that does not parse")
    return missing


def launcher_path(env: Mapping[str, str]) -> str:
    """The per-user launcher a shared project file's commands run (``sh`` expands ``~``)."""
    return os.path.join(home_dir(env), ".local", "bin", "ctxmode-hook")


def launcher_problem(env: Mapping[str, str]) -> str | None:
    """Why the launcher cannot run ctxmode (then its hooks do nothing), else None."""
    from ctxmode.hosts.claude_code import install as installer

    path = display(launcher_path(env), env)
    try:
        with open(launcher_path(env), encoding="utf-8", errors="replace") as handle:
            text = handle.read(16384)
    except OSError:
        return f"{path} is missing"
    python, hooks = installer.launcher_target(text)
    if installer.LAUNCHER_TAG not in text or python is None or hooks is None:
        return f"{path} is not ctxmode's launcher"
    if not os.access(launcher_path(env), os.X_OK):
        return f"{path} is not executable"
    if not (os.path.isfile(python) and os.access(python, os.X_OK)):
        return f"{path} runs {python}, which is gone"
    if not all(os.path.isfile(os.path.join(hooks, f"{s}.py")) for s in settings.SHIMS.values()):
        return f"{path} runs the hook scripts in {hooks}, which are gone"
    return None
