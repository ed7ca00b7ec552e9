"""ctxmode's ``permissions.allow`` rule: merged into any settings text without touching
another byte, removed byte-exact, recognised by its form only, and the same program the
snapshot's lookups print (so Claude Code's prefix match allows them as written)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from ctxmode import handlers
from ctxmode.hosts.claude_code import install as installer
from ctxmode.hosts.claude_code import settings_permissions as sp
from ctxmode.hosts.claude_code.install import install, uninstall
from ctxmode.settings import SettingsError

RULE = "Bash(/home/dev/.local/share/ctxmode/venv/bin/ctxmode search:*)"
MOVED = "Bash(/opt/ctxmode/venv/bin/ctxmode search:*)"

TEXTS = [
    "{}",
    "{}\n",
    '{\n  "model": "opus"\n}\n',
    '{\n    "permissions": {\n        "allow": [\n            "Bash(npm test:*)"\n'
    '        ],\n        "deny": []\n    }\n}\n',
    '{\n\t"permissions": {\n\t\t"defaultMode": "default"\n\t}\n}\n',
    '{"permissions":{"allow":["Read","Edit"]},"model":"x"}',
    '{\r\n  "permissions": {\r\n    "allow": ["Bash(ls:*)"]\r\n  }\r\n}\r\n',
    '\ufeff{\n  "env": {"A": "1"}\n}\n',
    '{\n  "permissions": {\n    "allow": [\n      "Bash(git status)",\n      "WebFetch"\n'
    '    ],\n    "ask": []\n  },\n  "hooks": {}\n}\n',
]


@pytest.mark.parametrize("text", TEXTS)
def test_merge_adds_only_the_rule_and_unmerge_restores_every_byte(text: str) -> None:
    merged = sp.merge(text, [RULE])
    assert sp.current(merged) == [RULE]
    assert sp.merge(merged, [RULE]) == merged  # idempotent
    value = json.loads(merged.lstrip("\ufeff"))
    before = json.loads(text.lstrip("\ufeff"))
    foreign = (before.get("permissions") or {}).get("allow", [])
    assert value["permissions"]["allow"] == [*foreign, RULE]
    assert sp.unmerge(merged) == text
    moved = sp.merge(merged, [MOVED])  # a moved installation: the stale rule goes
    assert sp.current(moved) == [MOVED]
    assert sp.unmerge(moved) == text
    assert sp.merge(merged, []) == text


def test_an_empty_file_gets_a_fresh_object() -> None:
    assert json.loads(sp.merge("", [RULE])) == {"permissions": {"allow": [RULE]}}
    assert sp.merge("", []) == ""


@pytest.mark.parametrize(
    "text",
    ['{"permissions": []}', '{"permissions": {"allow": "Bash"}}', "[]", '{"a": 1,}'],
)
def test_a_shape_it_cannot_edit_is_refused(text: str) -> None:
    with pytest.raises(SettingsError):
        sp.merge(text, [RULE])


@pytest.mark.parametrize(
    ("program", "rule"),
    [
        ("/v/bin/ctxmode", "Bash(/v/bin/ctxmode search:*)"),
        ("'/my stuff/bin/ctxmode'", "Bash('/my stuff/bin/ctxmode' search:*)"),
        ("ctxmode", None),  # PATH could resolve a bare name to anything
        ("$'/a\\x26b/bin/ctxmode'", None),  # ANSI-C quoting: the client asks anyway
        ("/v/bin/ctxmode-other", None),
        ("/v/bin/ctxmode; rm -rf /", None),
    ],
)
def test_rules_name_an_absolute_ctxmode_only(program: str, rule: str | None) -> None:
    assert sp.rule_for(program) == rule
    if rule is not None:
        assert sp.is_ours(rule)


def test_foreign_rules_are_never_taken_for_ours() -> None:
    for rule in [
        "Bash(ctxmode search:*)",
        "Bash(/v/bin/ctxmode dump:*)",
        "Bash(/v/bin/ctxmode search *)",
        "Bash(/v/bin/ctxmode:*)",
        "Bash(/v/bin/ctxmode search:*) ",
        "Read(/v/bin/ctxmode search:*)",
    ]:
        assert not sp.is_ours(rule), rule
        text = json.dumps({"permissions": {"allow": [rule]}})
        assert sp.unmerge(text) == text


def test_the_rule_install_writes_allows_the_lookup_the_hooks_print(tmp_path: Path) -> None:
    rules, note = installer.lookup_rules("user")
    assert note == "" and len(rules) == 1
    program = handlers.lookup_program()
    assert program == os.path.join(os.path.dirname(sys.executable), "ctxmode")
    lookup = handlers.search_command(str(tmp_path))
    assert rules == [f"Bash({program} search:*)"]
    assert lookup.startswith(f"{program} search ")  # Claude Code matches this prefix
    # The project scope (a shared file) gets none and says why.
    assert installer.lookup_rules("project")[0] == []
    # No ctxmode beside the interpreter: no rule, and the note says the lookups will ask.
    (tmp_path / "bin").mkdir()
    rules, note = installer.lookup_rules("user", python=str(tmp_path / "bin" / "python"))
    assert rules == [] and "ask" in note


USER_FILE = """{
  "model": "opus",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)"
    ],
    "deny": [
      "Read(./.env)"
    ]
  }
}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.197")
    monkeypatch.chdir(tmp_path)
    return home


def test_uninstall_removes_exactly_what_install_added(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.write_text(USER_FILE)
    result = install("user")
    assert result.permissions == tuple(installer.lookup_rules("user")[0])
    assert sp.current(path.read_text()) == list(result.permissions)
    assert uninstall("user").action == "removed"
    assert path.read_text() == USER_FILE  # byte for byte, from the backup

    # Changed by the user since: the surgical way, still exact around their change.
    install("user")
    text = path.read_text().replace('"model": "opus"', '"model": "sonnet"')
    path.write_text(text)
    uninstall("user")
    assert path.read_text() == USER_FILE.replace('"model": "opus"', '"model": "sonnet"')


def test_only_the_rule_left_by_an_earlier_install_is_still_uninstalled(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.write_text(sp.merge(USER_FILE, [MOVED]))
    result = uninstall("user")
    assert result.action == "removed"
    assert path.read_text() == USER_FILE


# --- round trips over generated files ---------------------------------------------------

_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyzAZ_$-é", min_size=1, max_size=10)
_values = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=8))
_rules = st.sampled_from(["Read", "Bash(npm test:*)", "WebFetch(domain:x.org)", "Bash(ls *)"])
# Non-empty allow arrays: an empty container that ctxmode fills and empties again is
# removed by uninstall (the documented case; the install's backup restores it exactly).
_permissions = st.fixed_dictionaries(
    {},
    optional={
        "allow": st.lists(_rules, min_size=1, max_size=3),
        "deny": st.lists(_rules, max_size=2),
        "defaultMode": st.just("default"),
    },
).filter(lambda p: bool(p))
_docs = st.builds(
    lambda extra, perms: {**extra, **({"permissions": perms} if perms is not None else {})},
    st.dictionaries(_keys.filter(lambda k: k != "permissions"), _values, max_size=3),
    st.one_of(st.none(), _permissions),
)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    doc=_docs,
    layout=st.sampled_from([2, 4, "\t", None, "compact"]),
    newline=st.booleans(),
)
def test_round_trip_over_generated_settings(
    doc: dict[str, object], layout: object, newline: bool
) -> None:
    if layout == "compact":
        original = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    else:
        original = json.dumps(doc, indent=layout, ensure_ascii=layout == 4)  # type: ignore[arg-type]
    original += "\n" if newline else ""
    merged = sp.merge(original, [RULE])
    value = json.loads(merged)
    perms = value.pop("permissions")
    before = dict(doc)
    expected = dict(before.pop("permissions", {}))  # type: ignore[call-overload]
    expected["allow"] = [*expected.get("allow", []), RULE]
    assert (value, perms) == (before, expected)
    assert sp.merge(merged, [RULE]) == merged
    assert sp.unmerge(merged) == original
    assert sp.unmerge(sp.merge(merged, [MOVED])) == original
