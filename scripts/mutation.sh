#!/usr/bin/env bash
# Mutation testing of the hook handlers, the claim code, the snapshot builder and the
# redaction (scripts/mutation.py, stdlib only): mutates a private copy of the committed
# tree, never the working tree. Prints the kill rate per target; survivors go to the log.
#
#   scripts/mutation.sh                                  # all targets, 2 jobs
#   scripts/mutation.sh handlers claim                   # some targets
#   JOBS=1 SAMPLE=200 scripts/mutation.sh snapshot       # a seeded sample of the mutants
set -euo pipefail
cd "$(dirname "$0")/.."
py=.venv/bin/python
[ -x "$py" ] || { echo "mutation.sh: run ./test.sh once first (it makes .venv)" >&2; exit 2; }
tree=$(mktemp -d "${TMPDIR:-/tmp}/ctxmode-mutation-tree.XXXXXX")
trap 'rm -rf "$tree"' EXIT
git archive HEAD | tar -x -C "$tree"
args=(--root "$tree" --jobs "${JOBS:-2}" --log "${LOG:-mutation-report.tsv}")
[ -n "${SAMPLE:-}" ] && args+=(--sample "$SAMPLE" --seed "${SEED:-0}")
"$py" scripts/mutation.py "${args[@]}" "$@"  # not exec: the trap removes the tree
