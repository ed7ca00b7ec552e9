"""Hook registration checks: which settings files register which ctxmode hooks, and what
is wrong with that (unreadable files, a broken launcher, stale paths, missing events, the
SessionStart ``compact`` matcher, duplicates, the plugin enabled as well, another memory
tool on the same events). :func:`hook_checks` runs them in display order, each a small
function over the settings files read once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ctxmode import settings
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.hosts import claude_code
from ctxmode.hosts.claude_code.hook_commands import launcher_problem, matcher_matches, stale_paths
from ctxmode.hosts.claude_code.settings_files import (
    SettingsFile,
    display,
    read_settings,
    scope_flag,
    settings_paths,
)
from ctxmode.hosts.claude_code.switches import switch_checks
from ctxmode.settings import Registration
from ctxmode.wording import plural

# The doctor group of these checks (its heading: the host's label).
GROUP = "hooks"
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

Registered = list[tuple[SettingsFile, Registration]]
PluginKeys = list[tuple[SettingsFile, str]]


def check_hooks(ctx: Context) -> list[Check]:
    files = [read_settings(scope, path) for scope, path in settings_paths(ctx)]
    return hook_checks(files, ctx) + switch_checks(files, ctx)


# The host's checks, in display order: what ``ctxmode doctor`` runs (ctxmode.hosts.contract).
checks = check_hooks


def hook_checks(files: Sequence[SettingsFile], ctx: Context) -> list[Check]:
    """The registration checks over already-read settings files."""
    checks = unreadable_checks(files, ctx.env)
    registered: Registered = [(info, reg) for info in files for reg in info.registrations]
    plugin_keys: PluginKeys = [(info, key) for info in files for key in info.plugins]

    registered, launcher = launcher_checks(registered, plugin_keys, ctx)
    checks += launcher
    if any(check.status == FAIL for check in launcher):
        return checks + other_tool_checks(files, ctx)
    if not registered and not plugin_keys:
        return [*checks, unregistered_check(files, ctx.env), *other_tool_checks(files, ctx)]
    return [
        *checks,
        *stale_path_checks(registered, ctx),
        *event_checks(registered, plugin_keys, files, ctx, _client_version(ctx)),
        *matcher_checks(registered, ctx),
        *capture_mode_checks(registered, _client_version(ctx), ctx),
        *duplicate_checks(registered, ctx),
        *plugin_checks(registered, plugin_keys, ctx),
        *lookup_permission_checks(files, ctx),
        *other_tool_checks(files, ctx),
    ]


def unreadable_checks(files: Sequence[SettingsFile], env: Mapping[str, str]) -> list[Check]:
    """A settings file that does not parse (Claude Code ignores it)."""
    return [
        Check(
            "hooks",
            f"{info.scope} settings",
            FAIL,
            f"{display(info.path, env)}: {info.error}",
            "fix the file by hand (Claude Code ignores a malformed settings file)",
        )
        for info in files
        if info.error
    ]


def launcher_checks(
    registered: Registered, plugin_keys: PluginKeys, ctx: Context
) -> tuple[Registered, list[Check]]:
    """A shared project file runs this user's launcher: without a working one those
    hooks do nothing here (by design: a teammate without ctxmode sees no error).

    Returns the registrations that do run, and the finding (``fail`` when none is left).
    """
    via_launcher = [(info, reg) for info, reg in registered if settings.runs_launcher(reg.command)]
    problem = launcher_problem(ctx.env) if via_launcher else None
    if not problem:
        return registered, []
    registered = [item for item in registered if item not in via_launcher]
    scopes = dict.fromkeys(info.scope for info, _ in via_launcher)
    fix = "; ".join(
        f"ctxmode install{scope_flag(scope, ctx.project_dir)} (writes your launcher)"
        for scope in scopes
    )
    # With another registration of the user's own, that is as it should be: the
    # shared hooks stay quiet and nothing runs twice.
    active = bool(registered or plugin_keys)
    check = Check(
        "hooks",
        "launcher",
        OK if active else FAIL,
        f"{' and '.join(scopes)} settings run ctxmode through the per-user launcher, "
        f"but {problem}: those hooks do nothing for you"
        + ("; your own registration records instead" if active else ""),
        fix,
    )
    return registered, [check]


def unregistered_check(files: Sequence[SettingsFile], env: Mapping[str, str]) -> Check:
    """No settings file registers ctxmode and no plugin is enabled."""
    return Check(
        "hooks",
        "registration",
        FAIL,
        "ctxmode's hooks are not registered in any settings file: nothing is recorded",
        "ctxmode install (user scope), or ctxmode install --project DIR",
        tuple(
            f"{info.scope}: {display(info.path, env)}" + ("" if info.exists else " (no file)")
            for info in files
            if info.exists or info.scope != "managed"  # rarely there: say so only then
        ),
    )


def stale_path_checks(registered: Registered, ctx: Context) -> list[Check]:
    """Registered commands whose interpreter or script is gone."""
    stale = [(info, reg, stale_paths(reg, ctx.env)) for info, reg in registered]
    stale = [item for item in stale if item[2]]
    if not stale:
        return []
    scopes = dict.fromkeys(info.scope for info, _, _ in stale)
    fixes = "; ".join(f"ctxmode install{scope_flag(s, ctx.project_dir)}" for s in scopes)
    return [
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
    ]


_NUMBERS = {5: "five", 6: "six", 7: "seven", 8: "eight"}


def _client_version(ctx: Context) -> tuple[int, ...] | None:
    from ctxmode.hosts.claude_code.install import client_version

    return client_version(ctx.env)


# Which copy to keep when ctxmode is registered in more than one file, best first: a
# managed one (an administrator's), the user's (every project), the user's own for this
# project, the one shared with the team (no path of this machine: foreground captures, no
# PostCompact, no lookup rule).
KEEP_ORDER = ("managed", "user", "local", "project")


def commands(verb: str, scopes: Sequence[str], ctx: Context) -> str:
    """``ctxmode VERB`` for each of ``scopes`` (a managed file is no user's to change),
    joined with ``&&``: a fix to run as it stands."""
    wanted = [scope for scope in dict.fromkeys(scopes) if scope != "managed"] or ["user"]
    return " && ".join(f"ctxmode {verb}{scope_flag(s, ctx.project_dir)}" for s in wanted)


def _scopes(registered: Registered) -> list[str]:
    return list(dict.fromkeys(info.scope for info, _ in registered))


def _kept(scopes: Sequence[str]) -> str:
    return min(scopes, key=KEEP_ORDER.index)


def _gated_note(missing: Sequence[str], version: tuple[int, ...] | None) -> tuple[str, str, str]:
    """(status, words, fix) for version-gated events not registered (``MIN_VERSIONS``)."""
    from ctxmode.hosts.claude_code.install import CLIENT_VERSION_ENV, version_text

    names = ", ".join(missing)
    if version is None:
        return (
            OK,
            f"{names} not (Claude Code's version unknown)",
            f"{CLIENT_VERSION_ENV}=<version> ctxmode install",
        )
    lacking = [event for event in missing if version < claude_code.MIN_VERSIONS[event]]
    if len(lacking) == len(missing):
        return (
            OK,
            f"{names} not: Claude Code {version_text(version)} does not have "
            f"{'it' if len(missing) == 1 else 'them'} (a settings file naming "
            f"{'it' if len(missing) == 1 else 'them'} would be skipped whole)",
            "",
        )
    return (
        WARN,
        f"{names} not, though Claude Code {version_text(version)} has "
        f"{'it' if len(missing) == 1 else 'them'}: compaction summaries are not recorded",
        "ctxmode install (adds it)",
    )


def event_checks(
    registered: Registered,
    plugin_keys: PluginKeys,
    files: Sequence[SettingsFile],
    ctx: Context,
    version: tuple[int, ...] | None = None,
) -> list[Check]:
    """Missing events (over all scopes, as Claude Code merges them; the plugin has all),
    else where the hooks come from. An event only newer clients know (PostCompact) is
    expected only where the client has it."""
    present = {reg.event for _, reg in registered}
    gated = [e for e in settings.SHIMS if e in claude_code.MIN_VERSIONS and e not in present]
    missing = [
        event
        for event in settings.SHIMS
        if event not in present and event not in claude_code.MIN_VERSIONS
    ]
    if plugin_keys and version is not None:
        old = [e for e, least in claude_code.MIN_VERSIONS.items() if version < least]
        if old:
            from ctxmode.hosts.claude_code.install import version_text

            return [
                Check(
                    "hooks",
                    "events",
                    FAIL,
                    f"the ctxmode plugin registers {', '.join(old)}, which Claude Code "
                    f"{version_text(version)} does not know: it skips the plugin's hooks",
                    "update Claude Code (claude update), or use `ctxmode install` instead "
                    "of the plugin",
                )
            ]
    if missing and not plugin_keys:
        core = [event for event in missing if event in CORE_EVENTS]
        return [
            Check(
                "hooks",
                "events",
                FAIL if core else WARN,
                f"no ctxmode hook for {', '.join(missing)}"
                + (": nothing is recorded or injected there" if core else ""),
                # In the file that registers ctxmode: another scope would run it twice.
                f"{commands('install', [_kept(_scopes(registered))], ctx)} "
                "(it registers every event)",
            )
        ]
    env = ctx.env
    details = []
    for info in files:
        if info.registrations:
            events = ", ".join(dict.fromkeys(reg.event for reg in info.registrations))
            details.append(f"{info.scope}: {display(info.path, env)}: {events}")
        for key in info.plugins:
            details.append(f"{info.scope}: {display(info.path, env)}: plugin {key} enabled")
    where = (
        f" in {plural(len({info.scope for info, _ in registered}), 'file')}"
        if registered
        else " by the plugin"
    )
    if plugin_keys or not gated:
        total = len(settings.SHIMS)
        return [
            Check(
                "hooks",
                "registration",
                OK,
                f"all {_NUMBERS.get(total, str(total))} events registered{where}",
                details=tuple(details),
            )
        ]
    if all(info.scope == "project" for info, _ in registered):
        status, fix = OK, ""
        note = (
            f"{', '.join(gated)} not: a file shared with the team never names "
            f"{'it' if len(gated) == 1 else 'them'} (an older client would skip the whole file)"
        )
    else:
        status, note, fix = _gated_note(gated, version)
        if fix == "ctxmode install (adds it)":
            own = [scope for scope in _scopes(registered) if scope != "project"]
            fix = f"{commands('install', [_kept(own)], ctx)} (adds it)"
    n_core = len(settings.SHIMS) - len(gated)
    return [
        Check(
            "hooks",
            "registration",
            status,
            f"all {_NUMBERS.get(n_core, str(n_core))} core events registered{where}; {note}",
            fix,
            details=tuple(details),
        )
    ]


def capture_mode_checks(
    registered: Registered, version: tuple[int, ...] | None, ctx: Context
) -> list[Check]:
    """Whether the captures run in the background ("async": true) or the agent waits for
    each, and why; a mode the client cannot honour, or could improve on, is a warning
    whose fix reinstalls the file that has it (never another scope: that would register
    ctxmode twice). A file shared with the team keeps them in the foreground by design."""
    captures = [
        (info, reg) for info, reg in registered if reg.event in claude_code.BACKGROUND_EVENTS
    ]
    if not captures:
        return []
    able, why = claude_code.background_mode(version)
    behind = [(info, reg) for info, reg in captures if reg.background]
    if behind and not able:
        return [
            Check(
                "hooks",
                "capture mode",
                WARN,
                f'background ("async": true), but {why}: the client may reject the '
                "settings file, or run them in the foreground",
                f"{commands('install', _scopes(behind), ctx)} (registers them for this client)",
            )
        ]
    if behind and len(behind) < len(captures):
        scopes = _scopes(captures)
        inside = [s for s in scopes if len({r.background for i, r in captures if i.scope == s}) > 1]
        # One file holding both: installing it again makes it one mode. Two files, one
        # mode each: ctxmode is registered twice (see duplicates), one copy goes.
        fix = commands("install", inside, ctx) if inside else _duplicate_fix(scopes, ctx)
        return [
            Check(
                "hooks",
                "capture mode",
                WARN,
                "mixed: some capture hooks run in the background, some in the foreground"
                + ("" if inside else f" ({' and '.join(scopes)} settings both register them)"),
                fix,
            )
        ]
    if behind:
        return [
            Check(
                "hooks",
                "capture mode",
                OK,
                f"background: the agent does not wait for the captures ({why})",
            )
        ]
    own = [scope for scope in _scopes(captures) if scope != "project"]
    if able and own:
        return [
            Check(
                "hooks",
                "capture mode",
                WARN,
                f"foreground: the agent waits for each capture, though {why}",
                f"{commands('install', own, ctx)} (registers them in the background)",
            )
        ]
    if able:
        return [
            Check(
                "hooks",
                "capture mode",
                OK,
                "foreground: a file shared with the team names no client version, so it "
                "keeps them there (your own `ctxmode install` instead of it runs them in "
                "the background)",
            )
        ]
    return [Check("hooks", "capture mode", OK, f"foreground: {why}")]


def matcher_checks(registered: Registered, ctx: Context) -> list[Check]:
    """SessionStart must fire on ``compact`` (that is when the resume is injected); a
    tool matcher on PostToolUse records only the tools it names."""
    checks = []
    for info, reg in registered:
        if reg.event == "SessionStart" and not matcher_matches(reg.matcher, "compact"):
            checks.append(
                Check(
                    "hooks",
                    "compact matcher",
                    FAIL,
                    f"{info.scope} SessionStart matcher {reg.matcher!r} leaves out 'compact': "
                    "the snapshot is never injected after compaction",
                    f"ctxmode install{scope_flag(info.scope, ctx.project_dir)} "
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
                    f"ctxmode install{scope_flag(info.scope, ctx.project_dir)} (matches every tool)",
                )
            )
    return checks


def _duplicate_fix(scopes: Sequence[str], ctx: Context) -> str:
    """Keep one copy (:data:`KEEP_ORDER`), remove the others: the commands, and why."""
    keep = _kept(scopes)
    drop = [scope for scope in scopes if scope not in (keep, "managed")]
    why = {
        "managed": "the managed settings register ctxmode for you",
        "user": "your user settings register ctxmode for every project",
        "local": "your local settings register it for this project",
    }.get(keep, "")
    fix = commands("uninstall", drop, ctx)
    return f"{fix} ({why})" if why else fix


def duplicate_checks(registered: Registered, ctx: Context) -> list[Check]:
    """The same event registered more than once with different commands: both run."""
    by_event: dict[str, Registered] = {}
    for info, reg in registered:
        by_event.setdefault(reg.event, []).append((info, reg))
    doubled = []
    scopes: list[str] = []
    for event, regs in by_event.items():
        commands_ = {reg.command for _, reg in regs}
        if len(regs) > 1 and (len(commands_) > 1 or len({i.scope for i, _ in regs}) < len(regs)):
            where = ", ".join(f"{info.scope}" for info, _ in regs)
            doubled.append(f"{event}: {len(regs)} handlers ({where})")
            scopes += [info.scope for info, _ in regs]
    if not doubled:
        return []
    scopes = list(dict.fromkeys(scopes))
    # Twice in one file: installing it again leaves one; else one file's copy stays.
    fix = commands("install", scopes, ctx) if len(scopes) == 1 else _duplicate_fix(scopes, ctx)
    return [
        Check(
            "hooks",
            "duplicates",
            WARN,
            f"{plural(len(doubled), 'event')} {'has' if len(doubled) == 1 else 'have'} "
            "more than one ctxmode handler: each runs",
            fix,
            tuple(doubled),
        )
    ]


def lookup_permission_checks(files: Sequence[SettingsFile], ctx: Context) -> list[Check]:
    """Whether the snapshot's lookups run without asking in the default permission mode:
    the ``permissions.allow`` rule ``ctxmode install`` writes for this installation's
    ``ctxmode`` (see ctxmode.hosts.claude_code.settings_permissions)."""
    from ctxmode.handlers import lookup_program
    from ctxmode.hosts.claude_code.settings_permissions import rule_for

    wanted = rule_for(lookup_program(ctx.python))
    found = [(info, rule) for info in files for rule in info.lookup_rules]
    name = "lookups"
    for info, rule in found:
        if rule == wanted:
            where = display(info.path, ctx.env)
            return [
                Check(
                    "hooks",
                    name,
                    OK,
                    f"the snapshot's lookups run without asking: {rule} ({where})",
                )
            ]
    if wanted is None:
        return [
            Check(
                "hooks",
                name,
                WARN,
                "the snapshot's lookups ask before they run: no "
                f"ctxmode command by absolute path beside {ctx.python}",
                "reinstall ctxmode (install.sh) so that its venv has the ctxmode command",
            )
        ]
    if found:
        stale = ", ".join(rule for _, rule in found)
        return [
            Check(
                "hooks",
                name,
                WARN,
                f"the allow rule names another ctxmode ({stale}): "
                "the snapshot's lookups ask before they run",
                commands("install", [info.scope for info, _ in found], ctx),
            )
        ]
    registering = [info.scope for info in files if info.registrations]
    plugin = any(info.plugins for info in files)
    own = [scope for scope in registering if scope not in ("project", "managed")]
    if own:
        fix = commands("install", [_kept(own)], ctx)
    elif registering or plugin:  # `ctxmode install` would register the hooks a second time
        fix = (
            f'add "{wanted}" to permissions.allow in ~/.claude/settings.json or '
            ".claude/settings.local.json ("
            + (
                "the plugin cannot add it"
                if plugin
                else "the shared file names no path of this machine"
            )
            + ")"
        )
    else:
        fix = "ctxmode install"
    return [
        Check(
            "hooks",
            name,
            WARN,
            "the snapshot's lookups ask before they run in Claude "
            f"Code's default permission mode (no {wanted} in permissions.allow; a plugin "
            "cannot add one)",
            fix,
        )
    ]


def plugin_checks(registered: Registered, plugin_keys: PluginKeys, ctx: Context) -> list[Check]:
    """The ctxmode plugin enabled while settings register the hooks too."""
    if not (plugin_keys and registered):
        return []
    uninstall = commands("uninstall", _scopes(registered), ctx)
    keys = ", ".join(sorted({key for _, key in plugin_keys}))
    return [
        Check(
            "hooks",
            "plugin",
            WARN,
            f"the ctxmode plugin ({keys}) is enabled and settings register the hooks too: "
            "every hook runs twice",
            f"{uninstall} (keeps the plugin; or disable the plugin in Claude Code's /plugin menu)",
        )
    ]


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
