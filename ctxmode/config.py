"""User configuration: defaults, a global JSON file, and a per-project override.

JSON rather than TOML because the hooks read it on every call and ``tomllib``
costs ~20 ms to import, ``_json`` nothing. Files, later ones winning:

1. ``<config dir>/config.json`` — ``$CTXMODE_HOME/config.json`` when CTXMODE_HOME is
   set, else platformdirs' user config dir for "ctxmode" (``~/.config/ctxmode`` on Linux);
2. ``<project>/.claude/ctxmode.json`` — per-project settings.

Unknown keys are ignored and values of the wrong type fall back to the default, so a
typo in a config file can never break a hook.
"""

from __future__ import annotations

import os
import sys

from ctxmode import fastjson, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

# name -> (default, help). The README's configuration table is generated from this.
OPTIONS: dict[str, tuple[Any, str]] = {
    "snapshot_budget": (4096, "Byte budget of the <session_resume> snapshot (1024-9000)."),
    "inject_on_startup": (
        False,
        "At a fresh `claude` start, inject the newest unclaimed snapshot of another session.",
    ),
    "inject_on_clear": (
        False,
        "After /clear, inject the newest unclaimed snapshot of another session "
        "(never the cleared one).",
    ),
    "startup_max_age_hours": (24, "Oldest snapshot age that startup/clear injection accepts."),
    "max_events_per_session": (1000, "Per-session event cap; least important evicted first."),
    "retention_days": (30, "Sessions idle for longer are removed (bounded work at startup)."),
    "exclude_paths": ([], "Glob patterns of file paths never recorded (e.g. 'secrets/**')."),
    "redact_patterns": ([], "Extra regular expressions masked as [REDACTED:custom]."),
}

GLOBAL_FILE = "config.json"
PROJECT_FILE = os.path.join(".claude", "ctxmode.json")


def config_dir(env: Mapping[str, str]) -> str:
    """Where the global config file lives.

    In the data root whenever the root was chosen (``CTXMODE_HOME``, or the root an
    installation recorded): the hooks and the CLI then read one file whatever the
    environment of each. Otherwise platformdirs' user config dir, mirrored here
    without importing it.
    """
    root, source = paths.resolve_root(env)
    if source != paths.ROOT_FROM_DEFAULT:
        return root
    if sys.platform == "win32":
        base = env.get("LOCALAPPDATA") or os.path.expanduser("~\\AppData\\Local")
        return os.path.join(base, "ctxmode", "ctxmode")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Application Support/ctxmode")
    base = env.get("XDG_CONFIG_HOME", "").strip() or os.path.expanduser("~/.config")
    return os.path.join(base, "ctxmode")


def _read_json_object(path: str) -> dict[str, Any]:
    # Non-blocking and regular files only: a FIFO or device in place of a config file
    # must not hang a hook until its watchdog fires.
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return {}
    try:
        if (os.fstat(fd).st_mode & 0o170000) != 0o100000:  # not S_IFREG
            return {}
        data = os.read(fd, 1_000_000)
    except OSError:
        return {}
    finally:
        os.close(fd)
    try:
        value = fastjson.loads(data)
    except fastjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _valid(name: str, value: Any) -> bool:
    default = OPTIONS[name][0]
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if isinstance(default, list):
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return False


def load(env: Mapping[str, str], project_dir: str | None = None) -> dict[str, Any]:
    """The effective configuration: defaults, then the global file, then the project's."""
    result = {name: spec[0] for name, spec in OPTIONS.items()}
    sources = [os.path.join(config_dir(env), GLOBAL_FILE)]
    if project_dir:
        sources.append(os.path.join(project_dir, PROJECT_FILE))
    for path in sources:
        for name, value in _read_json_object(path).items():
            if name in OPTIONS and _valid(name, value):
                result[name] = value
    return result


# --------------------------------------------------------------------------- editing
# Used by ``ctxmode config`` and ``ctxmode doctor`` only: every import below stays inside
# its function, so the hooks (which only call ``load``) never pay for them.

# Inclusive bounds of the integer options (``None``: unbounded). A retention or cap of
# zero would delete everything, so those start at 1.
LIMITS: dict[str, tuple[int, int | None]] = {
    "snapshot_budget": (1024, 9000),
    "startup_max_age_hours": (0, None),
    "max_events_per_session": (1, None),
    "retention_days": (1, None),
}

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


class ConfigError(ValueError):
    """A configuration value or file that ctxmode refuses; the message says why."""


def global_path(env: Mapping[str, str]) -> str:
    """The global config file: ``<config dir>/config.json``."""
    return os.path.join(config_dir(env), GLOBAL_FILE)


def project_path(project_dir: str) -> str:
    """The per-project config file: ``<project>/.claude/ctxmode.json``."""
    return os.path.join(project_dir, PROJECT_FILE)


def kind(name: str) -> str:
    """``bool``, ``int`` or ``list``: how the option's values are parsed."""
    default = OPTIONS[name][0]
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    return "list"


def _unknown(name: str) -> ConfigError:
    import difflib

    close = difflib.get_close_matches(name, OPTIONS, n=1)
    hint = f" (did you mean {close[0]}?)" if close else ""
    return ConfigError(f"unknown option {name!r}{hint}; valid options: {', '.join(OPTIONS)}")


def check_name(name: str) -> None:
    if name not in OPTIONS:
        raise _unknown(name)


def check_value(name: str, value: Any) -> Any:
    """``value`` if it is valid for ``name``, else :class:`ConfigError` saying why."""
    check_name(name)
    expected = kind(name)
    if not _valid(name, value) and not (expected == "int" and _is_int(value)):
        described = {"bool": "true or false", "int": "a whole number", "list": "a list of strings"}
        raise ConfigError(f"{name} must be {described[expected]}, not {format_value(value)}")
    if expected == "int":
        low, high = LIMITS.get(name, (0, None))
        if value < low or (high is not None and value > high):
            bound = f"{low}-{high}" if high is not None else f"at least {low}"
            raise ConfigError(f"{name} must be {bound}, not {value}")
    if name == "redact_patterns":
        import re

        for pattern in value:
            try:
                re.compile(pattern)
            except re.error as exc:
                # A hook would fail on every call with it: refuse it here.
                raise ConfigError(
                    f"redact_patterns: {pattern!r} is not a valid regular expression ({exc})"
                ) from None
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_value(name: str, text: str) -> Any:
    """The value of ``name`` written on a command line: ``true``/``no``/``1``, ``4096``,
    ``a,b`` or a JSON array ``["a, b", "c"]``."""
    check_name(name)
    expected = kind(name)
    raw = text.strip()
    if expected == "bool":
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ConfigError(f"{name} takes true/false (or yes/no, on/off, 1/0), not {text!r}")
    if expected == "int":
        try:
            number = int(raw.replace("_", ""))
        except ValueError:
            raise ConfigError(f"{name} takes a whole number, not {text!r}") from None
        return check_value(name, number)
    if raw.startswith("["):
        try:
            items = fastjson.loads(raw)
        except fastjson.JSONDecodeError as exc:
            raise ConfigError(f"{name}: not a JSON array of strings ({exc})") from None
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ConfigError(f"{name}: a JSON array must hold only strings")
    else:
        items = [part.strip() for part in raw.split(",") if part.strip()]
    return check_value(name, items)


def format_value(value: Any) -> str:
    """A value as ``config get`` prints it and ``config set`` accepts it back."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return fastjson.dumps(value)
    if isinstance(value, str):
        return fastjson.dumps(value)
    return str(value)


def read_file(path: str) -> dict[str, Any]:
    """A config file's object ({} when missing); :class:`ConfigError` when it is not one.

    Strict where :func:`_read_json_object` is lenient: before a file is rewritten, a
    malformed one must be reported, never silently replaced.
    """
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    if not data.strip():
        return {}
    import json

    try:
        value = json.loads(data)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: line {exc.lineno}, column {exc.colno}: invalid JSON ({exc.msg}); "
            "fix or delete it"
        ) from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; fix or delete it") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: the top level is not a JSON object; fix or delete it")
    return value


def save(path: str, values: Mapping[str, Any]) -> None:
    """Write ``values`` as pretty JSON, atomically (temp file + rename), keeping the mode.

    :class:`ConfigError` when the file or its folder cannot be written (a read-only or
    virtual file system, a file where a folder should be, no permission).
    """
    try:
        _write_atomically(path, values)
    except OSError as exc:
        raise ConfigError(f"cannot write {path}: {_write_failure(path, exc)}") from None


def _write_failure(path: str, exc: OSError) -> str:
    """What failed: the folder, the temp file beside ``path``, or ``path`` itself."""
    reason = exc.strerror or exc.__class__.__name__
    where = exc.filename if isinstance(exc.filename, str) else None
    if where and os.path.basename(where).startswith("." + os.path.basename(path) + "."):
        # The temp file: a folder that takes no new files (/proc, read-only, no permission).
        return f"no new file can be made in {os.path.dirname(where)} ({reason})"
    if where and where != path:
        return f"cannot create {where} ({reason})"
    return reason


def _write_atomically(path: str, values: Mapping[str, Any]) -> None:
    import json
    import tempfile

    folder = os.path.dirname(path) or "."
    # The global file (and its folder) is the user's alone; the project file is the
    # team's and keeps whatever mode it has.
    private = os.path.basename(path) == GLOBAL_FILE
    if private:
        paths.ensure_dir(folder)
    else:
        os.makedirs(folder, exist_ok=True)
    try:
        mode: int | None = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = None
    if private:
        mode = 0o600
    text = json.dumps(dict(values), indent=2, ensure_ascii=False) + "\n"
    fd, temp = tempfile.mkstemp(
        dir=folder, prefix="." + os.path.basename(path) + ".", suffix=".tmp"
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is None:
            mask = os.umask(0)
            os.umask(mask)
            mode = 0o666 & ~mask
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:  # noqa: SIM105 - the error in flight matters more
            os.unlink(temp)
        except OSError:
            pass
        raise


def set_value(path: str, name: str, value: Any) -> dict[str, Any]:
    """Set ``name`` in the file at ``path`` (other keys kept as they are); return the file.
    A file (and folders) this makes are noted in the ledger, for :func:`unset_value`."""
    values = read_file(path)
    values[name] = check_value(name, value)
    if not os.path.lexists(path):
        from ctxmode.config_files import Ledger

        ledger = Ledger.load()
        ledger.before_write(os.path.realpath(path), None, ours_before=False)
        ledger.try_save()  # without the note, unset leaves the emptied file: no harm done
    save(path, values)
    return values


def unset_value(path: str, name: str) -> bool:
    """Remove ``name`` from the file at ``path``; True if it was there. A file left
    empty goes, with its emptied folders, when :func:`set_value` created them (never a
    file the user had: the ledger in the data root says which)."""
    check_name(name)
    values = read_file(path)
    if name not in values:
        return False
    del values[name]
    if not values:
        from ctxmode.config_files import Ledger

        ledger = Ledger.load()
        target = os.path.realpath(path)
        if ledger.created(target, unknown=False):
            try:
                os.unlink(target)
            except OSError as exc:
                raise ConfigError(f"cannot remove {path}: {exc.strerror}") from None
            ledger.forget(target)
            ledger.remove_created_dirs(os.path.dirname(target))
            ledger.try_save()
            return True
    save(path, values)
    return True


def explain(env: Mapping[str, str], project_dir: str | None = None) -> list[dict[str, Any]]:
    """Each option: effective value (as :func:`load` computes it), default, source, help.

    ``source`` is ``default``, ``global`` or ``project`` (``path`` names the file).
    ``problems`` lists file entries that are wrong: ignored by the hooks (wrong type) or
    used but refused by ``config set`` (out of range, a regular expression that fails).
    """
    layers = [("global", global_path(env))]
    if project_dir:
        layers.append(("project", project_path(project_dir)))
    contents = [(layer, path, _read_json_object(path)) for layer, path in layers]
    rows = []
    for name, (default, help_text) in OPTIONS.items():
        row: dict[str, Any] = {
            "name": name,
            "value": default,
            "default": default,
            "source": "default",
            "path": None,
            "help": help_text,
            "problems": [],
        }
        for layer, path, values in contents:
            if name not in values:
                continue
            value = values[name]
            if not _valid(name, value):
                row["problems"].append(
                    f"{layer} value {format_value(value)} ignored: the hooks expect "
                    f"{kind(name)} ({path})"
                )
                continue
            row.update(value=value, source=layer, path=path)
            try:
                check_value(name, value)
            except ConfigError as exc:
                row["problems"].append(f"{exc} ({path})")
        rows.append(row)
    return rows


def unknown_keys(path: str) -> list[str]:
    """Keys of a config file that are not options (typos the hooks silently ignore)."""
    return [key for key in _read_json_object(path) if key not in OPTIONS]
