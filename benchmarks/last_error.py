"""How often the snapshot carries the error the agent was fighting, over generated long
sessions (tests/long_sessions.py) replayed through the hooks (in process, the real store).

    python3 benchmarks/last_error.py [SESSIONS] [FIRST_SEED] [--plain]

Each session (150–1,500 hook calls, seeded) ends with a failure not yet run again with
success. Counted: the snapshot the hooks hand back at the compaction, and snapshots built
from the stored events at budgets 1024–9000, whose first ``<error>`` is that failure (its
command, shortened at most) — and where it is anywhere among the errors. Without
``--plain`` the sessions also go back over their failures (run again with success,
failing alike after others, flaky tests; the generator's ``rework``).

The generator is read from this checkout; ``ctxmode`` is whichever one Python imports, so
``PYTHONPATH=/path/to/an/older/checkout python3 benchmarks/last_error.py`` measures that
version's snapshots on the same sessions (the baseline).
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
BUDGETS = (1024, 2048, 4096, 9000)


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("long_sessions", ROOT / "tests/long_sessions.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["long_sessions"] = module
    spec.loader.exec_module(module)
    return module


def measure(sessions: int, first_seed: int, rework: bool) -> dict[str, object]:
    import ctxmode
    from ctxmode import paths
    from ctxmode.snapshot import build_snapshot
    from ctxmode.store import Store

    gen = _generator()
    first = dict.fromkeys(["hook", *BUDGETS], 0)
    anywhere = dict.fromkeys(["hook", *BUDGETS], 0)
    counted = 0
    sizes = random.Random(7)
    shm = Path("/dev/shm")
    for seed in range(first_seed, first_seed + sessions):
        calls = sizes.randint(150, 1500)
        with tempfile.TemporaryDirectory(dir=shm if shm.is_dir() else None) as tmp:
            project = Path(tmp) / "proj"
            (project / ".git").mkdir(parents=True)
            env = {"CTXMODE_HOME": str(Path(tmp) / "data"), "CLAUDE_PROJECT_DIR": str(project)}
            generated, truth = gen.session(seed, calls, root=str(project), rework=rework)
            if not truth.last_error:
                continue
            counted += 1
            snapshots = {"hook": gen.replay_in_process(generated, env)}
            with Store.open(paths.store_path(str(project), env), readonly=True) as store:
                events = store.session_events(generated[0][1]["session_id"])
            for budget in BUDGETS:
                snapshots[budget] = build_snapshot(
                    events, session_id="s", compact_seq=1, budget=budget
                )
            for name, xml in snapshots.items():
                first[name] += gen.last_error_kept(xml, truth)
                keys = gen.error_keys(xml)
                anywhere[name] += any(k and truth.last_error.startswith(k) for k in keys)
    return {
        "ctxmode": str(Path(ctxmode.__file__).parent),
        "rework": rework,
        "sessions": counted,
        "first_error_is_the_last_unresolved": first,
        "last_unresolved_among_the_errors": anywhere,
    }


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--plain"]
    n = int(args[0]) if args else 50
    seed = int(args[1]) if len(args) > 1 else 1000
    print(json.dumps(measure(n, seed, "--plain" not in sys.argv), indent=2))
