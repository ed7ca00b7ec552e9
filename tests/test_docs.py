"""The README and the manual (docs/) stay true: generated parts fresh, links whole,
every command documented."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from ctxmode import hosts
from ctxmode.cli import commands

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"


def _update_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "update_docs", REPO / "scripts" / "update_docs.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_blocks_are_fresh_and_links_whole() -> None:
    """The command reference, schema, event, option tables and the README's snapshot
    equal what the code makes now; every link of README.md and docs/ leads somewhere."""
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "update_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def render_in_a_fresh_process(text: str) -> str:
    """``update_docs.render(text)`` in a process of its own.

    click builds a command's help option once and keeps it (``Command._help_option``,
    click >= 8.1.8), named after the context it was first built in: a test that invokes a
    subcommand directly (``CliRunner().invoke(install_cmd.install, …)``) leaves it
    ``--help`` alone, where ``ctxmode``'s root context says ``-h, --help``. Rendered in this
    process, the help blocks would then depend on which tests ran before.
    """
    code = (
        "import runpy, sys\n"
        "render = runpy.run_path(sys.argv[1])['render']\n"
        "sys.stdout.write(render(sys.stdin.read(), {}))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "scripts" / "update_docs.py")],
        input=text,
        capture_output=True,
        encoding="utf-8",
        cwd=REPO,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_check_sees_a_stale_help_block_and_a_missing_one() -> None:
    docs = _update_docs()
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    start = "<!-- help:ctxmode dump:start -->\n"
    stale = page.replace(start, start + "Usage: ctxmode dump --old-option\n", 1)
    assert stale != page
    # Rendering puts the code's help back (in a fresh process: see its docstring).
    assert render_in_a_fresh_process(stale) == page
    assert "help:ctxmode dump" in docs.required_blocks()
    assert "help:ctxmode config unset" in docs.required_blocks()  # subcommands too


def test_the_check_sees_broken_links() -> None:
    docs = _update_docs()
    text = (
        "# Probe\n\n## A heading\n\n[ok](#a-heading) [ok](guide.md#how-it-works) "
        "[ok](../README.md#hosts) [web](https://example.com/x#y) `[code](nowhere.md)`\n"
        "[bad](#no-such-heading) [bad](no-such-page.md) [bad](guide.md#no-such-part)\n"
    )
    problems = docs.broken_links(DOCS / "probe.md", text)
    assert [p.split(": (")[1].split(")")[0] for p in problems] == [
        "#no-such-heading",
        "no-such-page.md",
        "guide.md#no-such-part",
    ]


def test_the_check_sees_options_the_prose_gets_wrong() -> None:
    """The drifts a newcomer met: a synopsis with `--since ISO` (its placeholder is WHEN),
    prose listing `--client claude|codex` (gemini came later), a page of set-up options
    without `--host gemini`; and an option no command has."""
    docs = _update_docs()
    text = (
        "# Probe\n\n```sh\nctxmode dump [--since ISO] [--client claude|codex]\n```\n\n"
        "Options: `--client claude|codex`; `./install.sh --host codex`; "
        "`ctxmode search --frobnicate x`; `ctxmode show-snapshot --kind end`.\n"
    )
    problems = [p.split(": ", 1)[1] for p in docs.option_problems(DOCS / "probe.md", text)]
    # The values follow the registry of hosts (each new host joins them).

    values = "|".join(sorted({*hosts.options(), "claude"}))
    others = ", ".join(sorted(set(hosts.options()) - {"claude", "codex"}))
    assert problems == [
        "`ctxmode dump [--since ISO] [--client claude|codex]`: --since ISO: the option's "
        "placeholder is WHEN",
        "`ctxmode dump [--since ISO] [--client claude|codex]`: --client claude|codex: the "
        f"values are {values}",
        "`ctxmode search --frobnicate x`: ctxmode search has no option --frobnicate",
        f"`--client claude|codex`: --client claude|codex: the values are {values}",
        f"names --host codex but not {others}",
    ]
    hosts_named = ", ".join(
        f"`--host {name}`" for name in sorted(set(hosts.options()) - {"claude"})
    )
    right = (
        f"# Probe\n\n```sh\nctxmode dump [--since WHEN] [--client {values}]\n```\n\n"
        f"{hosts_named}; `ctxmode show-snapshot --kind end`.\n"
    )
    assert docs.option_problems(DOCS / "probe.md", right) == []


def test_the_check_holds_each_synopsis_to_its_command() -> None:
    docs = _update_docs()
    page = (DOCS / "commands.md").read_text(encoding="utf-8")
    assert docs.option_problems(DOCS / "commands.md", page) == []
    # A synopsis without an option of its command, or without a value of a choice.
    lacking = page.replace(" [--json | --jsonl]", "", 1).replace(
        "ctxmode install --host gemini [--user | --project DIR] [--dry-run] [--verify]", "", 1
    )
    assert [p.split(": ", 1)[1] for p in docs.option_problems(DOCS / "commands.md", lacking)] == [
        "the synopses of ctxmode install lack --host gemini",
        "the synopsis of ctxmode dump lacks --json",
        "the synopsis of ctxmode dump lacks --jsonl",
    ]


def test_github_anchors() -> None:
    docs = _update_docs()
    assert (
        docs.slug("`ctxmode install` / `ctxmode uninstall`") == "ctxmode-install--ctxmode-uninstall"
    )
    assert docs.slug("Team settings (`--project`)") == "team-settings---project"
    assert docs.slug("The store's schema") == "the-stores-schema"
    assert docs.anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_is_documented_with_help(name: str) -> None:
    command = commands.load(name)
    assert command.help or command.short_help, f"ctxmode {name} has no help text"
    reference = (DOCS / "commands.md").read_text(encoding="utf-8")
    headings = [line for line in reference.splitlines() if line.startswith("## ")]
    assert f"## `ctxmode {name}`" in headings, f"no section for {name} in docs/commands.md"
    assert f"<!-- help:ctxmode {name}:start -->" in reference


def test_readme_is_a_short_tour_and_the_index_names_every_page() -> None:
    assert len(README.splitlines()) <= 250  # the rest belongs in docs/
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in sorted(DOCS.glob("*.md")):
        if page.name != "README.md":
            assert f"]({page.name})" in index, f"docs/README.md does not link {page.name}"
            assert f"](docs/{page.name})" in README, f"README.md does not link {page.name}"


def test_readme_shows_the_two_setup_commands() -> None:
    assert "./install.sh" in README
    assert "./test.sh" in README
    assert "./test.sh" in (REPO / ".ci" / "run").read_text()


def test_help_lists_every_command() -> None:
    from click.testing import CliRunner

    from ctxmode.cli import main

    output = CliRunner().invoke(main, ["--help"], catch_exceptions=False).output
    for name in commands.COMMANDS:
        assert f"  {name} " in output or f"  {name}\n" in output, name


def test_search_loads_only_its_own_command_module() -> None:
    code = (
        "import sys; from ctxmode.cli import main\n"
        "try: main(['search', '--help'])\n"
        "except SystemExit: pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('ctxmode.cli.')))"
    )
    out = (
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    loaded = eval(out)  # a printed list of module names
    assert "ctxmode.cli.search" in loaded
    assert not {"ctxmode.cli.bench_cmd", "ctxmode.cli.demo", "ctxmode.cli.doctor"} & set(loaded)


def test_the_map_of_the_house_names_every_module() -> None:
    """docs/architecture.md's map names each module of the package (and no module that is gone)."""
    package = REPO / "ctxmode"
    text = (REPO / "docs" / "architecture.md").read_text()
    start = text.index("## Map of the house")
    section = text[start : text.index("\n## ", start + 1)]
    named = {n for n in re.findall(r"`([\w/]+\.py)`", section) if not n.startswith("tests/")}
    modules = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path.parent.name != "hooks" and "__pycache__" not in path.parts
    }
    assert sorted(modules - named) == []
    assert sorted(name for name in named - modules if name != "hooks/*.py") == []


def test_a_long_module_says_why_at_its_top() -> None:
    """No module over ~600 lines without the reason stated in its docstring."""
    import ast

    long = []
    for path in sorted((REPO / "ctxmode").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if len(text.splitlines()) > 620:
            doc = ast.get_docstring(ast.parse(text)) or ""
            if "Long on purpose" not in doc:
                long.append(str(path.relative_to(REPO)))
    assert long == []
