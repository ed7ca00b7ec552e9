"""Install a pinned npm package version into the e2e cache, atomically and under a lock.

Shared by ``claude_cli.py`` and ``codex_cli.py``. Installs land in ``$CTXMODE_E2E_CACHE``
(default ``$XDG_CACHE_HOME/ctxmode-e2e`` or ``~/.cache/ctxmode-e2e``), one folder per package
and version, made atomically: npm installs into a temporary folder that is renamed into place
only once the caller's probe finds a working executable in it. Nothing is downloaded outside
the npm registry.

Failures split in two: npm missing or the registry unreachable is ``Unavailable`` (the suite
skips); the registry answering that the version does not exist, or an install that does not
run, is ``RuntimeError`` (a mistake to fix, not a skip).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

# npm error codes that mean the registry answered and the version is not there.
_NO_SUCH_VERSION = ("ETARGET", "E404", "notarget")


class Unavailable(Exception):
    """npm or the package cannot be had here: the suite skips with this reason."""


def cache_root() -> Path:
    if os.environ.get("CTXMODE_E2E_CACHE"):
        return Path(os.environ["CTXMODE_E2E_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ctxmode-e2e"


def _npm(package: str) -> str:
    npm = shutil.which("npm")
    if npm is None:
        raise Unavailable(f"npm is not installed (needed to install {package})")
    return npm


def resolve_version(package: str, spec: str) -> str:
    """``latest`` (or any dist-tag / range) → a concrete version, asking the registry."""
    if spec and spec[0].isdigit() and all(part.isdigit() for part in spec.split(".")):
        return spec
    try:
        out = subprocess.run(
            [_npm(package), "view", f"{package}@{spec}", "version", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise Unavailable(f"npm registry did not answer within 60 s ({exc})") from exc
    if out.returncode != 0:
        detail = out.stderr.strip()[-400:]
        if any(code in out.stderr for code in _NO_SUCH_VERSION):
            raise RuntimeError(f"{package}@{spec} does not exist: {detail}")
        raise Unavailable(f"npm view {package}@{spec} failed: {detail}")
    value = json.loads(out.stdout)
    return value[-1] if isinstance(value, list) else str(value)


def ensure_installed(
    package: str,
    version: str,
    *,
    folder: str,
    find: Callable[[Path], Path | None],
    broken: str,
    timeout: float,
) -> Path:
    """The working executable of ``package@version`` in ``cache_root()/folder``.

    ``find(prefix)`` returns the executable of an install folder if it runs as ``version``
    (it may repair the install); ``broken`` says what is wrong when it finds none in a
    fresh install.
    """
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    final = root / folder
    # One installer at a time (parallel test sessions, or xdist workers).
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if final.exists():
            exe = find(final)
            if exe is not None:
                return exe
            shutil.rmtree(final, ignore_errors=True)  # a broken install: start over
        npm = _npm(package)
        staging = Path(tempfile.mkdtemp(prefix=f".{folder}-", dir=root))
        try:
            try:
                out = subprocess.run(
                    [
                        npm,
                        "install",
                        "--prefix",
                        str(staging),
                        "--no-audit",
                        "--no-fund",
                        "--no-save",
                        "--loglevel=error",
                        # Offline, npm's default back-off waits over a minute before failing.
                        "--fetch-retry-mintimeout=2000",
                        "--fetch-retry-maxtimeout=10000",
                        f"{package}@{version}",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=timeout,
                    cwd=staging,
                    check=False,
                )
            except subprocess.TimeoutExpired as exc:
                raise Unavailable(f"npm install {package}@{version} timed out") from exc
            if out.returncode != 0:
                detail = out.stderr.strip()[-600:]
                if any(code in out.stderr for code in _NO_SUCH_VERSION):
                    # The registry answered: a wrong version is a mistake to fix, not a skip.
                    raise RuntimeError(f"{package}@{version} does not exist: {detail}")
                raise Unavailable(f"npm install {package}@{version} failed: {detail}")
            if find(staging) is None:
                # The package installed but does not run: that is a real failure, not a skip.
                raise RuntimeError(f"{package}@{version} installed into {staging} but {broken}")
            staging.chmod(0o755)  # mkdtemp made it private; the cache is not a secret
            staging.rename(final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        # The path ``find`` gave named the staging folder; look again under the final name.
        exe = find(final)
        if exe is None:
            raise RuntimeError(f"{package}@{version} stopped working once moved to {final}")
        return exe
