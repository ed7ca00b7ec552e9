#!/usr/bin/env bash
# Long reliability runs (issue 6): the slow variants of the crash, contention, claim,
# fuzz and migration tests, then a coverage-guided fuzz of the hook entry point when
# atheris is installed. The default test run (./test.sh) has the short versions.
#
#   scripts/soak.sh                 # slow tests once, then 10 min of atheris if available
#   SOAK_SCALE=5 scripts/soak.sh    # five times the kills, rounds, claims and cases
#   FUZZ_SECONDS=3600 scripts/soak.sh
#   FUZZ_SECONDS=0 scripts/soak.sh  # no atheris run
#
# What runs (figures per SOAK_SCALE=1; each test prints its own at the end):
#   test_reliability_crash       150 rounds x 8 writers, half SIGKILLed (~600 kills),
#                                100 store creations under kills, 120 killed PreCompacts
#   test_reliability_contention  10 rounds of 64 writers + CLI readers + a PreCompact
#   test_reliability_claims      20 races of 32 claimers across all sources
#   test_fuzz_hooks              5000 structure-aware cases in process, 600 as processes
#   test_migrations_upgrade      40 upgrades killed at points spread over the step
# Exit status: non-zero if any test failed or the fuzzer found an input that breaks
# the hook contract (libFuzzer saves it as crash-* in the corpus folder).
set -euo pipefail
cd "$(dirname "$0")/.."

# The tests that generate secrets draw new values each run here (fixed in ./test.sh).
export CTXMODE_RANDOM_SEEDS=1
export CTXMODE_SOAK_SCALE="${SOAK_SCALE:-1}"
# A soak at scale may run longer than the default suite's per-test hang limit (600 s).
export CTXMODE_TEST_HANG_LIMIT="${CTXMODE_TEST_HANG_LIMIT:-0}"
FUZZ_SECONDS="${FUZZ_SECONDS:-600}"
PYTHON="${PYTHON:-$( [ -x .venv/bin/python ] && echo .venv/bin/python || command -v python3 )}"

echo "== slow reliability tests (scale ${CTXMODE_SOAK_SCALE})"
"$PYTHON" -m pytest -m slow -q -s \
  tests/test_reliability_crash.py tests/test_reliability_contention.py \
  tests/test_reliability_claims.py tests/test_fuzz_hooks.py tests/test_migrations_upgrade.py

if [ "$FUZZ_SECONDS" -gt 0 ]; then
  if "$PYTHON" -c 'import atheris' 2>/dev/null; then
    corpus="${FUZZ_CORPUS:-$(mktemp -d -t ctxmode-corpus-XXXXXX)}"
    echo "== atheris: ${FUZZ_SECONDS}s on fuzz/fuzz_hooks.py, corpus in $corpus"
    "$PYTHON" fuzz/fuzz_hooks.py "$corpus" -artifact_prefix="$corpus/" \
      -max_total_time="$FUZZ_SECONDS" -max_len=16384 -print_final_stats=1 2>&1 | tail -25
  else
    echo "== atheris is not installed (pip install atheris): coverage-guided fuzzing skipped"
  fi
fi
