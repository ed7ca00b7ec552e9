"""What the benchmark runs: its limits, the hook calls it measures (:data:`CASES`, in the
order of a session) and the targets each is held to."""

from __future__ import annotations

from dataclasses import dataclass

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


# The "event" of the status line command (Claude Code's ``statusLine``, no hook event).
STATUS_LINE = "StatusLine"
# The prefix of a case's "event" that runs the Codex CLI's hook command of that event.
CODEX = "codex:"
# The prefix of a case's "event" that runs the Gemini CLI's hook command of that event
# (Gemini's event names: AfterTool, BeforeModel, ...).
GEMINI = "gemini:"
# Payloads made at run time, too big for the bundled file: BeforeModel's stdin is the whole
# conversation (GEMINI_REQUEST_BYTES of it), without and with a compression summary.
GEMINI_PLAIN = "gemini_model_plain"
GEMINI_SUMMARY = "gemini_model_summary"
GEMINI_REQUEST_BYTES = 1 * 1024 * 1024
# Gemini's BeforeModel runs before every model request: with nothing to add it should cost
# about one interpreter start (issue 24).
MODEL_TARGET = (1.3, 1.8)
# The prefix of a case's "event" that runs the event's capture command in the background
# form (``--background``: what Claude Code >= 2.1.19 starts without waiting for it).
BACKGROUND = "background:"


class BenchError(Exception):
    """The benchmark cannot run (no hook command, unreadable settings, ...)."""


@dataclass(frozen=True)
class Case:
    """One benchmarked hook call: which event, which bundled payload, which targets."""

    name: str
    event: str
    payload: str  # key in bench_payloads.json, or "big" for the 20 MB Write
    target_p50: float | None = None
    target_p95: float | None = None
    target_rss_mib: float = MEMORY_TARGET_MIB
    memory_case: bool = False  # few runs: it is there for its peak memory


# In the order of a session; the order matters: PreCompact stores the snapshot that the
# following SessionStart (compact) claims, and the failure's error is resolved by the
# Bash success that follows it in the same round.
CASES: tuple[Case, ...] = (
    # Gemini first: its BeforeModel with a summary claims the session's compaction snapshot
    # once (building it in the first round, serving it from the cache after), before any
    # PreCompact of a round leaves one for SessionStart (compact) to claim.
    Case(
        "Gemini BeforeModel, no summary",
        GEMINI + "BeforeModel",
        GEMINI_PLAIN,
        *MODEL_TARGET,
    ),
    Case(
        "Gemini BeforeModel, snapshot",
        GEMINI + "BeforeModel",
        GEMINI_SUMMARY,
        3.5,
    ),
    Case("Gemini AfterTool run_shell_command", GEMINI + "AfterTool", "gemini_shell", *TOOL_TARGET),
    Case("PostToolUse Edit", "PostToolUse", "edit", *TOOL_TARGET),
    # The same capture as the client runs it in the background: the agent does not wait
    # for it; this is the process's own cost, spent beside the agent loop.
    Case("PostToolUse Edit, background", BACKGROUND + "PostToolUse", "edit", *TOOL_TARGET),
    Case("PostToolUse Read", "PostToolUse", "read", *TOOL_TARGET),
    Case("PostToolUseFailure Bash", "PostToolUseFailure", "failure", *TOOL_TARGET),
    Case("PostToolUse Bash", "PostToolUse", "bash", *TOOL_TARGET),
    Case("PostToolUse TaskCreate", "PostToolUse", "task", *TOOL_TARGET),
    # The same hooks run by the Codex CLI (``--host codex``): its payloads, its rollout file.
    Case("Codex PostToolUse Bash", CODEX + "PostToolUse", "codex_bash", *TOOL_TARGET),
    Case("Codex PostToolUse apply_patch", CODEX + "PostToolUse", "codex_patch", *TOOL_TARGET),
    Case("Codex UserPromptSubmit", CODEX + "UserPromptSubmit", "codex_prompt", 2.5),
    Case("UserPromptSubmit", "UserPromptSubmit", "prompt", 2.5),
    Case("PreCompact (1,000 events)", "PreCompact", "pre_compact", 3.5),
    Case("SessionStart compact (1,000 events)", "SessionStart", "session_start_compact", 3.0),
    Case("PostCompact", "PostCompact", "post_compact"),
    Case("SessionEnd (1,000 events)", "SessionEnd", "session_end"),
    Case("SessionStart startup", "SessionStart", "session_start_startup"),
    # Not a hook, but run as often (after each message): held to a capture hook's bounds.
    Case("Status line (1,000 events)", STATUS_LINE, "statusline", *TOOL_TARGET),
    Case(
        "PostToolUse Write, 20 MB",
        "PostToolUse",
        "big",
        target_rss_mib=BIG_MEMORY_TARGET_MIB,
        memory_case=True,
    ),
)
