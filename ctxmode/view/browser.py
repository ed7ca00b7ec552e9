"""A headless browser run over a page ``ctxmode view`` wrote: the DOM after its scripts
ran, or a screenshot. Used by ``ctxmode bench`` (render time) and the browser test.

Chromium (Debian's ``chromium``, or Chrome) with no sandbox-dependent, network or
background feature: a closed network refuses the connections those make, and a fresh
profile each run keeps the user's own out of it. A browser that hangs is killed with
its whole process group after ``timeout`` seconds: :class:`BrowserError`, never a hang.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
)
DEFAULT_TIMEOUT = 90.0


class BrowserError(Exception):
    """The browser could not render the page (missing, failed or timed out)."""


def find_browser() -> str | None:
    """The first Chromium-like browser on PATH (``CTXMODE_BROWSER`` overrides), or None."""
    explicit = os.environ.get("CTXMODE_BROWSER")
    if explicit:
        return shutil.which(explicit)
    for name in CANDIDATES:
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(browser: str, args: list[str], timeout: float) -> bytes:
    with tempfile.TemporaryDirectory(prefix="ctxmode-browser-") as profile:
        command = [browser, *FLAGS, f"--user-data-dir={profile}", *args]
        proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: killed whole on a hang
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise BrowserError(f"{browser} did not finish within {timeout:.0f} s") from None
        finally:
            if proc.poll() is None:
                _kill_group(proc)
        if proc.returncode != 0:
            raise BrowserError(f"{browser} exited with status {proc.returncode}")
        return out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def dump_dom(
    browser: str, url: str, *, timeout: float = DEFAULT_TIMEOUT, budget_ms: int = 5000
) -> str:
    """The page's DOM as HTML once its scripts ran (``--virtual-time-budget``)."""
    out = _run(browser, [f"--virtual-time-budget={budget_ms}", "--dump-dom", url], timeout)
    return out.decode("utf-8", "replace")


def screenshot(
    browser: str,
    url: str,
    path: str,
    *,
    size: tuple[int, int] = (1280, 1400),
    timeout: float = DEFAULT_TIMEOUT,
    budget_ms: int = 5000,
) -> None:
    """A PNG of the page's first ``size`` pixels, written to ``path``."""
    _run(
        browser,
        [
            f"--window-size={size[0]},{size[1]}",
            f"--virtual-time-budget={budget_ms}",
            f"--screenshot={os.path.abspath(path)}",
            url,
        ],
        timeout,
    )
    if not os.path.isfile(path):
        raise BrowserError(f"{browser} wrote no screenshot")
