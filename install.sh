#!/bin/sh
# Install ctxmode from this checkout and register its Claude Code hooks.
#
#   ./install.sh                  hooks in ~/.claude/settings.json
#   ./install.sh --project DIR    hooks in DIR/.claude/settings.json
#   ./install.sh --local DIR      hooks in DIR/.claude/settings.local.json
#   ./install.sh --dry-run        show what would change; write nothing anywhere
#   ./install.sh --uninstall      remove the hooks (same scope options); data is kept
#   ./install.sh --host codex     for the Codex CLI: ~/.codex/hooks.json and its trust
#                                 entries in ~/.codex/config.toml (--user or --project DIR)
#   ./install.sh --host gemini    for the Gemini CLI: ~/.gemini/settings.json (--user, or
#                                 --project DIR: a folder Gemini trusts)
#   ./install.sh --host copilot   for GitHub Copilot CLI: ~/.copilot/settings.json (--user,
#                                 or --project DIR: .github/hooks/ctxmode.json, trusted folder)
#   ./install.sh --host qwen      for Qwen Code: ~/.qwen/settings.json and an allow rule for
#                                 the lookups (--user, or --project DIR)
#   ./install.sh --host opencode  for OpenCode: a plugin in ~/.config/opencode/plugin/
#                                 (--user, or --project DIR: DIR/.opencode/plugin/)
#
# What it does: finds a real python3 >= 3.10 (not a pyenv/asdf shim: hooks start on
# every tool call and a shim costs ~10x the interpreter's start-up), creates an
# isolated virtual environment in ctxmode's data root (<data root>/venv), installs
# this checkout into it (re-running upgrades in place), runs `ctxmode install`, and
# proves the result by replaying a sample session through the installed hook
# commands in a throwaway store. Environment: CTXMODE_HOME moves the data root;
# CTXMODE_PYTHON picks the interpreter.
set -eu

say() { printf 'ctxmode: %s\n' "$*"; }
die() { printf 'ctxmode: error: %s\n' "$*" >&2; exit 1; }

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit "${1:-0}"
}

HERE=$(cd "$(dirname "$0")" && pwd -P)
SCOPE=""
SCOPE_DIR=""
DRY_RUN=""
UNINSTALL=""
HOST=""
while [ $# -gt 0 ]; do
    case "$1" in
        --project|--local)
            [ $# -ge 2 ] || die "$1 needs a directory"
            [ -z "$SCOPE" ] || die "choose one of --user, --project DIR, --local DIR"
            SCOPE=$1
            SCOPE_DIR=$2
            shift 2 ;;
        --project=*|--local=*)
            [ -z "$SCOPE" ] || die "choose one of --user, --project DIR, --local DIR"
            SCOPE=${1%%=*}
            SCOPE_DIR=${1#*=}
            shift ;;
        --user)
            [ -z "$SCOPE" ] || die "choose one of --user, --project DIR, --local DIR"
            SCOPE=--user
            shift ;;
        --host)
            [ $# -ge 2 ] || die "--host needs a name (see --help)"
            HOST=$2
            shift 2 ;;
        --host=*) HOST=${1#*=}; shift ;;
        --dry-run) DRY_RUN=1; shift ;;
        --uninstall) UNINSTALL=1; shift ;;
        -h|--help) usage 0 ;;
        *) printf 'ctxmode: unknown option: %s\n\n' "$1" >&2; usage 2 >&2 ;;
    esac
done

# The scope arguments of the ctxmode command line, as "$@": built word by word, never
# split or globbed, so a DIR may hold spaces, quotes, *, ? or [.
if [ -n "$SCOPE_DIR" ]; then
    set -- "$SCOPE" "$SCOPE_DIR"
elif [ -n "$SCOPE" ]; then
    set -- "$SCOPE"
else
    set --
fi

# --- a real interpreter ------------------------------------------------------------

real_python() {
    # The interpreter a candidate really runs: for a pyenv/asdf shim, sys.executable
    # is the versioned binary behind it. Empty output when too old or not working.
    "$1" -c 'import sys
if sys.version_info >= (3, 10):
    print(sys.executable)' 2>/dev/null || true
}

PY=""
if [ -n "${CTXMODE_PYTHON:-}" ]; then
    PY=$(real_python "$CTXMODE_PYTHON")
    [ -n "$PY" ] || die "CTXMODE_PYTHON=$CTXMODE_PYTHON is not a working Python >= 3.10"
fi
for candidate in python3 python3.14 python3.13 python3.12 python3.11 python3.10 python; do
    [ -z "$PY" ] || break
    command -v "$candidate" >/dev/null 2>&1 || continue
    PY=$(real_python "$candidate")
done
[ -n "$PY" ] || die "no python3 >= 3.10 found (set CTXMODE_PYTHON=/path/to/python3.10+)"
PY_VERSION=$("$PY" -c 'import platform; print(platform.python_version())')

# --- the host ----------------------------------------------------------------------

# The hosts are the registry's (ctxmode.hosts), read from this checkout: the module that
# installs for the one named (its dry run below), and whether it is the default host
# (`ctxmode install` needs no --host then).
HOST_INFO=$("$PY" -I -S -B -c '
import sys
sys.path.insert(0, sys.argv[1])
from ctxmode import hosts
try:
    name = hosts.by_option(sys.argv[2]) if sys.argv[2] else hosts.DEFAULT
except ValueError as exc:
    raise SystemExit(f"ctxmode: error: {exc}")
print(f"ctxmode.hosts.{name}.install", "default" if name == hosts.DEFAULT else "other")
' "$HERE" "$HOST") || exit 1
HOST_MODULE=${HOST_INFO% *}
[ "${HOST_INFO#* }" = default ] || set -- "$@" --host "$HOST"

# --- the data root and the environment ---------------------------------------------

# Same rule as the hooks (ctxmode.paths.resolve_root): CTXMODE_HOME, else the root an
# earlier install recorded in the per-user pointer, else the platform's user data dir.
ROOT=$("$PY" -I -S -B -c '
import os, sys
sys.path.insert(0, sys.argv[1])
try:
    from ctxmode.paths import data_root
    print(data_root(os.environ))
    raise SystemExit
except (ImportError, AttributeError, TypeError):
    pass
home = os.environ.get("CTXMODE_HOME", "").strip()
if home:
    print(os.path.abspath(os.path.expanduser(home)))
elif sys.platform == "win32":
    base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~/AppData/Local")
    print(os.path.join(base, "ctxmode", "ctxmode"))
elif sys.platform == "darwin":
    print(os.path.expanduser("~/Library/Application Support/ctxmode"))
else:
    base = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
    print(os.path.join(base, "ctxmode"))
' "$HERE")
[ -n "$ROOT" ] || die "could not compute the data root"
VENV="$ROOT/venv"
if [ -d "$VENV/Scripts" ]; then BIN="$VENV/Scripts"; else BIN="$VENV/bin"; fi
CTXMODE="$BIN/ctxmode"
LINK="$HOME/.local/bin/ctxmode"

# The CLI is linked into ~/.local/bin (as pipx does: the XDG place for a user's
# commands, not the environment's bin/, which would put its python and pip on PATH too),
# never over a file that is not ours. Where ~/.local/bin is not on PATH, the last lines
# say how to put it there, for the user's shell.
link_is_ours() { [ -L "$LINK" ] && [ "$(readlink "$LINK")" = "$CTXMODE" ]; }
local_bin_on_path() {
    case ":$PATH:" in
        *":$HOME/.local/bin:"*|*":$HOME/.local/bin/:"*) return 0 ;;
    esac
    return 1
}
# The line that puts ~/.local/bin on PATH in the user's shell, and where it is kept.
path_advice() {
    case "$(basename "${SHELL:-sh}")" in
        fish)
            say "~/.local/bin is not on your PATH: to run ctxmode by its name, run this once (fish keeps it):"
            printf '    fish_add_path "$HOME/.local/bin"\n' ;;
        zsh) rc_advice "~/.zshrc" ;;
        bash) rc_advice "~/.bashrc" ;;
        *) rc_advice "~/.profile" ;;
    esac
}
rc_advice() {
    say "~/.local/bin is not on your PATH: to run ctxmode by its name, run this line, and add it to $1 for new shells:"
    printf '    export PATH="$HOME/.local/bin:$PATH"\n'
}

if [ -n "$UNINSTALL" ]; then
    [ -x "$CTXMODE" ] || die "no ctxmode environment at $VENV: nothing to uninstall from here"
    [ -z "$DRY_RUN" ] || set -- "$@" --dry-run
    "$CTXMODE" uninstall "$@"
    if [ -z "$DRY_RUN" ] && link_is_ours; then rm -f "$LINK"; fi
    say "recorded sessions are kept in $ROOT (delete that directory to remove them)"
    exit 0
fi

# The digest of the checkout's files (paths and contents, build litter left out)
# decides whether the environment is current. With a destination the files are copied
# there first and the copy is hashed; without one they are hashed in place (dry run).
DIGEST_PY='
import hashlib, os, shutil, sys
skip = shutil.ignore_patterns(".git", "__pycache__", "build", "dist", "*.egg-info", ".venv",
                              ".*_cache", ".hypothesis", ".tox", ".nox")
top = sys.argv[1]
if len(sys.argv) > 2:
    shutil.copytree(top, sys.argv[2], ignore=skip)
    top, skip = sys.argv[2], lambda folder, names: set()
digest = hashlib.sha256()
for folder, dirs, files in os.walk(top, followlinks=True):
    ignored = skip(folder, dirs + files)
    dirs[:] = sorted(name for name in dirs if name not in ignored)
    for name in sorted(name for name in files if name not in ignored):
        path = os.path.join(folder, name)
        digest.update(os.path.relpath(path, top).encode() + b"\0")
        with open(path, "rb") as handle:
            digest.update(handle.read() + b"\0")
print(digest.hexdigest())
'

# --dry-run: say what would change, from this checkout's code run by $PY itself (no
# environment is built, nothing is written: not the data root, not the settings, not
# ~/.local/bin, not even a temp file or bytecode).
if [ -n "$DRY_RUN" ]; then
    say "dry run: nothing is written"
    if [ -d "$VENV" ] && "$BIN/python" -c 'import sys' >/dev/null 2>&1; then
        STAMP="$VENV/ctxmode-source.sha256"
        if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$("$PY" -I -B -c "$DIGEST_PY" "$HERE")" ]; then
            say "the environment $VENV already holds this checkout: nothing to rebuild"
        else
            say "would install this checkout into the environment $VENV (an upgrade in place)"
        fi
        PKG=$("$BIN/python" -I -B -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    else
        [ ! -d "$VENV" ] || say "would recreate the broken environment at $VENV"
        say "would create the environment $VENV (Python $PY_VERSION, $PY) and install this checkout into it"
        PKG=$("$PY" -I -B -c '
import os, sys, sysconfig
names = sysconfig.get_scheme_names()
scheme = "venv" if "venv" in names else ("nt" if os.name == "nt" else "posix_prefix")
print(sysconfig.get_path("purelib", scheme, vars={"base": sys.argv[1], "platbase": sys.argv[1]}))
' "$VENV")
    fi
    if [ ! -e "$LINK" ] && [ ! -L "$LINK" ]; then
        say "would link $LINK to $CTXMODE"
        local_bin_on_path || say "(~/.local/bin is not on your PATH: the install says how to put it there)"
    fi
    exec "$PY" -I -B -c '
import importlib, sys
sys.path.insert(0, sys.argv[1])
dry_run_main = importlib.import_module(sys.argv[2]).dry_run_main
raise SystemExit(dry_run_main(sys.argv[3:]))
' "$HERE" "$HOST_MODULE" "$BIN/python" "$PKG/ctxmode" "$@"
fi

# Everything made under the data root, the environment included, is the user's alone
# (folders 0700, files 0600): the umask holds until the settings are written, which
# keep their own modes (a project's settings.json is the team's).
old_umask=$(umask)
umask 077
mkdir -p "$ROOT"
chmod 700 "$ROOT"

# Reuse the environment (an upgrade in place) unless its interpreter is gone, e.g.
# after the Python it was made from was removed.
if [ -d "$VENV" ] && ! "$BIN/python" -c 'import sys' >/dev/null 2>&1; then
    say "recreating the broken environment at $VENV"
    rm -rf "$VENV"
fi

UV=$(command -v uv 2>/dev/null || true)
if [ ! -d "$VENV" ]; then
    # uv installs much faster than pip into the same kind of isolated venv; without uv
    # the venv gets pip. Both are plain venvs of $PY, so either tool can upgrade later.
    if [ -n "$UV" ]; then
        "$PY" -m venv --without-pip "$VENV" || die "'$PY -m venv' failed"
    else
        "$PY" -m venv "$VENV" >/dev/null 2>&1 || die "'$PY -m venv' failed: install the venv module (Debian/Ubuntu: apt install python3-venv)"
    fi
    if [ -d "$VENV/Scripts" ]; then BIN="$VENV/Scripts"; else BIN="$VENV/bin"; fi
    CTXMODE="$BIN/ctxmode"
fi

LOG="$ROOT/install.log"
STAMP="$VENV/ctxmode-source.sha256"
# Build from a scratch copy: setuptools writes build/ and *.egg-info into the source
# tree, which would litter the checkout (and race with a second install running).
SRC=$(mktemp -d "${TMPDIR:-/tmp}/ctxmode-src.XXXXXX")
trap 'rm -rf "$SRC"' EXIT
DIGEST=$("$PY" -I -c "$DIGEST_PY" "$HERE" "$SRC/ctxmode") || die "cannot copy the checkout to $SRC"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$DIGEST" ] && [ -x "$CTXMODE" ] \
    && "$BIN/python" -c 'import ctxmode.cli, ctxmode.hookrun' >/dev/null 2>&1; then
    : # this checkout is what is installed: nothing to rebuild
elif [ -n "$UV" ]; then
    rm -f "$STAMP"
    "$UV" pip install --quiet --python "$BIN/python" --reinstall-package ctxmode "$SRC/ctxmode" >"$LOG" 2>&1 \
        || die "installing the package failed; see $LOG"
else
    rm -f "$STAMP"
    if ! "$BIN/python" -m pip --version >/dev/null 2>&1; then
        "$BIN/python" -m ensurepip --default-pip >/dev/null 2>&1 || die "the environment at $VENV has no pip"
    fi
    # pip rebuilds and reinstalls a local directory even at the same version, so a
    # newer checkout replaces the installed files; dependencies stay unless needed.
    "$BIN/python" -m pip install --quiet --disable-pip-version-check --no-input "$SRC/ctxmode" >"$LOG" 2>&1 \
        || die "installing the package failed; see $LOG"
fi
[ -x "$CTXMODE" ] || die "the ctxmode command is missing from $BIN; see $LOG"
rm -f "$LOG"
printf '%s\n' "$DIGEST" >"$STAMP"

say "Python $PY_VERSION ($PY), environment $VENV"
# The hooks run by this environment's interpreter read the data root from here, so a
# CTXMODE_HOME given to install.sh holds even when Claude Code runs without it.
printf '%s\n' "$ROOT" >"$VENV/ctxmode-data-root"
# ...and code run by another interpreter (the plugin's python3) reads it from the
# per-user pointer at the fixed default location (ctxmode.paths.resolve_root).
"$BIN/python" -I -c 'import sys; from ctxmode import paths; print(paths.write_pointer(sys.argv[1]))' \
    "$ROOT" >/dev/null || die "could not record the data root in the per-user pointer"
# pip and venv copy some modes from the wheel (0755 on .so files and scripts).
chmod -R go-rwx "$VENV"
umask "$old_umask"

# The demo (when this version has it) replays a bundled session through the real
# hook entry points in a throwaway store: one more end-to-end check.
if "$CTXMODE" demo --help 2>/dev/null | grep -q -- '--quiet'; then
    "$CTXMODE" demo --quiet >/dev/null || die "'ctxmode demo --quiet' failed after install"
fi

# Register the hooks and replay a sample session through them: the last line of its
# output says what that proved, and it is printed last of all.
# (Codex: hooks.json and the trust entries without which Codex skips them; its proof run
# replays a Codex session, as Codex runs the hooks.)
PROOF=$("$CTXMODE" install --verify "$@")

if { [ ! -e "$LINK" ] && [ ! -L "$LINK" ]; } || link_is_ours; then
    mkdir -p "$HOME/.local/bin"
    ln -sf "$CTXMODE" "$LINK"
    if local_bin_on_path; then
        FOUND=$(command -v ctxmode 2>/dev/null || true)
        if [ "$FOUND" = "$LINK" ]; then
            say "command: ctxmode (linked from $LINK)"
        else
            say "command: $LINK (linked; another ctxmode comes first on your PATH: $FOUND)"
        fi
    else
        say "command: $LINK (linked)"
        path_advice
    fi
else
    say "command: $CTXMODE ($LINK is another file, left alone: run ctxmode by this path, or alias it)"
fi
printf '%s\n' "$PROOF"
