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
# The browser test (tests/test_view_browser.py) drives a real Chromium. Where none is
# installed and apt-get can install one (root, or sudo without a password), Debian's
# chromium is installed once, quietly; elsewhere that test skips and says why.
# CTXMODE_NO_BROWSER_INSTALL=1 leaves the machine alone.
ensure_browser() {
  local name sudo=""
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    command -v "$name" >/dev/null 2>&1 && return 0
  done
  [ -z "${CTXMODE_NO_BROWSER_INSTALL:-}" ] || return 0
  command -v apt-get >/dev/null 2>&1 || return 0
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 0
    sudo="sudo -n"
  fi
  echo "test.sh: installing chromium for the browser test (apt-get)" >&2
  if ! { $sudo apt-get update -qq \
      && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends chromium; } >/dev/null 2>&1; then
    echo "test.sh: chromium could not be installed; the browser test will skip" >&2
  fi
}
ensure_browser

# Claude Code's sandboxed Bash (tests/e2e/test_e2e_lookups.py) needs bubblewrap and socat:
# installed the same way, once, where apt-get can (CTXMODE_NO_SANDBOX_INSTALL=1: not).
ensure_sandbox_tools() {
  local sudo="" missing=""
  command -v bwrap >/dev/null 2>&1 || missing="$missing bubblewrap"
  command -v socat >/dev/null 2>&1 || missing="$missing socat"
  [ -n "$missing" ] || return 0
  [ -z "${CTXMODE_NO_SANDBOX_INSTALL:-}" ] || return 0
  command -v apt-get >/dev/null 2>&1 || return 0
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null || return 0
    sudo="sudo -n"
  fi
  echo "test.sh: installing$missing for the sandbox tests (apt-get)" >&2
  # shellcheck disable=SC2086  # $missing: one word per package
  if ! { $sudo apt-get update -qq \
      && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends $missing; } >/dev/null 2>&1; then
    echo "test.sh:$missing could not be installed; the sandbox tests will fail" >&2
  fi
}
ensure_sandbox_tools

exec .venv/bin/python -m pytest "$@"
