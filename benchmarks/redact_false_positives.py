"""How often the masker masks what is no secret (issue 29), run by hand.

    python3 benchmarks/redact_false_positives.py                   # this checkout
    python3 benchmarks/redact_false_positives.py --base /tmp/v040  # and another, to compare
    python3 benchmarks/redact_false_positives.py --show 40         # print masked samples

Texts without secrets, the way a hook sees them: every string of the repository's real
recorded payloads and transcripts (``tests/fixtures/``: the clients' own, no secrets
planted), and ordinary code (every ``.py`` file of Python's standard library and of the
installed packages, cut into 8 KB pieces as a tool's output is). Each text is masked
whole (``redact.mask``); a mask there is a false positive unless the text holds a secret
(the stdlib and packages hold a few fake keys in their tests: ``--show`` lists every
sample to judge). Reported per corpus: texts, megabytes, texts changed, masks by kind, and
masks per megabyte. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIECE = 8 * 1024

CHILD = r"""
import json, sys, re
sys.path.insert(0, sys.argv[1])
from ctxmode import redact
mask_re = re.compile(r"\[REDACTED:([a-z0-9-]+)\]")
kinds_wanted = set(sys.argv[2].split(",")) if len(sys.argv) > 2 and sys.argv[2] else set()
out = {"texts": 0, "bytes": 0, "changed": 0, "kinds": {}, "samples": []}
for line in sys.stdin:
    text = json.loads(line)
    out["texts"] += 1
    out["bytes"] += len(text.encode("utf-8", "replace"))
    masked = redact.mask(text)
    if masked != text:
        before = set(mask_re.findall(text))
        kinds = [k for k in mask_re.findall(masked)]
        out["changed"] += 1
        for k in kinds:
            out["kinds"][k] = out["kinds"].get(k, 0) + 1
        for m in mask_re.finditer(masked):
            if m.group(1) in before or (kinds_wanted and m.group(1) not in kinds_wanted):
                continue
            a, b = max(0, m.start() - 60), m.end() + 30
            out["samples"].append(masked[a:b].replace("\n", "\\n"))
print(json.dumps(out))
"""


def _strings(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def fixture_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted((REPO / "tests" / "fixtures").rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".jsonl"):
            continue
        raw = path.read_text(encoding="utf-8", errors="replace")
        docs = raw.splitlines() if path.suffix == ".jsonl" else [raw]
        for doc in docs:
            try:
                texts.extend(t for t in _strings(json.loads(doc)) if len(t) > 3)
            except ValueError:
                continue
    return texts


def code_texts() -> list[str]:
    roots = {Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])}
    texts: list[str] = []
    for root in sorted(roots):
        for path in sorted(root.rglob("*.py")):
            if "site-packages" in path.parts and path.is_relative_to(REPO):
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            texts.extend(text[i : i + PIECE] for i in range(0, len(text), PIECE))
    return texts


def run(checkout: Path, texts: list[str], kinds: str = "") -> dict[str, object]:
    data = "".join(json.dumps(t) + "\n" for t in texts).encode()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(checkout), kinds],
        input=data,
        capture_output=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--show", type=int, default=0, help="print this many masked samples")
    parser.add_argument("--kinds", default="", help="show samples of these kinds (a,b,…)")
    parser.add_argument("--only", choices=("fixtures", "code"), help="one corpus")
    args = parser.parse_args()
    corpora = {}
    if args.only != "code":
        corpora["recorded fixtures"] = fixture_texts()
    if args.only != "fixtures":
        corpora["ordinary code"] = code_texts()
    checkouts = [("this", REPO)] + ([("base", args.base)] if args.base else [])
    for corpus, texts in corpora.items():
        for label, checkout in checkouts:
            r = run(checkout, texts, args.kinds)
            mb = int(r["bytes"]) / 1e6  # type: ignore[call-overload]
            kinds = Counter(r["kinds"])  # type: ignore[arg-type]
            total = sum(kinds.values())
            print(
                f"{corpus:<18} {label:<5} {r['texts']:>7,} texts {mb:7.1f} MB: "
                f"{r['changed']:>5} changed, {total:>5} masks ({total / mb:6.2f}/MB) "
                f"{dict(kinds.most_common())}"
            )
            if args.show and label == "this":
                for sample in r["samples"][: args.show]:  # type: ignore[index]
                    print("    ", sample)


if __name__ == "__main__":
    main()
