"""What every doctor check shares: the statuses, one finding (:class:`Check`) and the
outside world the checks read (:class:`Context`)."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import ctxmode
from ctxmode import paths

OK, WARN, FAIL = "ok", "warn", "fail"
STATUSES = (OK, WARN, FAIL)


@dataclass(frozen=True)
class Check:
    """One finding: ``status`` is ``ok``, ``warn`` or ``fail``."""

    group: str
    name: str
    status: str
    summary: str
    fix: str = ""
    details: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "name": self.name,
            "status": self.status,
            "summary": self.summary,
            "fix": self.fix,
            "details": list(self.details),
        }


@dataclass(frozen=True)
class Context:
    """Everything the checks read from the outside world."""

    env: Mapping[str, str]
    project_dir: str
    now: float
    package_dir: str = os.path.dirname(ctxmode.__file__)
    python: str = sys.executable
    # Claude Code's managed (policy) settings file; None: this platform's.
    managed_settings: str | None = None

    @property
    def root(self) -> str:
        return paths.data_root(self.env)

    @property
    def store_path(self) -> str:
        return paths.store_path(self.project_dir, self.env)


def age(seconds: float) -> str:
    """``42s``, ``5m``, ``3h``, ``2d``."""
    seconds = max(0.0, seconds)
    for unit, span in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= span:
            return f"{int(seconds // span)}{unit}"
    return f"{int(seconds)}s"
