"""ctxmode's OpenCode plugin file as installed: whether a file is it, and what it runs.

Shared by install, doctor and the proof (no imports of theirs). CLI-only.
"""

from __future__ import annotations

import json

# The line that marks the plugin as ctxmode's (install replaces, uninstall deletes only it).
MARKER = "// ctxmode for OpenCode:"


def is_ours(text: str | None) -> bool:
    return text is not None and text.startswith(MARKER)


def installed_command(text: str) -> tuple[str, str] | None:
    """(interpreter, hooks folder) an installed plugin runs, or None."""
    found: dict[str, str] = {}
    for line in text.splitlines()[:20]:
        for name in ("PYTHON", "HOOKS"):
            prefix = f"const {name} = "
            if line.startswith(prefix) and line.endswith(";"):
                try:
                    value = json.loads(line[len(prefix) : -1])
                except ValueError:
                    return None
                if isinstance(value, str):
                    found[name] = value
    if set(found) != {"PYTHON", "HOOKS"}:
        return None
    return found["PYTHON"], found["HOOKS"]
