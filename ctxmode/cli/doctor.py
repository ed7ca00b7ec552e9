"""``ctxmode doctor``: run the checks of :mod:`ctxmode.doctor` and format them."""

from __future__ import annotations

import os
import time

import click

from ctxmode import __version__, doctor, hosts
from ctxmode.cli.common import color_enabled, echo_json, project_option, resolve_project
from ctxmode.wording import plural

GROUP_TITLES = {
    "environment": "Environment",
    "data": "Data",
    "config": "Configuration",
    "store": "This project's store",
    "log": "Hook log",
    "import": "Transcripts not imported",
}


def group_title(group: str) -> str:
    """A group's heading: a host's checks are headed with its name (``ctxmode.hosts``)."""
    if group in GROUP_TITLES:
        return GROUP_TITLES[group]
    for name in hosts.NAMES:
        if getattr(hosts.part(name, "doctor"), "GROUP", None) == group:
            return f"{hosts.get(name).LABEL} hooks"
    return group.title()


COLOURS = {doctor.OK: "green", doctor.WARN: "yellow", doctor.FAIL: "red"}
MAX_DETAILS = 10


def render(checks: list[doctor.Check], project_dir: str, *, colour: bool) -> str:
    """The report as text: one line per check, then its details and its fix."""
    name_w = max((len(check.name) for check in checks), default=0)
    lines = [f"ctxmode doctor {__version__}, project {project_dir}"]
    group = None
    for check in checks:
        if check.group != group:
            group = check.group
            lines.append("")
            lines.append(group_title(group))
        status = f"{check.status:<4}"
        if colour:
            status = click.style(status, fg=COLOURS[check.status], bold=check.status != "ok")
        lines.append(f"  {status}  {check.name:<{name_w}}  {check.summary}")
        pad = " " * (10 + name_w)
        shown = check.details[:MAX_DETAILS]
        lines.extend(f"{pad}{detail}" for detail in shown)
        if len(check.details) > MAX_DETAILS:
            lines.append(f"{pad}... and {len(check.details) - MAX_DETAILS} more")
        if check.fix and check.status != doctor.OK:
            lines.append(f"{pad}fix: {check.fix}")
    counts = {status: sum(1 for c in checks if c.status == status) for status in doctor.STATUSES}
    lines.append("")
    switched_off = any(check.name == "switched off" for check in checks)
    lines.append(
        f"{counts['ok']} ok, {plural(counts['warn'], 'warning')}, "
        f"{plural(counts['fail'], 'failure')}"
        + (
            ""
            if counts["fail"]
            else " - ctxmode is switched off here"
            if switched_off
            else " - ctxmode is working"
        )
    )
    return "\n".join(lines)


@click.command(name="doctor")
@project_option
@click.option("--json", "as_json", is_flag=True, help="One JSON document (for machines).")
def doctor_cmd(project: str | None, as_json: bool) -> None:
    """Check the install, the hooks, the store and the log.

    Each check is ok, warn or fail, with a one-line explanation and a fix. Doctor
    only looks: it fixes nothing itself. Exit status 0 when nothing fails, else 1.
    """
    project_dir = resolve_project(project)
    ctx = doctor.Context(env=dict(os.environ), project_dir=project_dir, now=time.time())
    checks = doctor.run_all(ctx)
    code = doctor.exit_code(checks)
    if as_json:
        echo_json(
            {
                "version": __version__,
                "project_dir": project_dir,
                "ok": code == 0,
                "counts": {s: sum(1 for c in checks if c.status == s) for s in doctor.STATUSES},
                "checks": [check.as_dict() for check in checks],
            }
        )
    else:
        click.echo(render(checks, project_dir, colour=color_enabled()))
    click.get_current_context().exit(code)
