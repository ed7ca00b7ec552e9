"""Sizes on disk and how to say them: shared by ``doctor``, ``purge`` and ``sessions``."""

from __future__ import annotations

import contextlib
import os


def file_size(path: str) -> int:
    """A store's size on disk, with its ``-wal``."""
    total = 0
    for suffix in ("", "-wal"):
        with contextlib.suppress(OSError):
            total += os.path.getsize(path + suffix)
    return total


def human_size(size: float) -> str:
    """``812 B``, ``3.1 KB``, ``2.0 MB``, ``1.5 GB``."""
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"  # pragma: no cover - the loop always returns
