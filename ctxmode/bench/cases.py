"""What the benchmark runs: its limits, the hook calls it measures (each host's ``CASES``,
in the order of a session: :func:`host_cases`) and the targets each is held to."""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_RUNS = 40
MAX_RUNS = 10_000
# A 95th percentile of n runs is a run other than the slowest only from n = 20 on
# (nearest rank: ceil(0.95 n) < n). Below that the "p95" would be the maximum under
# another name, so the report shows the maximum, says so, and judges no p95 target.
P95_MIN_RUNS = 20
SEED_EVENTS = 1000
SESSION_ID = "bench-0f3c9a52-5d1e-4b7a-9a30-6c2e1d8b4f71"
SEED_SOURCE = "bench-seed"
BIG_PAYLOAD_BYTES = 20 * 1024 * 1024
MIB = 1024 * 1024

# Targets of issue 7 (ratios to the floor's median; memory in MiB).
TOOL_TARGET = (2.5, 3.5)
MEMORY_TARGET_MIB = 16.0
BIG_MEMORY_TARGET_MIB = 64.0


class BenchError(Exception):
    """The benchmark cannot run (no hook command, unreadable settings, ...)."""


@dataclass(frozen=True)
class Case:
    """One benchmarked hook call: which event, which bundled payload, which targets."""

    name: str
    event: str
    payload: str  # a key of the payload templates, or of the files its host made (prepare)
    target_p50: float | None = None
    target_p95: float | None = None
    target_rss_mib: float = MEMORY_TARGET_MIB
    memory_case: bool = False  # few runs: it is there for its peak memory


@dataclass
class HostCommands:
    """A host's hook commands to measure: ``commands`` (case event → command), the
    interpreter its hooks start (``python``: the floor of the report) and each command's
    (``pythons``: the floor of each case; the main one where not given), where the
    commands came from (``source``: "" for those ``ctxmode install`` would write) and what
    the report should say of them (``notes``)."""

    commands: dict[str, str]
    python: str | None = None
    pythons: dict[str, str] = field(default_factory=dict)
    source: str = ""
    notes: list[str] = field(default_factory=list)


def host_cases() -> tuple[Case, ...]:
    """Every host's cases (``ctxmode/hosts/<name>/bench.py``), in the registry's order:
    each host's in the order of a session. A host's cases claim only what its own calls
    stored before them in the round (the default host's SessionStart ``compact`` claims
    its PreCompact's snapshot before the others' run)."""
    from ctxmode import hosts

    return tuple(case for name in hosts.NAMES for case in hosts.part(name, "bench").CASES)
