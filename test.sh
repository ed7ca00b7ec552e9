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
exec .venv/bin/python -m pytest "$@"
