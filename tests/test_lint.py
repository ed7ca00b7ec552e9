"""ruff (lint and format) and mypy --strict, as configured in pyproject.toml."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CHECKS = {
    "ruff-check": ("ruff", ["-m", "ruff", "check", "--no-cache", "."]),
    "ruff-format": ("ruff", ["-m", "ruff", "format", "--check", "--no-cache", "."]),
    "mypy": ("mypy", ["-m", "mypy", "--no-incremental"]),
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_linters_pass(name: str) -> None:
    module, args = CHECKS[name]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (./test.sh installs it)")
    result = subprocess.run(
        [sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
