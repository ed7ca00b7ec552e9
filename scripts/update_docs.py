"""Regenerate every generated block of README.md and docs/ from the code (like cog).

    python scripts/update_docs.py          # rewrite the stale blocks in place
    python scripts/update_docs.py --check  # exit 1 if a block is stale or a link is broken

A block sits between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` in any page
(README.md, docs/*.md); the NAME says what fills it:

- ``help:ctxmode``, ``help:ctxmode dump``, ``help:ctxmode config get``, …: that command's
  ``--help`` text, rendered by click's own API from ``ctxmode.cli`` (every command and
  subcommand must have its block somewhere: a new command fails the check);
- ``commands``: a table of the commands, each with its one-line help and a link to its
  section of docs/commands.md;
- ``schema``: a freshly migrated store's schema; ``events``: ``events.TYPES``;
  ``config``: ``config.OPTIONS``;
- ``snapshot``: the ``<session_resume>`` the bundled sample session gets after its
  compaction, made by replaying it through the real hooks (as ``ctxmode demo`` does). Its
  ``from``/``to`` times are the replay's clock, so a block that differs only in them is
  left as it is.

``--check`` also checks every link of those pages: a relative link names a file of the
repository, and its ``#anchor`` a heading of that page (GitHub's slugs); and every option
the written text names (see :func:`option_problems`): it exists, with the values it
claims. tests/test_docs.py runs it, so a stale block, a broken link or an option the
prose gets wrong fails the suite.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import click  # noqa: E402

from ctxmode import config, events  # noqa: E402
from ctxmode.store import Store  # noqa: E402

DOCS = REPO / "docs"
PRIORITY_NAMES = {1: "1 critical", 2: "2 high", 3: "3 normal", 4: "4 low", 5: "5 minor"}
# Help is rendered at a fixed width, so the blocks do not depend on the terminal.
HELP_WIDTH = 80
BLOCK = re.compile(r"<!-- ([\w:. -]+?):start -->\n(.*?)<!-- \1:end -->", re.S)
TIMES = re.compile(r'(from|to)="\d{4}-\d\d-\d\dT[\d:.]+Z"')


def pages() -> list[Path]:
    """Every page of the manual: the README and docs/*.md."""
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


# ---- the command line ---------------------------------------------------------------


def _contexts() -> Iterator[tuple[str, click.Command, click.Context]]:
    """Every command and subcommand of ``ctxmode``, root first, with its click context."""
    from ctxmode.cli import main

    settings = {**main.context_settings, "terminal_width": HELP_WIDTH}
    root = click.Context(main, info_name="ctxmode", max_content_width=HELP_WIDTH, **settings)
    stack: list[tuple[str, click.Command, click.Context]] = [("ctxmode", main, root)]
    while stack:
        path, command, ctx = stack.pop(0)
        yield path, command, ctx
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, name
                child = click.Context(sub, info_name=name, parent=ctx, **sub.context_settings)
                stack.append((f"{path} {name}", sub, child))


def command_paths() -> list[str]:
    return [path for path, _, _ in _contexts()]


def help_block(path: str) -> str:
    for name, command, ctx in _contexts():
        if name == path:
            return "```text\n" + command.get_help(ctx).rstrip() + "\n```"
    raise SystemExit(f"no command {path!r} (a help:… block names a command that is gone)")


def first_sentence(command: click.Command) -> str:
    """A command's help up to its first full stop or colon, as one sentence."""
    if command.short_help:  # written to be the one line
        return " ".join(command.short_help.split())
    text = " ".join((command.help or "").split("\n\n")[0].split())
    depth = 0
    for index, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and char in ".:" and text[index + 1 : index + 2] in ("", " "):
            return text[:index] + "."
    return text + "."


def table_text(text: str) -> str:
    """Text for a Markdown table cell: no column break, no tag the page would swallow."""
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def commands_block() -> str:
    lines = ["| command | what it does |", "|---|---|"]
    for path, command, _ in _contexts():
        if path.count(" ") != 1:
            continue  # the root and the subcommands of a group
        anchor = slug(f"`{path}`")
        summary = table_text(first_sentence(command))
        lines.append(f"| [`{path}`](docs/commands.md#{anchor}) | {summary} |")
    return "\n".join(lines)


# ---- the store and the tables of the code -------------------------------------------


def schema_block() -> str:
    with tempfile.TemporaryDirectory() as folder:
        store = Store.open(os.path.join(folder, "schema.db"))
        try:
            rows = store.conn.execute(
                "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL "
                "AND name NOT LIKE 'events_fts_%' AND name NOT LIKE 'events_words_%' "
                "ORDER BY rowid"
            ).fetchall()
            version = store.schema_version()
        finally:
            store.close()
    statements = []
    for (sql,) in rows:
        lines = sql.splitlines()
        # Re-indent bodies uniformly: SQLite keeps the source's indentation.
        body = [lines[0]] + ["    " + line.strip() for line in lines[1:-1]]
        if len(lines) > 1:
            body.append(lines[-1].strip())
        statements.append("\n".join(body) + ";")
    return (
        f"Schema version {version} (`PRAGMA user_version`), as created by the migrations:\n\n"
        "```sql\n" + "\n".join(statements) + "\n```"
    )


def events_block() -> str:
    lines = ["| type | category | priority | `data` holds |", "|---|---|---|---|"]
    for name, (category, priority, data) in events.TYPES.items():
        text = data.replace("|", "\\|")
        lines.append(f"| `{name}` | `{category}` | {PRIORITY_NAMES[priority]} | {text} |")
    return "\n".join(lines)


def config_block() -> str:
    lines = ["| option | default | meaning |", "|---|---|---|"]
    for name, (default, meaning) in config.OPTIONS.items():
        shown = str(default).lower() if isinstance(default, bool) else repr(default)
        if isinstance(default, list):
            shown = "[]" if not default else ", ".join(default)
        lines.append(f"| `{name}` | `{shown}` | {table_text(meaning)} |")
    return "\n".join(lines)


def snapshot_block() -> str:
    """The sample session's snapshot after its compaction, from the real hooks.

    The hooks run on the base interpreter from a folder of its own (a link to it), so
    the lookups say ``ctxmode search`` rather than this checkout's venv path (an
    installation names its own absolute path there).
    """
    from ctxmode import demo

    with tempfile.TemporaryDirectory() as home:
        python = os.path.join(home, "bin", "python")
        os.makedirs(os.path.dirname(python))
        os.symlink(os.path.realpath(sys.executable), python)
        root = os.path.join(home, "root")
        os.mkdir(root, 0o700)
        result = demo.replay(root, python=python)
    if not result.ok or result.snapshot is None:
        raise SystemExit("the sample session's replay failed: " + "; ".join(result.problems))
    size = len(result.snapshot.encode("utf-8"))
    return (
        f"```xml\n{result.snapshot.rstrip()}\n```\n\n"
        f"<sub>{size:,} bytes, from `python scripts/update_docs.py`: the bundled sample session "
        "(recorded from Claude Code 2.1.197) replayed through the real hooks, as "
        "`ctxmode demo` does.</sub>"
    )


def tools_block() -> str:
    """Every tool each supported client version offers and what ctxmode records of it: the
    lists recorded from the real CLIs (scripts/record_tools.py) against the hosts' tables."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "record_tools", REPO / "scripts" / "record_tools.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tables: str = module.tables()
    return tables.rstrip("\n")


FIXED: dict[str, Callable[[], str]] = {
    "commands": commands_block,
    "tools": tools_block,
    "schema": schema_block,
    "events": events_block,
    "config": config_block,
    "snapshot": snapshot_block,
}


def required_blocks() -> set[str]:
    return set(FIXED) | {f"help:{path}" for path in command_paths()}


def build(name: str, cache: dict[str, str]) -> str:
    if name not in cache:
        if name.startswith("help:"):
            cache[name] = help_block(name.removeprefix("help:"))
        elif name in FIXED:
            cache[name] = FIXED[name]()
        else:
            raise SystemExit(f"unknown generated block <!-- {name}:start -->")
    return cache[name]


def render(text: str, cache: dict[str, str]) -> str:
    def fill(match: re.Match[str]) -> str:
        name, current = match.group(1), match.group(2)
        wanted = build(name, cache) + "\n"
        if TIMES.sub("", current) == TIMES.sub("", wanted):
            wanted = current  # the same snapshot but for the replay's clock
        return f"<!-- {name}:start -->\n{wanted}<!-- {name}:end -->"

    return BLOCK.sub(fill, text)


# ---- links --------------------------------------------------------------------------


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a page: its headings' slugs (numbered when repeated) and ids."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in strip_fences(text).splitlines():
        match = re.match(r"#{1,6} +(.*?) *#*$", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    found.update(re.findall(r'<a (?:id|name)="([^"]+)"', text))
    return found


def strip_fences(text: str) -> str:
    """The text without its fenced blocks (where a ``#`` line is no heading)."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)


def strip_code(text: str) -> str:
    """The text without fenced blocks and inline code, where a link is not a link."""
    return re.sub(r"`[^`\n]*`", "", strip_fences(text))


def links(text: str) -> list[str]:
    prose = strip_code(text)
    return re.findall(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose) + re.findall(
        r'<(?:img|a) [^>]*(?:src|href)="([^"]+)"', prose
    )


def broken_links(page: Path, text: str | None = None) -> list[str]:
    """The links of ``page`` (its ``text`` when given) that lead nowhere."""
    if text is None:
        text = page.read_text(encoding="utf-8")
    problems = []
    for target in links(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue  # https:, mailto: …: outside the repository
        path, _, anchor = target.partition("#")
        where = f"{page.relative_to(REPO)}: ({target})"
        if not path:
            if anchor not in anchors(text):
                problems.append(f"{where}: no heading #{anchor} on this page")
            continue
        dest = (page.parent / path).resolve()
        if not dest.exists():
            problems.append(f"{where}: no such file")
        elif REPO not in dest.parents and dest != REPO:
            problems.append(f"{where}: outside the repository")
        elif (
            anchor
            and dest.suffix == ".md"
            and anchor not in anchors(dest.read_text(encoding="utf-8"))
        ):
            problems.append(f"{where}: no heading #{anchor} in {dest.relative_to(REPO)}")
    return problems


# ---- options named in the written text ----------------------------------------------
#
# The hand-written parts name options too: each command's synopsis in docs/commands.md
# (`ctxmode dump [--project DIR] [--since WHEN] …`), commands in inline code, listings of
# an option's values (`--client claude|codex|gemini`), set-up options (`--host gemini`).
# They drift when an option or a value is added: the checks below hold them to the code.

OPTION = re.compile(
    r"(?<![\w-])(--[a-z][a-z0-9-]*(?:/--[a-z][a-z0-9-]*)?)"
    r"(?:[ =]([^\s\[\]()|`'\"]+(?:\|[^\s\[\]()|`'\"]+)*))?"
)
PLACEHOLDER = re.compile(r"[A-Z][A-Z_]*(?:\|[a-z]+)?|\[[A-Z]+\]")


def _options() -> dict[str, dict[str, click.Option]]:
    """Each command path's options by every name they answer to."""
    found: dict[str, dict[str, click.Option]] = {}
    for path, command, _ in _contexts():
        table = found.setdefault(path, {"--help": click.Option(["--help"], is_flag=True)})
        for param in command.params:
            if isinstance(param, click.Option):
                for name in (*param.opts, *param.secondary_opts):
                    table[name] = param
    return found


def _choices(option: click.Option) -> tuple[str, ...]:
    return tuple(option.type.choices) if isinstance(option.type, click.Choice) else ()


def _command_lines(text: str) -> Iterator[tuple[str, bool]]:
    """(a command line as written, whether it is a synopsis): the lines of ```sh blocks
    and every inline code span that start with ``ctxmode``."""
    for block in re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.split("  #", 1)[0].strip()
            if raw.startswith(" ") and lines:
                lines[-1] += " " + line  # a synopsis continued on an indented line
            elif line:
                lines.append(line)
        yield from ((line, True) for line in lines if line.startswith("ctxmode"))
    for span in re.findall(r"`([^`\n]+)`", strip_fences(text)):
        if span.startswith("ctxmode "):
            yield span, False


def _split_command(line: str, known: dict[str, dict[str, click.Option]]) -> tuple[str, str]:
    """(the command path a line runs, the rest of it)."""
    words = line.split(" ")
    path = words[0]
    for index, word in enumerate(words[1:], start=1):
        if f"{path} {word}" not in known:
            return path, " ".join(words[index:])
        path = f"{path} {word}"
    return path, ""


def _value_problem(name: str, option: click.Option, value: str) -> str | None:
    """What is wrong with ``value`` written after the option ``name``, or None."""
    if option.is_flag or option.count:
        return None  # what follows a flag is the next word, not its value
    choices = _choices(option)
    if PLACEHOLDER.fullmatch(value):
        if option.metavar and value != option.metavar:
            return f"{name} {value}: the option's placeholder is {option.metavar}"
        return None
    if choices:
        values = value.split("|")
        wrong = [v for v in values if v not in choices]
        if wrong:
            return f"{name} {value}: {', '.join(wrong)} is not one of {'|'.join(choices)}"
        if len(values) > 1 and set(values) != set(choices):
            return f"{name} {value}: the values are {'|'.join(choices)}"
    return None


def option_problems(page: Path, text: str | None = None) -> list[str]:
    """Options the text of ``page`` names wrongly (see the comment above):

    - a command line (```sh or inline code, from ``ctxmode …``) names only options of
      its command; a value it gives is one of the option's choices; a placeholder is
      the option's own (``--since WHEN``, not ``ISO``);
    - a listing of values (``--client a|b|c``, anywhere in inline code) names them all;
    - the synopses of a command in docs/commands.md name each of its options, and each
      value of a choice (``--host codex``, ``--host gemini``) but the default;
    - a page that names one variant of a choice with a default (``--host codex``) names
      every one but the default (the guide's set-up options: ``--host gemini`` too).
    """
    if text is None:
        text = page.read_text(encoding="utf-8")
    known = _options()
    every = {name: option for table in known.values() for name, option in table.items()}
    where = str(page.relative_to(REPO))
    problems: list[str] = []
    mentioned: dict[str, set[str]] = {}  # synopses: command path -> options and values
    for line, synopsis in _command_lines(text):
        path, rest = _split_command(line, known)
        seen = mentioned.setdefault(path, set()) if synopsis else set()
        for name, value in OPTION.findall(rest):
            option = known[path].get(name.split("/")[0])
            if option is None:
                problems.append(f"{where}: `{line}`: {path} has no option {name}")
                continue
            seen.add(option.opts[0])
            if value:
                seen.update(f"{option.opts[0]}={v}" for v in value.split("|"))
                problem = _value_problem(name, option, value)
                if problem:
                    problems.append(f"{where}: `{line}`: {problem}")
    for path, seen in mentioned.items():
        if page.name != "commands.md" or path == "ctxmode":
            continue
        options = {id(o): o for o in known[path].values() if o.opts[0] != "--help"}
        for option in options.values():
            if option.hidden:
                continue
            if option.opts[0] not in seen:
                problems.append(f"{where}: the synopsis of {path} lacks {option.opts[0]}")
                continue
            values = {v.split("=", 1)[1] for v in seen if v.startswith(option.opts[0] + "=")}
            if values and not PLACEHOLDER.fullmatch(next(iter(values))):
                missing = set(_choices(option)) - values - {option.default}
                if missing:
                    problems.append(
                        f"{where}: the synopses of {path} lack {option.opts[0]} "
                        + ", ".join(sorted(missing))
                    )
    # Listings in inline code (commands or bare options) name every value.
    for span in re.findall(r"`([^`\n]+)`", strip_fences(text)):
        if span.startswith("ctxmode "):
            continue  # checked above
        for name, value in OPTION.findall(span):
            option = every.get(name)
            if option is not None and _choices(option) and "|" in value:
                problem = _value_problem(name, option, value)
                if problem:
                    problems.append(f"{where}: `{span}`: {problem}")
    # A choice with a default picks a variant (``--host codex``): a page that names one
    # variant anywhere (code or prose, a generated table) names them all.
    named: dict[str, set[str]] = {}
    for name, value in OPTION.findall(strip_fences(text)):
        option = every.get(name)
        if option is not None and option.default in _choices(option) and value:
            named.setdefault(name, set()).update(value.split("|"))
    for name, values in named.items():
        option = every[name]
        missing = set(_choices(option)) - values - {option.default}
        if missing and values & set(_choices(option)):
            problems.append(
                f"{where}: names {name} {', '.join(sorted(values))} but not "
                + ", ".join(sorted(missing))
            )
    return problems


# ---- the command --------------------------------------------------------------------


def main(argv: list[str]) -> int:
    check = "--check" in argv
    cache: dict[str, str] = {}
    stale: list[str] = []
    present: set[str] = set()
    for page in pages():
        current = page.read_text(encoding="utf-8")
        present.update(match.group(1) for match in BLOCK.finditer(current))
        wanted = render(current, cache)
        if wanted != current:
            stale.append(str(page.relative_to(REPO)))
            if not check:
                page.write_text(wanted, encoding="utf-8")
    problems = []
    missing = sorted(required_blocks() - present)
    if missing:
        problems.append("no generated block for: " + ", ".join(missing))
    if check and stale:
        problems.append(f"stale: {', '.join(stale)} (run python scripts/update_docs.py)")
    for page in pages():
        problems.extend(broken_links(page))
        problems.extend(option_problems(page))
    for problem in problems:
        print(problem, file=sys.stderr)
    if not check and stale:
        print("updated: " + ", ".join(stale))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
