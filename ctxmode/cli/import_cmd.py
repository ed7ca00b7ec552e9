"""``ctxmode import``: the client's transcripts of sessions the hooks never saw (see
:mod:`ctxmode.importer`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

import click

from ctxmode import hosts, importer
from ctxmode.cli.common import HostChoice, echo_json, parse_since, project_option, store_path_for
from ctxmode.sizes import human_size
from ctxmode.store import StoreError, parse_iso
from ctxmode.wording import plural


def since_epoch(text: str) -> float:
    """``--since``: a number of days (as ``purge --older-than`` takes), a duration (30m,
    24h, 7d, 2w) or an ISO date/time, as an epoch time. ValueError otherwise."""
    import time

    raw = text.strip()
    try:
        days = float(raw)
    except ValueError:
        return parse_iso(parse_since(raw))
    if not (days >= 0 and days != float("inf")):
        raise ValueError(f"{text!r} is not a number of days >= 0")
    return max(time.time() - days * 86400.0, 0.0)


def _since_callback(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return since_epoch(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc), ctx=ctx, param=param) from None


UNKNOWN_SHOWN = 5  # unknown record types named in the summary line; the rest counted


def summary_line(totals: importer.Totals) -> str:
    """One line: files, records, events added, skipped, time (and throughput)."""
    t = totals
    parts = [
        plural(t.files + t.unchanged, "file"),
        f"{plural(t.records, 'record')} read ({human_size(t.bytes)})",
        f"{plural(t.events, 'event')} {'to add' if t.dry_run else 'added'}",
        f"{t.skipped} skipped",
    ]
    if t.unknown:
        named = sorted(t.unknown_types.items(), key=lambda kv: (-kv[1], kv[0]))
        shown = ", ".join(f"{name} {count}" for name, count in named[:UNKNOWN_SHOWN])
        if len(named) > UNKNOWN_SHOWN:
            shown += f", {len(named) - UNKNOWN_SHOWN} more"
        parts.append(f"{t.unknown} of unknown types" + (f" ({shown})" if shown else ""))
    if t.truncated:
        parts.append(f"{plural(t.truncated, 'unfinished last line')} left for later")
    if t.compactions:
        replayed = f" ({t.replayed} replayed)" if t.replayed else ""
        parts.append(plural(t.compactions, "compaction") + replayed)
    if t.unchanged:
        parts.append(f"{t.unchanged} unchanged")
    if t.unplaced:
        parts.append(f"{plural(t.unplaced, 'file')} not imported (no working directory in it)")
    rate = f", {t.bytes / 1e6 / t.seconds:.0f} MB/s" if t.seconds and t.bytes > 1e6 else ""
    prefix = "dry run: " if t.dry_run else ""
    return f"{prefix}{', '.join(parts)} in {t.seconds:.2f} s{rate}"


@click.command("import")
@project_option
@click.option("--all", "all_projects", is_flag=True, help="Every project's transcripts.")
@click.option(
    "--since",
    callback=_since_callback,
    metavar="WHEN",
    help="Only transcripts written since WHEN: days (as purge --older-than), 30m, 24h, 7d, "
    "2w, or an ISO date/time (UTC).",
)
@click.option(
    "--client",
    type=HostChoice(),
    help="Only this client's history (as --host names it: claude is Claude Code).",
)
@click.option("--dry-run", is_flag=True, help="Count what would be added; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as a JSON object.")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
def import_cmd(
    project: str | None,
    all_projects: bool,
    since: float | None,
    client: str | None,
    dry_run: bool,
    as_json: bool,
    files: Sequence[str],
) -> None:
    """Import the clients' own history of sessions the hooks never saw.

    Reads each client's history of this project (--project DIR, --all: every project;
    --client: one client's only): Claude Code's JSONL transcripts under ~/.claude/projects
    (or $CLAUDE_CONFIG_DIR/projects), Codex's rollouts under ~/.codex/sessions (or
    $CODEX_HOME/sessions), Gemini CLI's chats under ~/.gemini/tmp, OpenCode's database
    (a session by name: DB#SESSION_ID), or the FILEs given, and
    records their tool calls, prompts, compactions and subagents as the hooks would have:
    the same extractors, the same masking, the transcript's session ids and times. Run it
    again at will: what was imported or captured by the hooks is not stored twice, and a
    transcript that grew is read on from where the last import stopped.
    """
    if files and (project or all_projects):
        raise click.UsageError("give FILEs, or --project/--all, not both")
    if project and all_projects:
        raise click.UsageError("give --project DIR or --all, not both")
    for name in files:
        # A file, or a client's virtual one (a session of OpenCode's database: <db>#<id>).
        if not os.path.isfile(name) and not importer.reader_for(name)[1].claims(name):
            raise click.BadParameter(f"File {name!r} does not exist.", param_hint="'[FILES]...'")
    env = os.environ
    target = None
    if not files and not all_projects:
        target = store_path_for(project)[1]
    try:
        clients = None if client is None else [hosts.by_option(client)]
        found = importer.find(env, store=target, files=files, since=since, clients=clients)
    except OSError as exc:
        raise click.ClickException(f"cannot read {exc.filename}: {exc.strerror}") from exc
    try:
        if sys.stderr.isatty() and not as_json and found:
            with click.progressbar(
                length=sum(t.size for t in found),
                label="importing",
                file=sys.stderr,
                show_pos=False,
            ) as bar:
                totals = importer.run(
                    found, env, dry_run=dry_run, on_file=lambda t: bar.update(t.size)
                )
        else:
            totals = importer.run(found, env, dry_run=dry_run)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        echo_json(totals.as_dict())
        return
    if not found:
        chosen = None if client is None else [hosts.by_option(client)]
        folders = ", ".join(reader.folder(env) for reader in importer.readers(chosen).values())
        scope = "any project" if all_projects else "this project"
        click.echo(f"no transcripts of {scope} in {folders}")
        return
    click.echo(summary_line(totals))
    if totals.replayed and not dry_run:
        click.echo(
            "what ctxmode would have restored at each compaction, against the client's "
            "summary: ctxmode stats (a compaction's snapshot: ctxmode show-snapshot --seq N)"
        )
