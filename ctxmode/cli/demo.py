"""``ctxmode demo``: replay the bundled session through the real hooks, show the result."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile

import click
import orjson

from ctxmode import demo
from ctxmode.cli.common import color_enabled
from ctxmode.wording import plural

RULE = "-" * 72
_TAG = re.compile(r"<[^>]*>")


def _colour_tags(text: str) -> str:
    # Only colour codes are added around the tags; the characters themselves are unchanged.
    return _TAG.sub(lambda m: click.style(m.group(0), fg="cyan"), text)


# The field that says what an event is about, by preference (see events.TYPES).
_MAIN_KEYS = ("text", "subject", "message", "plan", "path", "query", "url", "intent", "error")


def _data_text(data: str, width: int = 80) -> str:
    """An event's data for a person: its main field, else ``key=value`` pairs."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        value = data
    if isinstance(value, dict):
        main = next((value[k] for k in _MAIN_KEYS if isinstance(value.get(k), str)), None)
        if main is None:
            main = ", ".join(f"{k}={v}" for k, v in value.items())
        value = main
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def render(result: demo.DemoResult, *, colour: bool) -> str:
    """The demo report (everything but the install hint)."""
    lines = [
        f"ctxmode demo: a recorded Claude Code session ({plural(len(result.results), 'hook call')}) "
        "replayed through the real hooks",
        "into a throwaway store; nothing of yours is read or written.",
        "",
    ]
    counts: dict[str, int] = {}
    for outcome in result.results:
        counts[outcome.call.event] = counts.get(outcome.call.event, 0) + 1
    failed = list(result.problems)
    verdict = (
        "all exited 0, nothing on stderr"
        if not failed
        else f"{plural(len(failed), 'problem')}, listed at the end"
    )
    lines.append(
        f"Replayed {plural(len(result.results), 'hook call')} in {result.seconds:.1f} s: {verdict}."
    )
    lines.append("  " + ", ".join(f"{event} x{n}" for event, n in counts.items()))
    lines.append("")
    lines.append(f"Captured {plural(len(result.events), 'event')}, by category:")
    for category, count, types in demo.category_counts(result.events):
        lines.append(f"  {category:<13}{count:>3}  {', '.join(types)}")
    chosen = demo.highlights(result.events)
    if chosen:
        lines.append("")
        lines.append("A few of them (p1 = critical ... p5 = minor):")
        width = max(len(event.type) for event in chosen)
        for event in chosen:
            lines.append(
                f"  p{event.priority}  {event.category:<12} {event.type:<{width}}  "
                f"{_data_text(event.data)}"
            )
    lines.append("")
    compact = next((r for r in result.resumes if r.get("kind") == "compact"), None)
    if result.snapshot is not None:
        size = len(result.snapshot.encode("utf-8"))
        seq = compact["compact_seq"] if compact else "?"
        lines.append(
            f'PreCompact stored snapshot #{seq}; SessionStart (source "compact") injected it '
            f"({size:,} bytes), exactly as the model receives it:"
        )
        lines.append(RULE)
        body = result.snapshot.rstrip("\n")
        lines.append(_colour_tags(body) if colour else body)
        lines.append(RULE)
    else:
        lines.append("No snapshot was injected after the compaction.")
    if not failed:
        lines.append(
            "The sample's secrets (an MCP api_key, a <private> token) never reached the store."
        )
    else:
        lines.append("")
        lines.append("Problems:")
        lines.extend(f"  - {problem}" for problem in failed)
    return "\n".join(lines)


INSTALL_HINT = (
    "To use it for real: ./install.sh in a clone of ctxmode, or `ctxmode install` if the "
    "package is installed; then `ctxmode doctor`."
)


def cli_command() -> str:
    """The ctxmode command of this installation, as a shell word (or two)."""
    bindir = os.path.dirname(sys.executable)
    for name in ("ctxmode", "ctxmode.exe"):
        candidate = os.path.join(bindir, name)
        if os.path.exists(candidate):
            return shlex.quote(candidate)
    return f"{shlex.quote(sys.executable)} -m ctxmode"


def kept_lines(home: str) -> list[str]:
    """Where the kept throwaway store is, and commands that read it, then remove it."""
    cli = f"CTXMODE_HOME={shlex.quote(home)} {cli_command()}"
    project = shlex.quote(demo.DEMO_PROJECT)
    return [
        f"The throwaway store is kept in {home}, so that the lookups above run as printed.",
        "Look around, then remove it:",
        f"  {cli} sessions --project {project}",
        f"  {cli} show-snapshot --project {project}",
        f"  rm -r {shlex.quote(home)}",
    ]


@click.command(name="demo")
@click.option("--quiet", "-q", is_flag=True, help="Print one line; exit 1 if anything failed.")
@click.option(
    "--keep/--no-keep",
    default=None,
    help="Keep the throwaway store and say where it is (the default without --quiet, "
    "so that the snapshot's lookups run as printed).",
)
def demo_cmd(quiet: bool, keep: bool | None) -> None:
    """Replay a sample session through the real hooks and show the result.

    Every hook call runs as Claude Code runs it (a fresh process, the payload on stdin)
    against a throwaway data root; then it shows what was captured and the exact
    <session_resume> snapshot that was injected after the session's compaction.
    Its lookups name that data root, which is kept in the temporary folder (unless
    --quiet or --no-keep) so that they run as printed. Your own store and settings are
    never touched.
    """
    keep = not quiet if keep is None else keep
    home = tempfile.mkdtemp(prefix="ctxmode-demo-")
    try:
        result = demo.replay(home, lookups_name_home=True)
        if quiet:
            click.echo(demo.summary_line(result))
        else:
            click.echo(render(result, colour=color_enabled()))
            click.echo("")
            click.echo(INSTALL_HINT)
        if keep:
            click.echo(("" if quiet else "\n") + "\n".join(kept_lines(home)))
        elif not quiet:
            click.echo(
                "\nThe throwaway store is removed, so the lookups above find nothing now "
                "(--keep keeps it)."
            )
    finally:
        if not keep:
            shutil.rmtree(home, ignore_errors=True)
    if not result.ok:
        click.get_current_context().exit(1)
