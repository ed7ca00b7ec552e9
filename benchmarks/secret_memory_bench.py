"""What remembering masked secrets costs a hook (issue 29), in instructions, run by hand.

    python3 benchmarks/secret_memory_bench.py                     # this checkout
    python3 benchmarks/secret_memory_bench.py --base /tmp/v040    # and a checkout to compare

Wall time on a shared machine moves with its load; instructions do not. Each case runs
the real hook command (``python -I -S <shim>``, the bench's payloads of Claude Code
2.1.197 on stdin, a throwaway store seeded with a 1,000-event session) under
``valgrind --tool=cachegrind --cache-sim=no`` and reports the instructions executed
(``I refs``), as a ratio to the bare interpreter start (``python -I -S -c pass``)
counted the same way. Three states per checkout: the bench's project as it is (no
secret ever masked), and the same with a memory of ``--remembered`` masked secrets
(``ctxmode.secret_memory``; the payloads hold none of them, so every word of a
remembered length is hashed for nothing: the cost a project with secrets pays on each
call), and a payload that repeats one of them. Not part of the test run.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import string
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CASES = ("edit", "bash", "failure", "prompt", "task", "commit")
SESSION = "bench-session"


def instructions(argv: list[str], stdin: bytes, env: dict[str, str]) -> int:
    """Instructions (I refs) one process executed, by cachegrind."""
    with tempfile.NamedTemporaryFile(prefix="cg-", suffix=".out") as out:
        done = subprocess.run(
            ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out.name}",
             *argv],
            input=stdin, capture_output=True, env=env, timeout=600, check=False,
        )  # fmt: skip
    found = re.search(rb"I\s+refs:\s+([\d,]+)", done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{argv}: {done.stderr[-600:].decode(errors='replace')}")
    return int(found.group(1).replace(b",", b""))


CHILD_SEED = """
import json, sys
sys.path.insert(0, sys.argv[1])
from ctxmode import bench
from ctxmode.bench import payloads
env = {"CTXMODE_HOME": sys.argv[2]}
payloads.seed_session(env, sys.argv[3], bench.load_payloads(), 1000)
"""

CHILD_REMEMBER = """
import sys
sys.path.insert(0, sys.argv[1])
from ctxmode import paths, secret_memory
root, project, values = sys.argv[2], sys.argv[3], sys.argv[4:]
memory = secret_memory.fresh(root, "earlier")
memory.remember({v: "credential" for v in values})
secret_memory.save(root, paths.store_path(project, {"CTXMODE_HOME": root}), memory)
"""


def run_checkout(checkout: Path, remembered: int, rng: random.Random) -> dict[str, int]:
    python = sys.executable
    sys.path.insert(0, str(checkout))
    from ctxmode.bench import payloads  # the bundled payloads are the same in both

    bundle = payloads.load_payloads()
    counts: dict[str, int] = {}
    values = [
        "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(6, 14)))
        + "".join(rng.choice(string.digits) for _ in range(rng.randint(2, 6)))
        for _ in range(remembered)
    ]
    has_memory = (checkout / "ctxmode" / "secret_memory.py").exists()
    states = ["none", "remembered", "repeated"] if has_memory else ["none"]
    for state in states:
        with tempfile.TemporaryDirectory(prefix="ctxmode-mem-bench-") as tmp:
            root = os.path.join(tmp, "root")
            project = os.path.join(tmp, "proj")
            os.makedirs(os.path.join(project, ".git"))
            subprocess.run([python, "-c", CHILD_SEED, str(checkout), root, project], check=True)
            if state != "none":
                subprocess.run(
                    [python, "-c", CHILD_REMEMBER, str(checkout), root, project, *values],
                    check=True,
                )
            env = {**payloads.hook_env(root, project), "PYTHONDONTWRITEBYTECODE": "1"}
            counts[f"floor/{state}"] = instructions([python, "-I", "-S", "-c", "pass"], b"", env)
            for n, name in enumerate(CASES):
                template = bundle["payloads"][name]
                event = template["hook_event_name"]
                data = payloads.render(template, project, SESSION, 5000 + n)
                if state == "repeated":
                    raw = json.loads(data)
                    raw.setdefault("tool_input", {})["description"] = f"retry with {values[0]}"
                    raw["prompt"] = raw.get("prompt", "") + f" use {values[0]}"
                    data = json.dumps(raw).encode()
                shim = checkout / "ctxmode" / "hooks" / f"{_shim(event)}.py"
                argv = [python, "-I", "-S", str(shim)]
                # Once unmeasured: a module changed since its last run compiles then.
                subprocess.run(argv, input=data, env=env, capture_output=True, check=False)
                counts[f"{name}/{state}"] = instructions(argv, data, env)
    sys.path.remove(str(checkout))
    for module in [m for m in sys.modules if m == "ctxmode" or m.startswith("ctxmode.")]:
        del sys.modules[module]
    return counts


def _shim(event: str) -> str:
    return {
        "PostToolUse": "post_tool_use",
        "PostToolUseFailure": "post_tool_use_failure",
        "UserPromptSubmit": "user_prompt_submit",
    }[event]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", type=Path, help="another checkout to compare with")
    parser.add_argument("--remembered", type=int, default=50, help="secrets in the memory")
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args()
    checkouts = [("this", REPO)] + ([("base", args.base)] if args.base else [])
    results = {label: run_checkout(path, args.remembered, random.Random(args.seed))
               for label, path in checkouts}  # fmt: skip
    print(f"instructions per hook call, as a ratio to the bare interpreter ({args.remembered}"
          " secrets remembered where a memory is)")  # fmt: skip
    header = "case".ljust(12) + "".join(
        f"{label + '/' + state:>18}" for label, r in results.items()
        for state in ("none", "remembered", "repeated") if f"floor/{state}" in r
    )  # fmt: skip
    print(header)
    for name in CASES:
        row = name.ljust(12)
        for _label, counts in results.items():
            for state in ("none", "remembered", "repeated"):
                if f"{name}/{state}" in counts:
                    row += f"{counts[f'{name}/{state}'] / counts[f'floor/{state}']:>18.3f}"
        print(row)
    floor = results["this"]["floor/none"]
    print(f"floor: {floor:,} instructions")


if __name__ == "__main__":
    main()
