#!/bin/sh
# Run the end-to-end suites (tests/e2e) against the newest client releases: Claude Code
# and the Codex CLI both, in one pytest run. CI keeps the pinned versions (the default
# run, claude_cli.DEFAULT_VERSION and codex_cli.DEFAULT_VERSION); this is the one command
# that checks a client release before the pins move.
#
#   scripts/e2e-newest.sh                     the versions named below
#   scripts/e2e-newest.sh latest latest       whatever npm calls latest today
#   scripts/e2e-newest.sh 2.1.332 0.171.0 -k codex     more arguments go to pytest
#
# First use per version installs the package (~250 MB) into ~/.cache/ctxmode-e2e
# (CTXMODE_E2E_CACHE moves it). The versions used are printed before and after the tests.
set -eu
cd "$(dirname "$0")/.."
# The newest releases verified with the suite (issue #24); `latest` asks the registry.
CLAUDE_NEWEST=2.1.332
CODEX_NEWEST=0.171.0
CTXMODE_E2E_CLAUDE_VERSION=${1:-$CLAUDE_NEWEST}
CTXMODE_E2E_CODEX_VERSION=${2:-$CODEX_NEWEST}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
export CTXMODE_E2E_CLAUDE_VERSION CTXMODE_E2E_CODEX_VERSION
echo "e2e-newest: Claude Code $CTXMODE_E2E_CLAUDE_VERSION, Codex $CTXMODE_E2E_CODEX_VERSION" >&2
if [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=${PYTHON:-python3}; fi
exec "$PY" -m pytest tests/e2e -p no:randomly "$@"
