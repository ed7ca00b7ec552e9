"""The README stays true: generated blocks fresh, every command documented."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.cli import commands

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_generated_blocks_are_fresh() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "update_readme.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(commands.COMMANDS))
def test_every_command_is_documented_with_help(name: str) -> None:
    command = commands.load(name)
    assert command.help or command.short_help, f"ctxmode {name} has no help text"
    headings = [line for line in README.splitlines() if line.startswith("### ")]
    assert any(f"`ctxmode {name}`" in line for line in headings), f"no README section for {name}"


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
