"""Run a command where some folders are readable but not writable, for real.

As root, ``chmod`` does not stop a write, so the folders are bind-mounted read-only in a
private mount namespace: ``unshare -rm`` (a user namespace mapping the caller to root),
else ``bwrap`` (what Claude Code's sandbox uses). :func:`readonly_argv` returns None when
neither can do it here; a test then skips and says why. Every use is checked with a probe
first (:func:`denies_writes`), so a test never passes because writes were not denied.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

_SCRIPT = (
    "IFS=:; for d in $CTXMODE_RO_DIRS; do "
    'mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 97; done; '
    'unset IFS CTXMODE_RO_DIRS; exec "$@"'
)


def _unshare(dirs: Sequence[Path], argv: Sequence[str]) -> list[str]:
    joined = ":".join(str(d) for d in dirs)
    return ["env", f"CTXMODE_RO_DIRS={joined}", "unshare", "-rm", "sh", "-c", _SCRIPT, "sh", *argv]


def _bwrap(dirs: Sequence[Path], argv: Sequence[str]) -> list[str]:
    binds = [arg for d in dirs for arg in ("--ro-bind", str(d), str(d))]
    return ["bwrap", "--bind", "/", "/", *binds, "--dev", "/dev", "--proc", "/proc", *argv]


def readonly_argv(dirs: Sequence[Path], argv: Sequence[str]) -> list[str] | None:
    """``argv`` wrapped so that ``dirs`` are read-only for it, or None (not possible here)."""
    for wrap, tool in ((_unshare, "unshare"), (_bwrap, "bwrap")):
        if shutil.which(tool) is None:
            continue
        wrapped = wrap(dirs, argv)
        if denies_writes(wrap, dirs):
            return wrapped
    return None


def denies_writes(wrap: object, dirs: Sequence[Path]) -> bool:
    """Whether the wrapper really refuses a new file in each of ``dirs``."""
    assert callable(wrap)
    for d in dirs:
        probe = d / ".ctxmode-readonly-probe"
        try:
            proc = subprocess.run(
                wrap(dirs, ["sh", "-c", f"touch '{probe}'"]),
                capture_output=True,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return False
        if probe.exists():
            probe.unlink()
            return False
        if proc.returncode in (0, 97):  # touch succeeded (nowhere?) or mounting failed
            return False
    return True
