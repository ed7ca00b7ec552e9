"""Where the session works and the work that goes on without it → ``worktree_change``,
``job_start`` and ``job_end`` events (pure).

Claude Code 2.1.3xx moves a session into a git worktree with a tool (EnterWorktree /
ExitWorktree), and tracks work with tools other than TaskCreate/TodoWrite: a cron job
(CronCreate/CronDelete), a wake-up of a self-paced loop (ScheduleWakeup), a background
monitor (Monitor), a workflow (Workflow), a background agent (Agent, in agents.py), any of
them stopped by TaskStop. A resumed model must know they are running or scheduled: their
results come later, as notifications it would otherwise not expect. Codex's goals
(create_goal/update_goal) are the same kind of open work. So are the findings of a review
(ReportFindings): the model is told not to repeat them as text, so the tool call is the
only place they are, and the fixes they call for are still to do.

Shapes from the payloads of Claude Code 2.1.332 (tests/fixtures/claude-code-2.1.332/tools/).
"""

from __future__ import annotations

from ctxmode.extract.common import (
    NOTIFICATION_TAGS,
    as_dict,
    as_int,
    clip,
    id_str,
    one_line,
    s,
    tag_text,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ctxmode.extract.common import Draft
    from ctxmode.payload import HookInput

WHAT_CHARS = 200
COMMAND_CHARS = 200
PATH_CHARS = 400
# A self-paced loop has one pending wake-up at a time: its events share this id.
WAKEUP_ID = "wakeup"
# Codex has one goal per thread: its events share this id.
GOAL_ID = "goal"


def _what(*values: object) -> str:
    for value in values:
        text = one_line(s(value))
        if text:
            return clip(text, WHAT_CHARS)
    return ""


# -- worktrees -----------------------------------------------------------------------------


def worktree_enter(inp: HookInput) -> list[Draft]:
    """EnterWorktree → ``worktree_change {path, [branch], via, [created]}``: the session now
    works there (a new worktree when the call named one, else an existing one's path)."""
    response = as_dict(inp.tool_response)
    path = s(response.get("worktreePath")) or s(inp.tool_input.get("path")) or inp.cwd
    if not path:
        return []
    data: dict[str, object] = {"path": clip(path, PATH_CHARS), "via": "enter"}
    branch = s(response.get("worktreeBranch"))
    if branch:
        data["branch"] = clip(branch, 200)
    if not inp.tool_input.get("path"):
        data["created"] = True
    return [("worktree_change", data)]


def worktree_exit(inp: HookInput) -> list[Draft]:
    """ExitWorktree → ``worktree_change {path, via, left, [left_branch], [removed]}``: back
    where the session started; the worktree it left is kept (or removed) with its branch."""
    response = as_dict(inp.tool_response)
    path = s(response.get("restoredCwd")) or s(response.get("originalCwd")) or inp.cwd
    if not path:
        return []
    data: dict[str, object] = {"path": clip(path, PATH_CHARS), "via": "exit"}
    left = s(response.get("worktreePath"))
    if left:
        data["left"] = clip(left, PATH_CHARS)
    left_branch = s(response.get("worktreeBranch"))
    if left_branch:
        data["left_branch"] = clip(left_branch, 200)
    if s(response.get("action") or inp.tool_input.get("action")) == "remove":
        data["removed"] = True
    return [("worktree_change", data)]


# -- jobs ------------------------------------------------------------------------------------


def cron_create(inp: HookInput) -> list[Draft]:
    """CronCreate → ``job_start {kind: cron, id, what, schedule, [once], [durable]}``."""
    response = as_dict(inp.tool_response)
    data: dict[str, object] = {
        "kind": "cron",
        "id": clip(id_str(response.get("id")), 80),
        "what": _what(inp.tool_input.get("prompt")),
        "schedule": clip(s(response.get("humanSchedule")) or s(inp.tool_input.get("cron")), 120),
    }
    if response.get("recurring", inp.tool_input.get("recurring", True)) is False:
        data["once"] = True
    if response.get("durable", inp.tool_input.get("durable")) is True:
        data["durable"] = True
    return [("job_start", data)] if data["id"] or data["what"] else []


def cron_delete(inp: HookInput) -> list[Draft]:
    """CronDelete → ``job_end {kind: cron, id, status: deleted}``."""
    job = id_str(inp.tool_input.get("id")) or id_str(as_dict(inp.tool_response).get("id"))
    return [("job_end", {"kind": "cron", "id": clip(job, 80), "status": "deleted"})] if job else []


def wakeup(inp: HookInput) -> list[Draft]:
    """ScheduleWakeup → ``job_start {kind: wakeup, id, what, schedule}``, or with
    ``stop: true`` ``job_end {kind: wakeup, id, status: stopped}`` (the loop ends)."""
    if inp.tool_input.get("stop") is True or as_dict(inp.tool_response).get("stopped") is True:
        return [("job_end", {"kind": "wakeup", "id": WAKEUP_ID, "status": "stopped"})]
    response = as_dict(inp.tool_response)
    seconds = as_int(response.get("clampedDelaySeconds")) or as_int(
        inp.tool_input.get("delaySeconds")
    )
    data: dict[str, object] = {
        "kind": "wakeup",
        "id": WAKEUP_ID,
        "what": _what(inp.tool_input.get("prompt"), inp.tool_input.get("reason")),
    }
    if seconds:
        data["schedule"] = f"in {seconds} s"
    reason = _what(inp.tool_input.get("reason"))
    if reason and reason != data["what"]:
        data["reason"] = reason
    return [("job_start", data)]


def monitor(inp: HookInput) -> list[Draft]:
    """Monitor → ``job_start {kind: monitor, id, what, [command]}`` (its events arrive as
    notifications until it exits, times out or is stopped)."""
    response = as_dict(inp.tool_response)
    data: dict[str, object] = {
        "kind": "monitor",
        "id": clip(id_str(response.get("taskId")), 80),
        "what": _what(inp.tool_input.get("description")),
    }
    command = one_line(s(inp.tool_input.get("command")))
    if command:
        data["command"] = clip(command, COMMAND_CHARS)
    return [("job_start", data)]


def workflow(inp: HookInput) -> list[Draft]:
    """Workflow → ``job_start {kind: workflow, id, what}`` (it runs in the background; a
    notification brings its result)."""
    response = as_dict(inp.tool_response)
    name = s(response.get("workflowName")) or s(inp.tool_input.get("name"))
    summary = s(response.get("summary"))
    what = _what(f"{name}: {summary}" if name and summary else name or summary)
    job = id_str(response.get("taskId")) or id_str(response.get("runId"))
    if not job and not what:
        return []
    return [("job_start", {"kind": "workflow", "id": clip(job, 80), "what": what})]


def task_stop(inp: HookInput) -> list[Draft]:
    """TaskStop → ``job_end {id, status: stopped}`` (a monitor, a background shell or agent)."""
    response = as_dict(inp.tool_response)
    job = (
        id_str(response.get("task_id"))
        or id_str(inp.tool_input.get("task_id"))
        or id_str(inp.tool_input.get("shell_id"))
    )
    return [("job_end", {"id": clip(job, 80), "status": "stopped"})] if job else []


def goal_create(inp: HookInput) -> list[Draft]:
    """Codex create_goal → ``job_start {kind: goal, id, what}``."""
    what = _what(inp.tool_input.get("objective"))
    return [("job_start", {"kind": "goal", "id": GOAL_ID, "what": what})] if what else []


def goal_update(inp: HookInput) -> list[Draft]:
    """Codex update_goal → ``job_end {kind: goal, id, status}`` when the goal is complete,
    else a ``job_start`` keeping it open with its status (blocked, paused)."""
    status = s(inp.tool_input.get("status")).strip().lower()
    if not status:
        return []
    if status == "complete":
        return [("job_end", {"kind": "goal", "id": GOAL_ID, "status": "complete"})]
    return [("job_start", {"kind": "goal", "id": GOAL_ID, "status": clip(status, 24)})]


MAX_FINDINGS = 10
FINDING_CHARS = 240


def findings(inp: HookInput) -> list[Draft]:
    """ReportFindings → one ``finding {text, [path], [line]}`` per finding still to act on
    (a re-report after the fixes sets each one's ``outcome``: those are done)."""
    listed = inp.tool_input.get("findings")
    if not isinstance(listed, list):
        return []
    out: list[Draft] = []
    for entry in listed[:MAX_FINDINGS]:
        if not isinstance(entry, dict) or s(entry.get("outcome")):
            continue
        summary = one_line(s(entry.get("summary")) or s(entry.get("short_summary")))
        if not summary:
            continue
        path = s(entry.get("file"))
        line = as_int(entry.get("line"))
        where = f"{path}:{line}" if path and line else path
        data: dict[str, object] = {
            "text": clip(f"{where}: {summary}" if where else summary, FINDING_CHARS)
        }
        if path:
            data["path"] = clip(path, PATH_CHARS)
        if line:
            data["line"] = line
        out.append(("finding", data))
    return out


# -- what the client tells the model when background work ends ------------------------

# Claude Code writes a user turn when a background command or agent ends (2.1.3xx fires
# UserPromptSubmit with it; older clients only write it to the transcript, read back by
# ``ctxmode import``): ``<task-notification>`` (``<bash-notification>`` in some 2.0.x)
# with the task's id, its status, a summary line ("Background command "Run the tests"
# failed with exit code 1", "Agent "Review auth" completed") and an agent's report.
SUMMARY_CHARS = 300


def notification(inp: HookInput) -> list[Draft]:
    """A task notification → ``job_end {id, status, [what], [result]}``: the background
    work it names ended (completed, failed, killed), what the client said of it, and
    what an agent reported. A notification without a status (a monitor's event) ends
    nothing: none."""
    from ctxmode.extract.agents import report_excerpt

    text = s(inp.prompt)
    if not text.lstrip().startswith(NOTIFICATION_TAGS):
        return []
    job = tag_text(text, "task-id") or tag_text(text, "shell-id")
    status = one_line(tag_text(text, "status"))
    if not job.strip() or not status:
        return []
    data: dict[str, object] = {"id": clip(job.strip(), 80), "status": clip(status, 40)}
    summary = one_line(tag_text(text, "summary"))
    if summary:
        data["what"] = clip(summary, SUMMARY_CHARS)
    result = tag_text(text, "result").strip()
    if result:
        # A background agent's report is its only answer (its Agent call returned at
        # once): kept as a subagent's is.
        data["result"] = report_excerpt(result)
    return [("job_end", data)]
