#!/usr/bin/env bash
# The whole test suite, from a fresh clone: makes .venv (once), installs ctxmode
# with its test dependencies into it, and runs pytest. Extra arguments go to pytest,
# e.g. `./test.sh -m "not e2e"` or `./test.sh tests/test_store.py -x`.
set -euo pipefail
cd "$(dirname "$0")"

find_python() {
  for candidate in "${PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  echo "test.sh: Python >= 3.10 is required" >&2; return 1
}

if [ ! -x .venv/bin/python ]; then
  "$(find_python)" -m venv .venv
fi
stamp=.venv/.ctxmode-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
  touch "$stamp"
fi
# apt_install WHAT PACKAGE...: install Debian packages once, quietly, where apt-get can
# (root, or sudo without a password); elsewhere, or when it fails, say what will not run.
apt_install() {
  local what=$1 sudo=""
  shift
  command -v apt-get >/dev/null 2>&1 || return 0
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 0
    sudo="sudo -n"
  fi
  echo "test.sh: installing $* for $what (apt-get)" >&2
  if ! { $sudo apt-get update -qq \
      && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "$@"; } >/dev/null 2>&1; then
    echo "test.sh: $* could not be installed; $what will not run" >&2
  fi
}

# The browser test (tests/test_view_browser.py) drives a real Chromium. Where none is
# installed, Debian's chromium is installed once; elsewhere that test skips and says why.
# CTXMODE_NO_BROWSER_INSTALL=1 leaves the machine alone.
ensure_browser() {
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$name" >/dev/null 2>&1 && return 0
  done
  [ -z "${CTXMODE_NO_BROWSER_INSTALL:-}" ] || return 0
  apt_install "the browser test" chromium
}
ensure_browser

# Claude Code's sandboxed Bash (tests/e2e/test_e2e_lookups.py) needs bubblewrap and socat:
# installed the same way, once (CTXMODE_NO_SANDBOX_INSTALL=1 leaves the machine alone).
ensure_sandbox_tools() {
  local missing=()
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v socat >/dev/null 2>&1 || missing+=(socat)
  [ ${#missing[@]} -gt 0 ] || return 0
  [ -z "${CTXMODE_NO_SANDBOX_INSTALL:-}" ] || return 0
  apt_install "the sandbox tests" "${missing[@]}"
}
ensure_sandbox_tools

exec .venv/bin/python -m pytest "$@"
