"""ctxmode's ``permissions.allow`` rules in the text of a Claude Code settings.json (pure
text in, text out).

The snapshot hands the model a search command, ``<ctxmode> search --project DIR`` (see
``ctxmode.handlers.search_command``), to run with a few words or with a section's lookup
(``--session ID --type T``). In Claude Code's default permission mode each one
would ask (print mode: "This command requires approval"). ``ctxmode install`` adds one
rule that lets exactly these run:

    "Bash(/abs/venv/bin/ctxmode search:*)"

How Claude Code 2.1.197 matches it (driven with the real CLI in --permission-mode
default; tests/e2e/test_e2e_permissions.py keeps the proof): a prefix of the command as
written, program path included, word by word (``…/ctxmode searchx`` does not match; the
path in single quotes matches the same rule when it needs no quoting). A compound line
is split and every part must be allowed on its own: ``… search x && rm -rf y``,
``; touch``, ``| sh``, ``|| rm``, a second line, all ask for the other part; a ``$(…)``,
backticks or ``$'…'`` ask for the whole line; a redirection to a file asks. So the rule
allows the one read-only command and nothing that rides along with it.

The rule names the program by its absolute path, the one the hints print, never a bare
``ctxmode`` (which PATH could resolve to anything): a file shared with the team names
no path of this machine, so the project scope gets no rule (install says so).

ctxmode's rules are recognised by their form (``is_ours``): ``Bash(<path>/ctxmode
search:*)``. Inserting and removing are exact inverses (``ctxmode.settings``' append and
delete), and the ``permissions``/``allow`` containers ctxmode had to create go again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from ctxmode import settings
from ctxmode.settings import SettingsError

KEY = "permissions"
ALLOW = "allow"
# Bash(<abs path>/ctxmode search:*), the path as the hint prints it: bare, or in single
# quotes when it must be (handlers.shell_quote).
_OURS = re.compile(
    r"Bash\((?:/[\w@%+=:,./-]*/ctxmode(?:\.exe)?|'/[^']*/ctxmode(?:\.exe)?') search:\*\)"
)


def rule_for(program: str) -> str | None:
    """The rule for lookups run by ``program`` (as the hint prints it), or None when the
    hint names no absolute path (a bare ``ctxmode``: no rule, the lookups ask)."""
    rule = f"Bash({program} search:*)"
    return rule if _OURS.fullmatch(rule) else None


def is_ours(rule: object) -> bool:
    return isinstance(rule, str) and _OURS.fullmatch(rule) is not None


def current(text: str) -> list[str]:
    """ctxmode's rules in ``permissions.allow`` of a settings text, in file order."""
    value = settings.parse(text)
    perms = value.get(KEY) if isinstance(value, dict) else None
    allow = perms.get(ALLOW) if isinstance(perms, dict) else None
    return [rule for rule in allow if is_ours(rule)] if isinstance(allow, list) else []


def _nodes(
    body: str,
) -> tuple[settings._Doc, int | None, settings._Node | None, int | None, settings._Node | None]:
    """The document; ``permissions``' index in the root and its node; ``allow``'s index in
    it and its node (None where absent)."""
    doc = settings._load(body)
    at = settings._member(body, doc.root, KEY)
    if at is None:
        return doc, None, None, None, None
    start = doc.root.items[at][2]
    if body[start] != "{":
        raise SettingsError(f'"{KEY}" is not a JSON object; ctxmode leaves the file untouched')
    perms = settings._scan(body, start)
    index = settings._member(body, perms, ALLOW)
    if index is None:
        return doc, at, perms, None, None
    start = perms.items[index][2]
    if body[start] != "[":
        raise SettingsError(
            f'"{KEY}.{ALLOW}" is not a JSON array; ctxmode leaves the file untouched'
        )
    return doc, at, perms, index, settings._scan(body, start)


def _strip(body: str, keep: Sequence[str] = ()) -> str:
    """``body`` without ctxmode's rules (except those in ``keep``) and the ``allow`` and
    ``permissions`` containers that held nothing else."""
    _, _, perms, _, allow = _nodes(body)
    if allow is None:
        return body
    had_allow = bool(allow.items)
    while True:
        _, _, _, _, allow = _nodes(body)
        assert allow is not None
        gone = [
            i
            for i, (_, _, start, end) in enumerate(allow.items)
            if is_ours(v := json.loads(body[start:end])) and v not in keep
        ]
        if not gone:
            break
        body = settings._delete(body, allow, gone[-1])
    doc, at, perms, index, allow = _nodes(body)
    if had_allow and allow is not None and not allow.items:
        assert perms is not None and index is not None
        body = settings._delete(body, perms, index)
        doc, at, perms, _, _ = _nodes(body)
        if perms is not None and not perms.items:
            assert at is not None
            body = settings._delete(body, doc.root, at)
    return body


def merge(text: str, rules: Sequence[str]) -> str:
    """``text`` with exactly ``rules`` as ctxmode's allow rules; every other byte kept.

    Idempotent; a stale rule of ctxmode's (a moved installation) goes.
    """
    root_value = settings.parse(text)
    if not isinstance(root_value, dict):
        raise SettingsError("settings.json is not a JSON object; ctxmode leaves it untouched")
    bom, body = settings._split_bom(text)
    if not body.strip(" \t\r\n"):
        if not rules:
            return text
        fresh = {KEY: {ALLOW: list(rules)}}
        return bom + json.dumps(fresh, ensure_ascii=False, indent=2) + "\n"
    _nodes(body)  # refuses a shape it cannot edit before anything changes
    body = _strip(body, keep=rules)
    for rule in rules:
        doc, _, perms, _, allow = _nodes(body)
        style = settings._detect_style(body, doc.root)
        if perms is None:
            body = settings._append(body, doc.root, {ALLOW: [rule]}, style, key=KEY)
        elif allow is None:
            body = settings._append(body, perms, [rule], style, key=ALLOW)
        elif rule not in [json.loads(body[s:e]) for _, _, s, e in allow.items]:
            body = settings._append(body, allow, rule, style)
    return bom + body


def unmerge(text: str) -> str:
    """``text`` without ctxmode's allow rules (and the containers that emptied)."""
    root_value = settings.parse(text)
    if not isinstance(root_value, dict) or not current(text):
        return text
    bom, body = settings._split_bom(text)
    return bom + _strip(body)
