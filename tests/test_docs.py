"""The README stays true: generated blocks fresh, every command documented."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ctxmode.cli import main

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_generated_blocks_are_fresh() -> None:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "update_readme.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_is_documented_with_help(name: str) -> None:
    command = main.commands[name]
    assert command.help or command.short_help, f"ctxmode {name} has no help text"
    headings = [line for line in README.splitlines() if line.startswith("### ")]
    assert any(f"`ctxmode {name}`" in line for line in headings), f"no README section for {name}"


def test_readme_shows_the_two_setup_commands() -> None:
    assert "./install.sh" in README
    assert "./test.sh" in README
    assert "./test.sh" in (REPO / ".ci" / "run").read_text()
