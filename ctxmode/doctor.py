"""``ctxmode doctor``'s checks: plain functions that look, never change, and explain.

Each check returns :class:`Check` records (``ok``/``warn``/``fail``, a one-line summary,
a one-line fix, optional detail lines); ``ctxmode.cli.doctor`` only formats them. The
inputs (environment, project, clock, the settings files' locations) are parameters, so
the tests run every check against a temp HOME and a temp data root.

What is checked, in order: the interpreter and packages; SQLite and FTS5; the data
root and its permissions; the configuration files; which Claude Code settings files
register which ctxmode hooks (stale paths, duplicates, missing events, the SessionStart
``compact`` matcher, the plugin enabled as well, other memory tools on the same
events); the project's store; recent errors in the hook log.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import ctxmode
from ctxmode import config, hooklog, paths, settings
from ctxmode.settings import Registration, SettingsError
from ctxmode.wording import plural

OK, WARN, FAIL = "ok", "warn", "fail"
STATUSES = (OK, WARN, FAIL)

MIN_PYTHON = (3, 10)
# SQLite 3.34 brought FTS5's trigram tokenizer (the search index); older ones fall back
# to LIKE. WAL and everything else the store uses are much older.
TRIGRAM_SQLITE = (3, 34, 0)
LOG_WINDOW_SECONDS = 24 * 3600
# An error this recent is a live problem (fail); older ones within the window warn.
LOG_FRESH_SECONDS = 3600
# A compaction snapshot still unclaimed after this long was never injected.
STALE_COMPACT_SECONDS = 600

# Events whose absence breaks ctxmode outright (nothing recorded, nothing injected).
CORE_EVENTS = ("PostToolUse", "SessionStart")
SESSION_START_SOURCES = ("startup", "resume", "clear", "compact", "fork")

# Words in a hook command (or a plugin name) that give away another memory tool: two
# tools injecting a resume at SessionStart give the model two competing stories.
OTHER_MEMORY_MARKERS = (
    "context-mode",
    "context_mode",
    "claude-mem",
    "mem0",
    "supermemory",
    "memory",
    "memento",
)


@dataclass(frozen=True)
class Check:
    """One finding: ``status`` is ``ok``, ``warn`` or ``fail``."""

    group: str
    name: str
    status: str
    summary: str
    fix: str = ""
    details: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "fix": self.fix,
            "details": list(self.details),
        }


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


@dataclass(frozen=True)
class Context:
    """Everything the checks read from the outside world."""

    env: Mapping[str, str]
    project_dir: str
    now: float
    package_dir: str = os.path.dirname(ctxmode.__file__)
    python: str = sys.executable
    # Claude Code's managed (policy) settings file; None: this platform's.
    managed_settings: str | None = None

    @property
    def root(self) -> str:
        return paths.data_root(self.env)

    @property
    def store_path(self) -> str:
        return paths.store_path(self.project_dir, self.env)


def run_all(ctx: Context) -> list[Check]:
    """Every check, in display order."""
    checks: list[Check] = []
    for step in (
        check_python,
        check_package,
        check_sqlite,
        check_data_root,
        check_config,
        check_hooks,
        check_store,
        check_log,
    ):
        checks.extend(step(ctx))
    return checks


def exit_code(checks: Iterable[Check]) -> int:
    return 1 if any(check.status == FAIL for check in checks) else 0


def human_size(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"  # pragma: no cover - the loop always returns


def age(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``."""
    seconds = max(0.0, seconds)
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{int(seconds // span)}{unit}"
    return f"{int(seconds)}s"


# --------------------------------------------------------------------------- environment


def check_python(ctx: Context) -> list[Check]:
    version = ".".join(str(part) for part in sys.version_info[:3])
    if sys.version_info[:2] < MIN_PYTHON:
        return [
            Check(
                "environment",
                "python",
                FAIL,
                f"Python {version} is too old (ctxmode needs 3.10 or newer)",
                "reinstall with a newer interpreter: CTXMODE_PYTHON=/path/to/python3.12 ./install.sh",
            )
        ]
    return [Check("environment", "python", OK, f"Python {version} at {ctx.python}")]


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def check_package(ctx: Context) -> list[Check]:
    deps = []
    missing = []
    for name in ("click", "orjson", "platformdirs"):
        found = _dist_version(name)
        if found is None:
            missing.append(name)
        else:
            deps.append(f"{name} {found}")
    summary = f"ctxmode {ctxmode.__version__} in {ctx.package_dir}"
    if deps:
        summary += f" ({', '.join(deps)})"
    hooks_dir = os.path.join(ctx.package_dir, "hooks")
    shims = [
        name + ".py"
        for name in settings.SHIMS.values()
        if not os.path.isfile(os.path.join(hooks_dir, name + ".py"))
    ]
    if shims:
        return [
            Check(
                "environment",
                "package",
                FAIL,
                f"hook scripts missing from {hooks_dir}: {', '.join(shims)}",
                "reinstall ctxmode: ./install.sh (or pip install --force-reinstall ctxmode)",
            )
        ]
    if missing:
        return [
            Check(
                "environment",
                "package",
                WARN,
                f"{summary}; not installed as a distribution: {', '.join(missing)}",
                "install ctxmode with pip or ./install.sh so its dependencies are pinned",
            )
        ]
    return [Check("environment", "package", OK, summary)]


def fts5_status() -> tuple[bool, str]:
    """Whether this SQLite builds the trigram FTS5 index, and why not if it cannot."""
    import sqlite3

    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE t USING fts5(data, tokenize='trigram')")
    except sqlite3.OperationalError as exc:
        return False, str(exc)
    finally:
        conn.close()
    return True, "trigram"


def check_sqlite(ctx: Context) -> list[Check]:
    import sqlite3

    version = sqlite3.sqlite_version
    available, why = fts5_status()
    if ctx.env.get("CTXMODE_NO_FTS", "") not in ("", "0"):
        return [
            Check(
                "environment",
                "sqlite",
                WARN,
                f"SQLite {version}; FTS5 turned off by CTXMODE_NO_FTS: new stores search with LIKE",
                "unset CTXMODE_NO_FTS (it exists for tests)",
            )
        ]
    if not available:
        return [
            Check(
                "environment",
                "sqlite",
                WARN,
                f"SQLite {version} without FTS5 trigram ({why}): search falls back to LIKE",
                "use a Python built against SQLite 3.34+ with FTS5 (python.org, uv, pyenv builds)",
            )
        ]
    return [Check("environment", "sqlite", OK, f"SQLite {version} with FTS5 (trigram)")]


# --------------------------------------------------------------------------- data root


def _mode(path: str) -> int | None:
    try:
        return stat.S_IMODE(os.lstat(path).st_mode)
    except OSError:
        return None


def _private_problems(root: str) -> list[str]:
    """Folders not 0700 and files not 0600 among the data ctxmode writes."""
    problems = []
    for folder in (root, *(os.path.join(root, sub) for sub in ("sessions", "logs", "spool"))):
        mode = _mode(folder)
        if mode is None:
            continue
        if mode & 0o077:
            problems.append(f"{folder} is {mode:04o} (expected 0700)")
        if folder == root:
            continue
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        for name in names:
            path = os.path.join(folder, name)
            file_mode = _mode(path)
            if file_mode is None or not stat.S_ISREG(os.lstat(path).st_mode):
                continue
            if file_mode & 0o077:
                problems.append(f"{path} is {file_mode:04o} (expected 0600)")
    return problems


def store_files(root: str) -> list[str]:
    """Every store database under ``<root>/sessions`` (``*.db``), sorted."""
    folder = os.path.join(root, "sessions")
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(os.path.join(folder, name) for name in names if name.endswith(".db"))


def file_size(path: str) -> int:
    """A store's size on disk, with its ``-wal``."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.path.getsize(path + suffix)
    return total


ROOT_SOURCES = {
    paths.ROOT_FROM_ENV: "set by CTXMODE_HOME",
    paths.ROOT_FROM_INSTALL: "recorded by install.sh in the installed environment",
    paths.ROOT_FROM_POINTER: "named by the pointer install.sh left at {pointer}",
    paths.ROOT_FROM_DEFAULT: "the platform default",
}


def unsafe_paths(root: str) -> list[str]:
    """Why the hooks refuse to use this root: links and paths of another user.

    Loose modes are not listed here: the next hook tightens those (see
    :func:`paths.private_problem`); ``_private_problems`` reports them.
    """
    candidates = [
        root,
        *(os.path.join(root, sub) for sub in ("sessions", "spool", "logs")),
        os.path.join(root, "logs", hooklog.LOG_NAME),
    ]
    for sub in ("sessions", "spool"):
        folder = os.path.join(root, sub)
        with contextlib.suppress(OSError):
            if not os.path.islink(folder):
                candidates.extend(os.path.join(folder, name) for name in sorted(os.listdir(folder)))
    problems = []
    for path in candidates:
        problem = paths.private_problem(path, tighten=False)
        if problem and "open to others" not in problem:
            problems.append(problem)
    return problems


def check_data_root(ctx: Context) -> list[Check]:
    root, source = paths.resolve_root(ctx.env)
    pointer = os.path.join(paths.pointer_dir(ctx.env), paths.ROOT_MARKER)
    origin = ROOT_SOURCES[source].format(pointer=pointer)
    checks_first = [Check("data", "root from", OK, f"{root}: {origin}")]
    if source == paths.ROOT_FROM_ENV:
        # CTXMODE_HOME wins wherever it is set; a hook started without it (Claude Code
        # launched from elsewhere) falls back to the installed root.
        env = {k: v for k, v in ctx.env.items() if k != "CTXMODE_HOME"}
        fallback, fallback_source = paths.resolve_root(env)
        recorded = fallback_source in (paths.ROOT_FROM_INSTALL, paths.ROOT_FROM_POINTER)
        if recorded and os.path.normpath(fallback) != os.path.normpath(root):
            checks_first[0] = Check(
                "data",
                "root from",
                WARN,
                f"{root}: set by CTXMODE_HOME; processes without it use {fallback}",
                "set CTXMODE_HOME where Claude Code starts too, or re-run install.sh with it",
            )
    unsafe = unsafe_paths(root)
    if unsafe:
        return [
            *checks_first,
            Check(
                "data",
                "data root",
                FAIL,
                f"not used: the hooks record nothing while {unsafe[0]}",
                "make it a real folder of yours, e.g. set CTXMODE_HOME to the resolved path "
                "(realpath), or move the foreign or linked files away",
                tuple(unsafe),
            ),
        ]
    return checks_first + _check_data_root_folder(ctx, root)


def _check_data_root_folder(ctx: Context, root: str) -> list[Check]:
    if not os.path.exists(root):
        parent = os.path.dirname(root)
        while parent and not os.path.exists(parent):
            parent = os.path.dirname(parent)
        if parent and not os.access(parent, os.W_OK | os.X_OK):
            return [
                Check(
                    "data",
                    "data root",
                    FAIL,
                    f"{root} does not exist and {parent} is not writable: hooks cannot record",
                    f"create it: mkdir -p -m 700 {shlex.quote(root)}, or set CTXMODE_HOME",
                )
            ]
        return [
            Check(
                "data",
                "data root",
                OK,
                f"{root} does not exist yet; the first hook call creates it (0700)",
            )
        ]
    if not os.path.isdir(root):
        return [
            Check(
                "data",
                "data root",
                FAIL,
                f"{root} is not a directory",
                "move the file away, or set CTXMODE_HOME to a directory",
            )
        ]
    checks = []
    writable = all(
        os.access(folder, os.W_OK | os.X_OK)
        for folder in (root, os.path.join(root, "sessions"), os.path.join(root, "logs"))
        if os.path.isdir(folder)
    )
    stores = store_files(root)
    total = sum(file_size(path) for path in stores)
    summary = f"{root} ({len(stores)} store{'s' if len(stores) != 1 else ''}, {human_size(total)})"
    if not writable:
        checks.append(
            Check(
                "data",
                "data root",
                FAIL,
                f"{root} (or its sessions/logs folder) is not writable: hooks cannot record",
                f"chown -R $USER {shlex.quote(root)} && chmod -R u+rwX {shlex.quote(root)}",
            )
        )
    else:
        checks.append(Check("data", "data root", OK, summary))
    loose = _private_problems(root)
    if loose:
        checks.append(
            Check(
                "data",
                "permissions",
                WARN,
                f"{plural(len(loose), 'path')} readable by others: session records can hold code "
                "and prompts",
                f"chmod 700 on the folders and 600 on the files (e.g. chmod -R go-rwx "
                f"{shlex.quote(root)})",
                tuple(loose),
            )
        )
    else:
        checks.append(Check("data", "permissions", OK, "folders 0700, files 0600"))
    return checks


# --------------------------------------------------------------------------- config


def check_config(ctx: Context) -> list[Check]:
    rows = config.explain(ctx.env, ctx.project_dir)
    files = [config.global_path(ctx.env), config.project_path(ctx.project_dir)]
    problems: list[str] = []
    broken: list[str] = []
    for path in files:
        try:
            config.read_file(path)
        except config.ConfigError as exc:
            broken.append(str(exc))
            continue
        for key in config.unknown_keys(path):
            problems.append(f"unknown option {key!r} in {path} (ignored)")
    bad_regex: list[str] = []
    for row in rows:
        for problem in row["problems"]:
            (bad_regex if "regular expression" in problem else problems).append(
                f"{row['name']}: {problem}"
            )
    if bad_regex:
        return [
            Check(
                "config",
                "config",
                FAIL,
                "a redact pattern is not a valid regular expression: every hook call fails",
                "ctxmode config set redact_patterns '[...]' (or unset it)",
                tuple(bad_regex + broken + problems),
            )
        ]
    if broken or problems:
        return [
            Check(
                "config",
                "config",
                WARN,
                f"{plural(len(broken) + len(problems), 'problem')} in the configuration files",
                "ctxmode config list shows what is in effect; fix with ctxmode config set/unset",
                tuple(broken + problems),
            )
        ]
    changed = [
        f"{row['name']}={config.format_value(row['value'])}"
        for row in rows
        if row["source"] != "default"
    ]
    summary = (
        "defaults" if not changed else f"{plural(len(changed), 'option')} set: {', '.join(changed)}"
    )
    return [Check("config", "config", OK, summary)]


# --------------------------------------------------------------------------- settings files


def _home(env: Mapping[str, str]) -> str:
    home = env.get("HOME", "")
    return home if os.path.isabs(home) else os.path.expanduser("~")


def user_settings_path(env: Mapping[str, str]) -> str:
    """``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``."""
    configured = env.get("CLAUDE_CONFIG_DIR", "").strip()
    base = configured or os.path.join(_home(env), ".claude")
    if configured.startswith("~"):
        base = _home(env) + configured[1:]
    return os.path.join(os.path.abspath(base), "settings.json")


def settings_paths(ctx: Context) -> list[tuple[str, str]]:
    """(scope, path) of every settings file Claude Code merges for the project."""
    return [
        ("user", user_settings_path(ctx.env)),
        ("project", os.path.join(ctx.project_dir, ".claude", "settings.json")),
        ("local", os.path.join(ctx.project_dir, ".claude", "settings.local.json")),
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


def _display(path: str, env: Mapping[str, str]) -> str:
    home = _home(env)
    if home not in ("", "/") and path.startswith(home + os.sep):
        return "~" + path[len(home) :]
    return path


def _scope_flag(scope: str, project_dir: str) -> str:
    if scope in ("user", "managed"):
        return ""
    return f" --{scope} {shlex.quote(project_dir)}"


def launcher_path(env: Mapping[str, str]) -> str:
    """The per-user launcher a shared project file's commands run (``sh`` expands ``~``)."""
    return os.path.join(_home(env), ".local", "bin", "ctxmode-hook")


def launcher_problem(env: Mapping[str, str]) -> str | None:
    """Why the launcher cannot run ctxmode (then its hooks do nothing), else None."""
    from ctxmode import installer

    path = _display(launcher_path(env), env)
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


def check_hooks(ctx: Context) -> list[Check]:
    files = [read_settings(scope, path) for scope, path in settings_paths(ctx)]
    return hook_checks(files, ctx) + switch_checks(files, ctx)


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
                f'"env" ({_display(info.path, env)}): every hook does nothing'
            )
            fixes.append(f'remove CTXMODE_DISABLE from "env" in {_display(info.path, env)}')
    marker = os.path.join(ctx.project_dir, ".ctxmode-ignore")
    if os.path.exists(marker):
        found.append(f"{marker} switches ctxmode off for this project: nothing is recorded here")
        fixes.append(f"rm {shlex.quote(marker)} to record this project again")
    for info in files:
        if info.disable_all_hooks:
            found.append(
                f'{info.scope} settings set "disableAllHooks": true ({_display(info.path, env)}): '
                + (
                    "Claude Code runs no hook at all"
                    if info.scope == "managed"
                    else "Claude Code runs no hook but managed ones"
                )
            )
            fixes.append(
                "ask your administrator (managed settings)"
                if info.scope == "managed"
                else f'remove "disableAllHooks" from {_display(info.path, env)}'
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


def hook_checks(files: Sequence[SettingsFile], ctx: Context) -> list[Check]:
    """The registration checks over already-read settings files."""
    checks: list[Check] = []
    env = ctx.env
    for info in files:
        if info.error:
            checks.append(
                Check(
                    "hooks",
                    f"{info.scope} settings",
                    FAIL,
                    f"{_display(info.path, env)}: {info.error}",
                    "fix the file by hand (Claude Code ignores a malformed settings file)",
                )
            )
    registered = [(info, reg) for info in files for reg in info.registrations]
    plugin_keys = [(info, key) for info in files for key in info.plugins]

    # A shared project file runs this user's launcher: without a working one those
    # hooks do nothing here (by design: a teammate without ctxmode sees no error).
    via_launcher = [(info, reg) for info, reg in registered if settings.runs_launcher(reg.command)]
    problem = launcher_problem(env) if via_launcher else None
    if problem:
        registered = [item for item in registered if item not in via_launcher]
        scopes = dict.fromkeys(info.scope for info, _ in via_launcher)
        fix = "; ".join(
            f"ctxmode install{_scope_flag(scope, ctx.project_dir)} (writes your launcher)"
            for scope in scopes
        )
        # With another registration of the user's own, that is as it should be: the
        # shared hooks stay quiet and nothing runs twice.
        active = bool(registered or plugin_keys)
        checks.append(
            Check(
                "hooks",
                "launcher",
                OK if active else FAIL,
                f"{' and '.join(scopes)} settings run ctxmode through the per-user launcher, "
                f"but {problem}: those hooks do nothing for you"
                + ("; your own registration records instead" if active else ""),
                fix,
            )
        )
        if not active:
            return checks + other_tool_checks(files, ctx)

    # Where the hooks come from.
    details = []
    for info in files:
        if info.registrations:
            events = ", ".join(dict.fromkeys(reg.event for reg in info.registrations))
            details.append(f"{info.scope}: {_display(info.path, env)}: {events}")
        for key in info.plugins:
            details.append(f"{info.scope}: {_display(info.path, env)}: plugin {key} enabled")
    if not registered and not plugin_keys:
        checks.append(
            Check(
                "hooks",
                "registration",
                FAIL,
                "ctxmode's hooks are not registered in any settings file: nothing is recorded",
                "ctxmode install (user scope), or ctxmode install --project DIR",
                tuple(
                    f"{info.scope}: {_display(info.path, env)}"
                    + ("" if info.exists else " (no file)")
                    for info in files
                    if info.exists or info.scope != "managed"  # rarely there: say so only then
                ),
            )
        )
        return checks + other_tool_checks(files, ctx)

    # Stale interpreter or script paths.
    stale = [(info, reg, stale_paths(reg, env)) for info, reg in registered]
    stale = [item for item in stale if item[2]]
    if stale:
        scopes = dict.fromkeys(info.scope for info, _, _ in stale)
        fixes = "; ".join(f"ctxmode install{_scope_flag(s, ctx.project_dir)}" for s in scopes)
        checks.append(
            Check(
                "hooks",
                "stale paths",
                FAIL,
                f"{plural(len(stale), 'registered hook')} "
                f"{'runs' if len(stale) == 1 else 'run'} something that does not exist: "
                "they fail on every call",
                f"{fixes} (replaces ctxmode's old entries in place)",
                tuple(
                    f"{info.scope} {reg.event}: missing {' and '.join(what)}"
                    for info, reg, what in stale
                ),
            )
        )

    # Missing events (over all scopes, as Claude Code merges them; the plugin has all).
    present = {reg.event for _, reg in registered}
    missing = [event for event in settings.SHIMS if event not in present]
    if missing and not plugin_keys:
        core = [event for event in missing if event in CORE_EVENTS]
        checks.append(
            Check(
                "hooks",
                "events",
                FAIL if core else WARN,
                f"no ctxmode hook for {', '.join(missing)}"
                + (": nothing is recorded or injected there" if core else ""),
                "ctxmode install (it registers all six events)",
            )
        )
    else:
        checks.append(
            Check(
                "hooks",
                "registration",
                OK,
                "all six events registered"
                + (
                    f" in {plural(len({info.scope for info, _ in registered}), 'file')}"
                    if registered
                    else " by the plugin"
                ),
                details=tuple(details),
            )
        )

    # SessionStart must fire on "compact" (that is when the resume is injected).
    for info, reg in registered:
        if reg.event == "SessionStart" and not matcher_matches(reg.matcher, "compact"):
            checks.append(
                Check(
                    "hooks",
                    "compact matcher",
                    FAIL,
                    f"{info.scope} SessionStart matcher {reg.matcher!r} leaves out 'compact': "
                    "the snapshot is never injected after compaction",
                    f"ctxmode install{_scope_flag(info.scope, ctx.project_dir)} "
                    "(matcher startup|resume|clear|compact|fork)",
                )
            )
        if reg.event in ("PostToolUse", "PostToolUseFailure") and reg.matcher not in (
            None,
            "",
            "*",
        ):
            checks.append(
                Check(
                    "hooks",
                    "tool matcher",
                    WARN,
                    f"{info.scope} {reg.event} matcher {reg.matcher!r}: only those tools are "
                    "recorded",
                    f"ctxmode install{_scope_flag(info.scope, ctx.project_dir)} (matches every tool)",
                )
            )

    # The same event registered more than once with different commands: both run.
    by_event: dict[str, list[tuple[SettingsFile, Registration]]] = {}
    for info, reg in registered:
        by_event.setdefault(reg.event, []).append((info, reg))
    doubled = []
    for event, regs in by_event.items():
        commands = {reg.command for _, reg in regs}
        if len(regs) > 1 and (len(commands) > 1 or len({i.scope for i, _ in regs}) < len(regs)):
            where = ", ".join(f"{info.scope}" for info, _ in regs)
            doubled.append(f"{event}: {len(regs)} handlers ({where})")
    if doubled:
        checks.append(
            Check(
                "hooks",
                "duplicates",
                WARN,
                f"{plural(len(doubled), 'event')} {'has' if len(doubled) == 1 else 'have'} "
                "more than one ctxmode handler: each runs",
                "keep one scope: ctxmode uninstall --project DIR / --local DIR (or --user)",
                tuple(doubled),
            )
        )
    if plugin_keys and registered:
        keys = ", ".join(sorted({key for _, key in plugin_keys}))
        checks.append(
            Check(
                "hooks",
                "plugin",
                WARN,
                f"the ctxmode plugin ({keys}) is enabled and settings register the hooks too: "
                "every hook runs twice",
                "keep one: disable the plugin in Claude Code's /plugin menu, or ctxmode uninstall",
            )
        )
    return checks + other_tool_checks(files, ctx)


def _memory_marker(text: str) -> str | None:
    lowered = text.lower()
    return next((marker for marker in OTHER_MEMORY_MARKERS if marker in lowered), None)


def other_tool_checks(files: Sequence[SettingsFile], ctx: Context) -> list[Check]:
    """Another memory tool hooked on the events ctxmode uses (or enabled as a plugin)."""
    found = []
    for info in files:
        for event, command in info.foreign:
            if event in settings.SHIMS and _memory_marker(command):
                found.append(f"{info.scope} {event}: {command[:120]}")
        for key in info.other_plugins:
            if _memory_marker(key.split("@", 1)[0]):
                found.append(f"{info.scope}: plugin {key} enabled")
    if not found:
        return []
    return [
        Check(
            "hooks",
            "other memory tools",
            WARN,
            f"{plural(len(found), 'hook')} of another memory tool on ctxmode's events: the model may "
            "get two competing resumes",
            "keep one memory tool per project (remove the other's hooks or disable its plugin)",
            tuple(found),
        )
    ]


# --------------------------------------------------------------------------- store


def _corrupt_leftovers(store_path: str) -> list[str]:
    folder, name = os.path.split(store_path)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    prefix = name + ".corrupt-"
    return sorted(
        os.path.join(folder, n)
        for n in names
        if n.startswith(prefix) and not n.endswith(("-wal", "-shm"))
    )


def check_store(ctx: Context) -> list[Check]:
    from ctxmode.migrations import SCHEMA_VERSION
    from ctxmode.store import Store, StoreCorrupt, StoreError, StoreTooNew, parse_iso

    path = ctx.store_path
    checks: list[Check] = []
    leftovers = _corrupt_leftovers(path)
    if leftovers:
        checks.append(
            Check(
                "store",
                "moved aside",
                WARN,
                f"{plural(len(leftovers), 'corrupt store')} of this project "
                f"{'was' if len(leftovers) == 1 else 'were'} moved aside "
                f"({human_size(sum(file_size(p) for p in leftovers))})",
                "nothing was lost from the current store; delete them once you no longer need "
                "them: rm " + " ".join(shlex.quote(p) + "*" for p in leftovers),
                tuple(leftovers),
            )
        )
    if not os.path.exists(path):
        checks.insert(
            0,
            Check(
                "store",
                "store",
                OK,
                f"no store yet for {ctx.project_dir} (nothing recorded here so far)",
            ),
        )
        return checks
    try:
        store = Store.open(path, readonly=True)
    except StoreTooNew as exc:
        return [
            Check("store", "store", FAIL, f"{exc}", "upgrade ctxmode: ./install.sh"),
            *checks,
        ]
    except StoreCorrupt as exc:
        return [
            Check(
                "store",
                "store",
                FAIL,
                f"{path} is corrupt: {exc}",
                "the next hook call moves it aside and starts afresh; or ctxmode purge --project",
            ),
            *checks,
        ]
    except StoreError as exc:
        if "predates" in str(exc):  # an older schema: harmless, migrated on next use
            return [
                Check("store", "store", WARN, str(exc), "the next hook call migrates it"),
                *checks,
            ]
        return [
            Check(
                "store",
                "store",
                FAIL,
                f"{path} cannot be opened: {exc}",
                "check the file's owner and permissions (chmod 600, owned by you)",
            ),
            *checks,
        ]
    try:
        version = store.schema_version()
        sessions = store.sessions()
        resumes = store.resumes()
        fts = store.fts_enabled()
        incidents = store.incidents()
        # A read-only connection cannot run FTS5's integrity-check command: a current
        # store is checked through a plain read-write open (which changes nothing).
        integrity = store.integrity_check() if version != SCHEMA_VERSION else _integrity(path)
    except StoreError as exc:
        return [
            Check(
                "store",
                "store",
                FAIL,
                f"{path} cannot be read: {exc}",
                "the next hook call moves a corrupt store aside and starts afresh; "
                "or ctxmode purge --project",
            ),
            *checks,
        ]
    finally:
        store.close()
    events = sum(int(row.get("event_count") or 0) for row in sessions)
    last = max((str(row.get("last_event_at") or "") for row in sessions), default="")
    unclaimed = [row for row in resumes if not row.get("consumed")]
    size = file_size(path)
    last_text = f"last event {age(ctx.now - parse_iso(last))} ago" if last else "no events"
    summary = (
        f"schema {version}, {human_size(size)}, {plural(len(sessions), 'session')}, "
        f"{plural(events, 'event')}, {last_text}, {plural(len(unclaimed), 'unclaimed snapshot')}"
        + ("" if fts else ", search without FTS5")
    )
    details = [f"path: {path}", f"project: {ctx.project_dir}"]
    if integrity != "ok":
        checks.insert(
            0,
            Check(
                "store",
                "store",
                FAIL,
                f"integrity check failed: {integrity.splitlines()[0]}",
                "ctxmode purge --project (the next hook call then starts a fresh store)",
                tuple(details + integrity.splitlines()[:10]),
            ),
        )
    elif version != SCHEMA_VERSION:
        checks.insert(
            0,
            Check(
                "store",
                "store",
                WARN,
                f"{summary} (this ctxmode writes {SCHEMA_VERSION})",
                "the next hook call migrates it",
                tuple(details),
            ),
        )
    else:
        checks.insert(
            0, Check("store", "store", OK, summary + "; integrity ok", details=tuple(details))
        )
    stale = [
        row
        for row in unclaimed
        if row.get("kind") == "compact"
        and ctx.now - parse_iso(str(row.get("created_at") or "")) > STALE_COMPACT_SECONDS
    ]
    if stale:
        checks.append(
            Check(
                "store",
                "snapshots",
                WARN,
                f"{plural(len(stale), 'compaction snapshot')} "
                f"{'was' if len(stale) == 1 else 'were'} never injected (SessionStart compact "
                "did not run, or its output was dropped)",
                "check that SessionStart is registered with the 'compact' matcher; "
                "ctxmode show-snapshot shows them",
                tuple(f"session {row['session_id']} #{row['compact_seq']}" for row in stale),
            )
        )
    if incidents:
        checks.append(
            Check(
                "store",
                "incidents",
                WARN,
                f"{plural(len(incidents), 'incident')} recorded, newest: {incidents[-1][1]}",
                "the store was rebuilt; delete the moved-aside files when no longer needed",
                tuple(text for _, text in incidents[-5:]),
            )
        )
    spool = os.path.join(ctx.root, "spool", os.path.splitext(os.path.basename(path))[0] + ".jsonl")
    if os.path.exists(spool):
        checks.append(
            Check(
                "store",
                "spool",
                WARN,
                f"{human_size(os.path.getsize(spool))} of events wait in {spool} (the store was "
                "locked); the next hook call stores them",
                "nothing to do unless it keeps growing: then look for a process holding the store",
            )
        )
    return checks


def _integrity(path: str) -> str:
    from ctxmode.store import Store, StoreError

    try:
        with Store.open(path) as store:
            return store.integrity_check()
    except StoreError as exc:
        return str(exc)


# --------------------------------------------------------------------------- log


def check_log(ctx: Context) -> list[Check]:
    from ctxmode.store import parse_iso

    log_dir = paths.log_dir(ctx.env)
    log_path = os.path.join(log_dir, hooklog.LOG_NAME)
    records = [
        record
        for record in hooklog.read_records(log_dir, limit=100_000)
        if record["level"] in ("ERROR", "WARN")
        and ctx.now - parse_iso(record["time"]) <= LOG_WINDOW_SECONDS
    ]
    if not records:
        return [Check("log", "hook log", OK, "no errors or warnings in the last 24 h")]
    errors = [r for r in records if r["level"] == "ERROR"]
    warnings = len(records) - len(errors)
    newest = records[-1]
    newest_age = ctx.now - parse_iso(newest["time"])
    status = WARN
    if errors and ctx.now - parse_iso(errors[-1]["time"]) <= LOG_FRESH_SECONDS:
        status = FAIL
    counts = []
    if errors:
        counts.append(plural(len(errors), "error"))
    if warnings:
        counts.append(plural(warnings, "warning"))
    return [
        Check(
            "log",
            "hook log",
            status,
            f"{' and '.join(counts)} in the last 24 h; newest {age(newest_age)} ago: "
            f"{newest['level']} {newest['event']}: {newest['message'][:160]}",
            f"read {log_path} (tracebacks are indented under each record)",
            tuple(
                f"{r['time']} {r['level']} {r['event']}: {r['message'][:200]}" for r in records[-5:]
            ),
        )
    ]
