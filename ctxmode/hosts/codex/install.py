"""Installing ctxmode's hooks for the Codex CLI: its hooks.json and the trust entries.

Codex reads hooks from ``hooks.json`` beside each config layer (user: ``$CODEX_HOME`` or
``~/.codex``; project: ``DIR/.codex``), in Claude Code's shape, so ``ctxmode.settings``
merges and removes ctxmode's handlers there with the same byte-preserving edits. But
Codex runs a hook only if the *user's* ``config.toml`` trusts it:

    [hooks.state."<absolute path of hooks.json>:<event label>:<group>:<handler>"]
    trusted_hash = "sha256:<hex of the handler's canonical JSON>"

without which it skips the hook in silence (``codex exec``) or asks first (the TUI). So
install writes both, and the trust entries go in one block between two marker lines at
the end of config.toml, which uninstall cuts out byte for byte (keeping what Codex itself
added inside it: it writes a new table, e.g. a project's trust, before our end line).
A project's ``.codex/hooks.json`` runs only in a project Codex trusts, which is the user's
call (``project_trust``, ``project_notes``). The block's first line
records what install added to config.toml besides it (the file itself if it made it, a
final newline), so that uninstall restores exactly what was there; which hooks.json files
install made, and their bytes before, are in the ledger of the data root
(:class:`ctxmode.config_files.Ledger`: a hooks.json per scope, one config.toml). Every install rewrites the block from the
hooks.json it just wrote: the hashes follow a changed command (a hook whose hash no
longer matches is "modified" to Codex, and does not run).

CLI-only (``ctxmode install --host codex``, ``doctor``): never imported by a hook.
Long on purpose (~600 lines): hooks.json and config.toml's trust block change together, so
both edits, their exact inverses and what the CLI says of them are in one place.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import ctxmode
from ctxmode import settings
from ctxmode.config_files import InstallError, Ledger, Report, UsageError, display_path
from ctxmode.config_files import read_text as _read
from ctxmode.config_files import unified_diff as _diff
from ctxmode.config_files import write_keeping_mode as _write
from ctxmode.hosts import codex, json_settings, settings_cli
from ctxmode.settings import HookSpec, SettingsError

SCOPES = json_settings.SCOPES
# What ``ctxmode install --help`` says of this host (after its --host name).
HELP = (
    "the Codex CLI (~/.codex/hooks.json and the trust entries of ~/.codex/config.toml; "
    "--user or --project DIR)"
)
HOST_ARGUMENT = "--host codex"
BEGIN = "# >>> ctxmode: trusted hooks (written by `ctxmode install --host codex`; do not edit)"
END = "# <<< ctxmode: trusted hooks"
# What install added besides the block, recorded on its first line: "made=config.toml"
# (the file it created), "newline" (a final newline it added); "made=hooks.json" was
# written by versions before the ledger, and is still read for their installs.
_FLAG_OPEN = " ["
_FLAG_CLOSE = "] >>>"


# The Codex configuration cannot be changed safely; the message says why and where.
CodexConfigError = InstallError


@dataclass(frozen=True)
class CodexResult:
    """What install/uninstall did (or, with dry_run, would do) to Codex's two files."""

    scope: str
    hooks_path: str
    trust_path: str
    action: str  # installed, updated, unchanged, removed, not installed
    changed: bool
    dry_run: bool
    diff: str
    hooks: int  # ctxmode handlers in hooks.json afterwards
    trusted: int  # trust entries of ctxmode's handlers afterwards
    notes: tuple[str, ...] = ()


# --------------------------------------------------------------------------- paths


def codex_home(env: Mapping[str, str] | None = None) -> str:
    """Codex's user folder: ``$CODEX_HOME`` (resolved, as Codex does), else ``~/.codex``."""
    env = os.environ if env is None else env
    configured = env.get(codex.USER_DIR_ENV, "").strip()
    if configured:
        return os.path.realpath(os.path.expanduser(configured))
    return os.path.abspath(os.path.expanduser(codex.USER_DIR_DEFAULT))


def hooks_path(
    scope: str, project_dir: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    return json_settings.scoped_path(
        scope, project_dir, codex_home(env), codex.SETTINGS_FILES, "Codex"
    )


def trust_path(env: Mapping[str, str] | None = None) -> str:
    return os.path.join(codex_home(env), codex.TRUST_FILE)


# --------------------------------------------------------------------------- handlers


def hook_specs(python: str | None = None, package_dir: str | None = None) -> list[HookSpec]:
    """ctxmode's handlers for Codex: this interpreter on the package's shims, ``--host codex``."""
    return [
        HookSpec(
            event,
            json_settings.shim_command(settings.SHIMS[event], python, package_dir, HOST_ARGUMENT),
            timeout,
            matcher,
        )
        for event, timeout, matcher in codex.HOOKS
    ]


def _canonical(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    return value


def trusted_hash(event: str, handler: Mapping[str, Any], matcher: str | None = None) -> str:
    """The ``trusted_hash`` Codex computes for one handler of ``event`` (verified on 0.169.0).

    The identity is ``{"event_name": <label>, "hooks": [handler], "matcher"?}`` with the
    handler normalised (type, command as written, timeout — 600 by default, SessionEnd's
    clamped to 1..3 —, async, and statusMessage only when set), as canonical JSON.
    """
    label = codex.EVENT_LABELS[event]
    raw_timeout = handler.get("timeout")
    timeout = raw_timeout if isinstance(raw_timeout, int) and raw_timeout > 0 else None
    # SessionEnd runs at exit: Codex clamps its timeout to 1..3 s (default 1).
    timeout = min(max(timeout or 1, 1), 3) if event == "SessionEnd" else max(timeout or 600, 1)
    normal: dict[str, Any] = {
        "type": handler.get("type", "command"),
        "command": handler.get("command", ""),
        "timeout": timeout,
        "async": bool(handler.get("async", False)),
    }
    if handler.get("statusMessage") is not None:
        normal["statusMessage"] = handler["statusMessage"]
    ident: dict[str, Any] = {"event_name": label, "hooks": [normal]}
    if matcher is not None and event not in ("UserPromptSubmit", "Stop"):
        ident["matcher"] = matcher
    text = json.dumps(_canonical(ident), separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def trust_entries(hooks_file: str, hooks_text: str) -> list[tuple[str, str]]:
    """(state key, trusted_hash) of every ctxmode handler in a hooks.json text."""
    if not hooks_text.strip():
        return []
    doc = settings.parse(hooks_text, hooks_file)
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return []
    entries = []
    for event, groups in hooks.items():
        if event not in codex.EVENT_LABELS or not isinstance(groups, list):
            continue
        for g, group in enumerate(groups):
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            matcher = group.get("matcher") if isinstance(group.get("matcher"), str) else None
            for h, handler in enumerate(group["hooks"]):
                if isinstance(handler, dict) and settings.is_ctxmode_command(
                    handler.get("command")
                ):
                    key = f"{hooks_file}:{codex.EVENT_LABELS[event]}:{g}:{h}"
                    entries.append((key, trusted_hash(event, handler, matcher)))
    return entries


# --------------------------------------------------------------------------- config.toml


def _toml_key(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string is a JSON string


def _split_block(text: str) -> tuple[str, str, set[str]]:
    """(text before ctxmode's block, after it, the block's flags); no block: (text, "", ∅)."""
    start = text.find("\n" + BEGIN)
    start = 0 if text.startswith(BEGIN) else (start + 1 if start != -1 else -1)
    if start == -1:
        return text, "", set()
    end = text.find(END, start)
    if end == -1:
        raise CodexConfigError(
            "ctxmode's trust block in config.toml has no end line; remove the lines from "
            f"{BEGIN!r} down yourself and run this again"
        )
    end = text.find("\n", end)
    end = len(text) if end == -1 else end + 1
    first = text[start : text.find("\n", start)]
    flags: set[str] = set()
    if _FLAG_OPEN in first and first.endswith(_FLAG_CLOSE):
        inner = first[first.rindex(_FLAG_OPEN) + len(_FLAG_OPEN) : -len(_FLAG_CLOSE)]
        flags = {flag.strip() for flag in inner.split(",") if flag.strip()}
    return text[:start], text[end:], flags


def _toml() -> Any:
    """tomllib (Python 3.11+), else tomli if installed, else None (then no check)."""
    for name in ("tomllib", "tomli"):
        try:
            return __import__(name)
        except ImportError:
            continue
    return None


def _parse_toml(text: str, path: str) -> dict[str, Any]:
    toml = _toml()
    if toml is None:
        return {}
    try:
        doc = toml.loads(text)
    except toml.TOMLDecodeError as exc:
        raise CodexConfigError(
            f"{path} is not valid TOML ({exc}); fix it first — left untouched"
        ) from None
    return doc if isinstance(doc, dict) else {}


def _trusted_elsewhere(doc: dict[str, Any]) -> dict[str, Any]:
    hooks = doc.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    return state if isinstance(state, dict) else {}


def merge_trust(
    text: str, entries: Sequence[tuple[str, str]], path: str, made: Sequence[str] = ()
) -> str:
    """``text`` with ctxmode's trust block (re)written at its end; no entries: no block.

    An entry the user already has outside the block with the same hash is not repeated
    (a TOML table may be defined once); one with another hash is an error to resolve.
    """
    rest, flags = unmerge_trust(text)
    made_flags = {f for f in flags if f.startswith("made=")} | {f"made={m}" for m in made}
    outside = _trusted_elsewhere(_parse_toml(rest, path))
    lines = []
    for key, value in entries:
        theirs = outside.get(key)
        if isinstance(theirs, dict) and "trusted_hash" in theirs:
            if theirs["trusted_hash"] == value:
                continue
            raise CodexConfigError(
                f"{path} already trusts {key} with another hash; remove its "
                f"[hooks.state.{_toml_key(key)}] table and run this again"
            )
        lines.append(f"[hooks.state.{_toml_key(key)}]\ntrusted_hash = {_toml_key(value)}\n")
    if not lines:
        return rest
    new_flags = set(made_flags)
    if rest and not rest.endswith("\n"):
        rest += "\n"
        new_flags.add("newline")
    head = BEGIN + (
        f"{_FLAG_OPEN}{', '.join(sorted(new_flags))}{_FLAG_CLOSE}" if new_flags else " >>>"
    )
    block = head + "\n" + "".join(lines) + END + " <<<\n"
    result = rest + block
    _parse_toml(result, path)  # what we write, Codex must read
    return result


def unmerge_trust(text: str) -> tuple[str, set[str]]:
    """``text`` without ctxmode's block, exactly as it was before install; and its flags.

    What Codex itself wrote into the block is kept, in its place: Codex edits config.toml
    keeping its layout, and puts a table it adds (``codex exec --trust``'s
    ``[projects."DIR"]``, seen with 0.169.0) after the last table, that is before our end
    line. Only our own entries (a ``[hooks.state."…"]`` line and its ``trusted_hash``) and
    the two marker lines go.
    """
    before, after, flags = _split_block(text)
    foreign = _foreign(text[len(before) : len(text) - len(after)])
    rest = before + foreign + after
    if "newline" in flags and rest.endswith("\n") and not after and not foreign:
        rest = rest[:-1]
    return rest, flags


def _foreign(block: str) -> str:
    """The lines of a block that ctxmode did not write."""
    lines = block.splitlines(keepends=True)[1:-1]  # without the marker lines
    kept = []
    i = 0
    while i < len(lines):
        line = lines[i]
        ours = (
            line.startswith("[hooks.state.")
            and line.rstrip("\r\n").endswith("]")
            and i + 1 < len(lines)
            and lines[i + 1].startswith("trusted_hash = ")
        )
        if ours:
            i += 2
            continue
        kept.append(line)
        i += 1
    return "".join(kept)


def trusted_keys(text: str) -> dict[str, str]:
    """state key → trusted_hash, as Codex would read them from a config.toml text."""
    out = {}
    for key, value in _trusted_elsewhere(_parse_toml(text, "config.toml")).items():
        if isinstance(value, dict) and isinstance(value.get("trusted_hash"), str):
            out[key] = value["trusted_hash"]
    return out


# --------------------------------------------------------------------------- files


def _hooks_doc_or_raise(text: str, path: str) -> None:
    try:
        value = settings.parse(text, path) if text.strip() else {}
    except SettingsError as exc:
        raise CodexConfigError(f"{path}: {exc}") from None
    if not isinstance(value, dict):
        raise CodexConfigError(f"{path}: the top level is not a JSON object; left untouched")


def install(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    python: str | None = None,
    package_dir: str | None = None,
    env: Mapping[str, str] | None = None,
) -> CodexResult:
    """Merge ctxmode's handlers into Codex's hooks.json and trust them in config.toml."""
    hooks_file = hooks_path(scope, project_dir, env)
    trust_file = trust_path(env)
    hooks_target = os.path.realpath(hooks_file)
    trust_target = os.path.realpath(trust_file)
    old_hooks = _read(hooks_target)
    old_trust = _read(trust_target)
    _hooks_doc_or_raise(old_hooks or "", hooks_file)
    if old_trust is not None:
        _parse_toml(old_trust, trust_file)
    try:
        new_hooks = settings.merge(old_hooks or "", hook_specs(python, package_dir))
    except SettingsError as exc:
        raise CodexConfigError(f"{hooks_file}: {exc}") from None
    # config.toml's block says whether install made that file (one per user); which
    # hooks.json files it made, and their backups, the ledger says (one per scope).
    made = []
    _, _, flags = _split_block(old_trust or "")
    if old_trust is None or "made=config.toml" in flags:
        made.append("config.toml")
    # The block holds every scope's entries: those of other hooks files stay.
    entries = [
        (key, value)
        for key, value in trusted_block_entries(old_trust or "")
        if not key.startswith(hooks_file + ":")
    ] + trust_entries(hooks_file, new_hooks)
    if (
        old_trust is not None
        and old_hooks is not None
        and trusted_block_entries(old_trust) == entries
    ):
        # Nothing to trust anew: the block stays as it is, with whatever Codex wrote into it.
        new_trust = old_trust
    else:
        new_trust = merge_trust(old_trust or "", entries, trust_file, made)
    changed = (
        new_hooks != (old_hooks or "") or new_trust != (old_trust or "") or (old_hooks is None)
    )
    had = bool(old_hooks and settings.registrations(old_hooks))
    action = "unchanged" if not changed else ("updated" if had else "installed")
    diff = _diff(old_hooks, new_hooks, hooks_file) + _diff(old_trust, new_trust, trust_file)
    if changed and not dry_run:
        ledger = Ledger.load(env)
        if new_hooks != (old_hooks or "") or old_hooks is None:
            ledger.before_write(hooks_target, old_hooks, ours_before=had)
        ledger.note_dirs(os.path.dirname(trust_target))
        ledger.save()
        _write(hooks_target, new_hooks)
        _write(trust_target, new_trust)
    notes = []
    if scope == "project":
        notes.extend(project_notes(hooks_file, new_trust, project_dir or ""))
    return CodexResult(
        scope,
        hooks_file,
        trust_file,
        action,
        changed,
        dry_run,
        diff,
        len(settings.registrations(new_hooks)),
        len(entries),
        tuple(notes),
    )


def project_trust(trust_text: str, project_dir: str) -> str | None:
    """The ``trust_level`` config.toml gives the project (``trusted``, ``untrusted``), or
    None. Codex keys it on the project's root (the git work tree; a trusted parent folder
    does not count, as seen with 0.169.0): the folder itself, else the work tree it is in."""
    projects = _parse_toml(trust_text, "config.toml").get("projects")
    if not isinstance(projects, dict):
        return None
    folder = os.path.realpath(os.path.expanduser(project_dir))
    candidates = [folder]
    probe = folder
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            candidates.append(probe)
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    for key in candidates:
        entry = projects.get(key)
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return str(entry["trust_level"])
    return None


def project_notes(hooks_file: str, trust_text: str, project_dir: str) -> list[str]:
    """What a user must know about a project-scope install: Codex (0.169.0) skips *all* of
    an untrusted project's ``.codex`` folder, hooks included, with nothing but a warning,
    and ctxmode does not trust a project on the user's behalf (that enables every setting
    and MCP server the project's config names)."""
    level = project_trust(trust_text, project_dir)
    root = os.path.dirname(os.path.dirname(hooks_file))
    notes = [
        f"{hooks_file} names this machine's ctxmode: each user runs "
        "`ctxmode install --host codex --project DIR` to get hooks Codex trusts for them"
    ]
    if level == "untrusted":
        notes.append(
            f"Codex will not run these hooks: config.toml marks {root} untrusted, and Codex "
            "skips an untrusted project's .codex folder (its trust_level must say "
            '"trusted")'
        )
    elif level != "trusted":
        notes.append(
            f"Codex will not run these hooks yet: it skips the .codex folder of a project you "
            f"have not trusted. Trust {root} once (`codex exec --trust` run in it, or the "
            "codex TUI's prompt); ctxmode does not do it for you, as it enables all of the "
            "project's Codex config"
        )
    return notes


def uninstall(
    scope: str = "user",
    project_dir: str | None = None,
    dry_run: bool = False,
    env: Mapping[str, str] | None = None,
) -> CodexResult:
    """Remove ctxmode's handlers from hooks.json and its trust block from config.toml;
    a file that install created and that holds nothing else goes away again."""
    hooks_file = hooks_path(scope, project_dir, env)
    trust_file = trust_path(env)
    hooks_target = os.path.realpath(hooks_file)
    trust_target = os.path.realpath(trust_file)
    old_hooks = _read(hooks_target)
    old_trust = _read(trust_target)
    if old_hooks is not None:
        _hooks_doc_or_raise(old_hooks, hooks_file)
    flags: set[str] = set()
    new_trust = old_trust
    if old_trust is not None:
        rest, flags = unmerge_trust(old_trust)
        # Only the block of this scope's file goes: another scope's trust stays.
        mine = [key for key, _ in trust_entries(hooks_file, old_hooks or "")]
        others = [
            (k, v)
            for k, v in trusted_block_entries(old_trust)
            if k not in mine and not k.startswith(hooks_file + ":")
        ]
        new_trust = rest
        if others:
            kept = {f for f in flags if f.startswith("made=")}
            new_trust = merge_trust(rest, others, trust_file, [m[5:] for m in kept])
        elif "made=config.toml" in flags and not rest:
            new_trust = None
    ledger = Ledger.load(env)
    new_hooks = old_hooks
    if old_hooks is not None and settings.registrations(old_hooks):
        backup = ledger.backup_text(hooks_target)
        if settings.restores(old_hooks, backup):
            new_hooks = backup
        else:
            try:
                new_hooks = settings.unmerge(old_hooks)
            except SettingsError as exc:
                raise CodexConfigError(f"{hooks_file}: {exc}") from None
            # Only a file install made goes (older installs said so in the block's flags).
            made_it = ledger.created(hooks_target, unknown="made=hooks.json" in flags)
            if made_it and json_settings.holds_nothing(new_hooks):
                new_hooks = None
    changed = new_hooks != old_hooks or new_trust != old_trust
    action = "removed" if changed else "not installed"
    diff = _diff(old_hooks, new_hooks, hooks_file) + _diff(old_trust, new_trust, trust_file)
    if changed and not dry_run:
        for target, old, new in (
            (hooks_target, old_hooks, new_hooks),
            (trust_target, old_trust, new_trust),
        ):
            if new == old:
                continue
            if new is None:
                os.unlink(target)
            else:
                _write(target, new)
        ledger.forget(hooks_target)
        for target in (hooks_target, trust_target):
            ledger.remove_created_dirs(os.path.dirname(target))
        ledger.try_save()
    return CodexResult(scope, hooks_file, trust_file, action, changed, dry_run, diff, 0, 0)


def dry_run_main(argv: Sequence[str]) -> int:
    """``install.sh --host codex --dry-run`` (see :func:`ctxmode.hosts.settings_cli.dry_run_main`)."""
    return settings_cli.dry_run_main(argv, "codex", "Codex", install)


def trusted_block_entries(text: str) -> list[tuple[str, str]]:
    """(key, hash) of the entries inside ctxmode's block of a config.toml text."""
    before, after, _ = _split_block(text)
    block = text[len(before) : len(text) - len(after)]
    if not block:
        return []
    return list(trusted_keys(block).items())


# --------------------------------------------------------------------------- what the CLI says


def cli_install(
    report: Report,
    scope: str,
    project_dir: str | None,
    *,
    dry_run: bool = False,
    verify: bool = False,
    statusline: bool = False,
) -> None:
    """``ctxmode install --host codex``: install, then say what was done (``report``)."""
    if statusline:
        raise UsageError("--statusline is Claude Code's; Codex has no status line command")
    result = install(scope, project_dir, dry_run=dry_run)
    for note in result.notes:
        report.note(f"note: {note}")
    if dry_run:
        report.write(result.diff or "nothing to change\n")
        return
    verb = {"installed": "installed", "updated": "updated", "unchanged": "already installed"}
    line = (
        f"ctxmode {ctxmode.__version__} {verb[result.action]} for Codex: {result.hooks} hooks "
        f"in {display_path(result.hooks_path)}, trusted in {display_path(result.trust_path)} "
        f"({result.trusted} entries)"
    )
    if result.action == "updated":
        line += " (old entries and their trust replaced)"
    if verify:
        from ctxmode import proof
        from ctxmode.hosts.codex import proof as codex_proof

        outcome = codex_proof.verify(result.hooks_path)
        if not outcome.ok:
            raise InstallError(
                proof.failed(line, outcome, "Codex", "ctxmode uninstall --host codex")
            )
        line += proof.verified(outcome, "a sample Codex session")
    report.say(line)


def cli_uninstall(
    report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
) -> None:
    """``ctxmode uninstall --host codex``: uninstall, then say what was done (``report``)."""
    result = uninstall(scope, project_dir, dry_run=dry_run)
    if dry_run:
        report.write(result.diff or "nothing to change: ctxmode is not installed for Codex\n")
        return
    if result.action == "not installed":
        report.say(
            f"ctxmode is not installed in {display_path(result.hooks_path)}: nothing changed"
        )
    else:
        report.say(
            f"ctxmode hooks removed from {display_path(result.hooks_path)} and their trust "
            f"from {display_path(result.trust_path)}"
        )
