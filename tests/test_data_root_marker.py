"""The data root recorded in install.sh's environment: used unless CTXMODE_HOME says otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ctxmode import paths


def test_marker_in_the_environment_sets_the_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    venv = tmp_path / "root" / "venv"
    venv.mkdir(parents=True)
    (venv / paths.ROOT_MARKER).write_text(f"{tmp_path / 'root'}\n")
    monkeypatch.setattr(sys, "prefix", str(venv))
    assert paths.data_root({"HOME": str(tmp_path)}) == str(tmp_path / "root")
    # The hook's own CTXMODE_HOME still wins.
    assert paths.data_root({"CTXMODE_HOME": str(tmp_path / "other")}) == str(tmp_path / "other")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux default data root")
@pytest.mark.parametrize("content", ["", "relative/path", "\n\n"])
def test_a_marker_without_an_absolute_path_is_ignored(
    content: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / paths.ROOT_MARKER).write_text(content)
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    assert paths.data_root({"HOME": str(tmp_path)}) == str(
        tmp_path / ".local" / "share" / "ctxmode"
    )
