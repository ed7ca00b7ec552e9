#!/bin/sh
# Install (or find in the cache) the Claude Code CLI the end-to-end suite runs against,
# and print its version and path. The suite does this by itself on first use; run this
# to warm a CI cache or to check the npm registry is reachable.
#
#   scripts/e2e-install-claude.sh              the pinned, verified version
#   scripts/e2e-install-claude.sh latest       the newest release (or any version)
#
# Environment: CTXMODE_E2E_CACHE moves the cache (default ~/.cache/ctxmode-e2e).
set -eu
cd "$(dirname "$0")/.."
if [ $# -gt 0 ]; then
    CTXMODE_E2E_CLAUDE_VERSION=$1
    export CTXMODE_E2E_CLAUDE_VERSION
fi
exec "${PYTHON:-python3}" -c '
import sys
from tests.e2e.claude_cli import Unavailable, ensure_claude
try:
    found = ensure_claude()
except Unavailable as exc:
    sys.exit(f"Claude Code unavailable: {exc}")
print(f"Claude Code {found.version}: {found.executable}")
'
