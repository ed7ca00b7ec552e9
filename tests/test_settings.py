"""ctxmode.settings: surgical merge/unmerge of ctxmode's handlers in settings.json text."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from ctxmode import settings
from ctxmode.settings import HookSpec, SettingsError, merge, unmerge

NEW = "/home/dev/.local/share/ctxmode/venv"
OLD = "/home/dev/old-venvs/ctxmode-0.0.9"


def spec_list(root: str = NEW) -> list[HookSpec]:
    site = f"{root}/lib/python3.11/site-packages/ctxmode/hooks"

    def cmd(shim: str) -> str:
        return f"'{root}/bin/python' -I -S '{site}/{shim}.py'"

    return [
        HookSpec("PostToolUse", cmd("post_tool_use"), 10, ""),
        HookSpec("PostToolUseFailure", cmd("post_tool_use_failure"), 10, ""),
        HookSpec("UserPromptSubmit", cmd("user_prompt_submit"), 10),
        HookSpec("PreCompact", cmd("pre_compact"), 30),
        HookSpec("SessionStart", cmd("session_start"), 30, "startup|resume|clear|compact|fork"),
        HookSpec("SessionEnd", cmd("session_end"), 5),
    ]


SPECS = spec_list()


def expected_hooks(specs: list[HookSpec] = SPECS) -> dict[str, Any]:
    return {spec.event: [spec.group()] for spec in specs}


def cmd_of(event: str, specs: list[HookSpec] = SPECS) -> str:
    return next(spec.command for spec in specs if spec.event == event)


FRESH = """{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/post_tool_use.py'",
            "timeout": 10
          }
        ]
      }
    ],
    "PostToolUseFailure": [
      {
        "matcher": "",
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/post_tool_use_failure.py'",
            "timeout": 10
          }
        ]
      }
    ],
    "UserPromptSubmit": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/user_prompt_submit.py'",
            "timeout": 10
          }
        ]
      }
    ],
    "PreCompact": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/pre_compact.py'",
            "timeout": 30
          }
        ]
      }
    ],
    "SessionStart": [
      {
        "matcher": "startup|resume|clear|compact|fork",
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/session_start.py'",
            "timeout": 30
          }
        ]
      }
    ],
    "SessionEnd": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "'/home/dev/.local/share/ctxmode/venv/bin/python' -I -S '/home/dev/.local/share/ctxmode/venv/lib/python3.11/site-packages/ctxmode/hooks/session_end.py'",
            "timeout": 5
          }
        ]
      }
    ]
  }
}
"""

# --- realistic settings files (shapes people keep in ~/.claude and .claude/) ----------

USER_2SP = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run lint)", "Bash(git diff:*)"],
    "deny": ["Read(./.env)"]
  },
  "env": {"DISABLE_TELEMETRY": "1"},
  "statusLine": {"type": "command", "command": "~/.claude/statusline.sh"}
}
"""

# Foreign hooks on the very events ctxmode uses, 4-space indent, no trailing newline.
FOREIGN_4SP = """{
    "hooks": {
        "PostToolUse": [
            {
                "matcher": "Edit|Write",
                "hooks": [
                    {
                        "type": "command",
                        "command": "npx prettier --write \\"$CLAUDE_FILE_PATHS\\""
                    }
                ]
            }
        ],
        "SessionStart": [
            {
                "matcher": "startup",
                "hooks": [{"type": "command", "command": "cat ~/notes/today.md"}]
            }
        ],
        "Stop": [
            {
                "hooks": [{"type": "command", "command": "say done", "timeout": 5}]
            }
        ]
    },
    "includeCoAuthoredBy": false
}"""

TABS = '{\n\t"model": "sonnet",\n\t"cleanupPeriodDays": 30\n}\n'

MINIFIED = '{"model":"opus","hooks":{"Notification":[{"hooks":[{"type":"command","command":"notify-send claude"}]}]}}'

CRLF = (
    '{\r\n  "model": "opus",\r\n  "enabledPlugins": {\r\n    "formatter@team": true\r\n  }\r\n}\r\n'
)

UNICODE = '{\n  "statusLine": {"type": "command", "command": "echo \\u2192 \u2713 caf\\u00e9"},\n  "language": "fran\u00e7ais"\n}\n'

BOM = "\ufeff" + '{\n  "model": "opus"\n}\n'

# A pre-existing empty group is the user's: ctxmode must not remove it.
EMPTY_GROUP = """{
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit",
        "hooks": []
      }
    ]
  }
}
"""

ODD_SPACING = '{ "model" : "opus" ,\n  "permissions" :{ "allow" :[ ] } }\n'

INLINE_EVENT = """{
  "hooks": {
    "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "log-bash"}]}]
  }
}
"""

FILES = {
    "user-2-spaces": USER_2SP,
    "foreign-hooks-4-spaces": FOREIGN_4SP,
    "tabs": TABS,
    "minified": MINIFIED,
    "crlf": CRLF,
    "unicode-and-escapes": UNICODE,
    "bom": BOM,
    "empty-group": EMPTY_GROUP,
    "odd-spacing": ODD_SPACING,
    "inline-event-array": INLINE_EVENT,
    "empty-object": "{}",
    "empty-object-newline": "{}\n",
}


def value(text: str) -> Any:
    return json.loads(text.lstrip("\ufeff"))


def with_ours(original: dict[str, Any], specs: list[HookSpec] = SPECS) -> dict[str, Any]:
    """The value a merge must produce: the original plus one ctxmode group per event."""
    result = json.loads(json.dumps(original))
    hooks = result.setdefault("hooks", {})
    for spec in specs:
        hooks.setdefault(spec.event, []).append(spec.group())
    return result


def assert_only_additions(before: str, after: str) -> None:
    """``after`` is ``before`` with text inserted: every original character kept, in order."""
    rest = iter(after)
    missing = [i for i, char in enumerate(before) if not any(char == other for other in rest)]
    assert not missing, (
        f"original text lost from offset {missing[0]}: {before[missing[0] :][:40]!r}"
    )


@pytest.mark.parametrize("name", list(FILES))
def test_merge_adds_exactly_our_groups_and_keeps_everything_else(name: str) -> None:
    original = FILES[name]
    merged = merge(original, SPECS)
    assert value(merged) == with_ours(value(original))
    assert_only_additions(original, merged)
    assert merged.startswith("\ufeff") == original.startswith("\ufeff")
    assert merged.endswith("\n") == original.endswith("\n")


@pytest.mark.parametrize("name", list(FILES))
def test_merge_is_idempotent(name: str) -> None:
    once = merge(FILES[name], SPECS)
    assert merge(once, SPECS) == once


@pytest.mark.parametrize("name", list(FILES))
def test_unmerge_restores_the_original_bytes(name: str) -> None:
    original = FILES[name]
    assert unmerge(merge(original, SPECS)) == original


@pytest.mark.parametrize(
    ("name", "indent"),
    [
        ("user-2-spaces", '\n  "hooks": {\n    "PostToolUse": [\n      {\n'),
        ("foreign-hooks-4-spaces", '\n            {\n                "matcher": "",\n'),
        ("tabs", '\n\t"hooks": {\n\t\t"PostToolUse": [\n\t\t\t{\n\t\t\t\t"matcher": "",\n'),
        ("crlf", '\r\n  "hooks": {\r\n    "PostToolUse": [\r\n      {\r\n'),
    ],
)
def test_inserted_text_follows_the_file_style(name: str, indent: str) -> None:
    merged = merge(FILES[name], SPECS)
    assert indent in merged
    if name == "crlf":
        assert "\n" not in merged.replace("\r\n", "")


def test_empty_text_gets_a_fresh_document() -> None:
    assert merge("", SPECS) == FRESH
    assert merge("  \n", SPECS) == FRESH
    assert merge("{}\n", SPECS) == FRESH
    assert merge("{}", SPECS) == FRESH[:-1]


def test_minified_file_stays_on_one_line() -> None:
    merged = merge(MINIFIED, SPECS)
    assert "\n" not in merged
    assert merged.startswith(MINIFIED[:-2])  # everything up to the closing "}}" kept
    assert '"PostToolUse":[{"matcher":"","hooks":[{"type":"command","command":' in merged


def test_foreign_groups_on_the_same_events_come_first_and_stay_identical() -> None:
    merged = value(merge(FOREIGN_4SP, SPECS))
    post = merged["hooks"]["PostToolUse"]
    assert post[0] == {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": 'npx prettier --write "$CLAUDE_FILE_PATHS"'}],
    }
    assert post[1] == SPECS[0].group()
    start = merged["hooks"]["SessionStart"]
    assert start == [
        {"matcher": "startup", "hooks": [{"type": "command", "command": "cat ~/notes/today.md"}]},
        {
            "matcher": "startup|resume|clear|compact|fork",
            "hooks": [{"type": "command", "command": cmd_of("SessionStart"), "timeout": 30}],
        },
    ]
    assert merged["hooks"]["Stop"] == [
        {"hooks": [{"type": "command", "command": "say done", "timeout": 5}]}
    ]
    assert list(merged) == ["hooks", "includeCoAuthoredBy"]
    assert list(merged["hooks"]) == [
        "PostToolUse",
        "SessionStart",
        "Stop",
        "PostToolUseFailure",
        "UserPromptSubmit",
        "PreCompact",
        "SessionEnd",
    ]


def test_upgrade_replaces_stale_paths_in_place_without_duplicates() -> None:
    stale = merge(FOREIGN_4SP, spec_list(OLD))
    upgraded = merge(stale, SPECS)
    assert OLD not in upgraded
    assert upgraded == merge(FOREIGN_4SP, SPECS)  # same bytes as a fresh install
    found = settings.registrations(upgraded)
    assert sorted(r.event for r in found) == sorted(spec.event for spec in SPECS)
    assert unmerge(upgraded) == FOREIGN_4SP


def test_upgrade_changes_only_the_command_lines() -> None:
    stale = merge(USER_2SP, spec_list(OLD))
    upgraded = merge(stale, SPECS)
    assert len(stale.splitlines()) == len(upgraded.splitlines())
    changed = [
        (a, b) for a, b in zip(stale.splitlines(), upgraded.splitlines(), strict=True) if a != b
    ]
    assert len(changed) == 6
    assert all('"command":' in a and OLD in a and NEW in b for a, b in changed)


def test_timeout_edited_by_hand_is_put_back() -> None:
    merged = merge(USER_2SP, SPECS)
    edited = merged.replace('"timeout": 30', '"timeout": 600', 1)
    assert merge(edited, SPECS) == merged


def test_duplicate_own_groups_collapse_to_one() -> None:
    doubled = {
        "hooks": {
            "PostToolUse": [
                SPECS[0].group(),
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
                spec_list(OLD)[0].group(),
            ]
        }
    }
    text = json.dumps(doubled, indent=2) + "\n"
    merged = value(merge(text, SPECS))
    assert merged["hooks"]["PostToolUse"] == [
        SPECS[0].group(),
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
    ]


def test_handler_inside_a_foreign_group_is_moved_out_of_it() -> None:
    mixed = {
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "audit.sh"},
                        {"type": "command", "command": spec_list(OLD)[0].command},
                    ],
                }
            ]
        }
    }
    text = json.dumps(mixed, indent=2) + "\n"
    merged = value(merge(text, SPECS))
    assert merged["hooks"]["PostToolUse"] == [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]},
        SPECS[0].group(),
    ]
    # Uninstall from the mixed state takes only our handler; the foreign group stays.
    assert value(unmerge(text)) == {
        "hooks": {
            "PostToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]
        }
    }


def test_handler_of_an_event_no_longer_registered_is_removed() -> None:
    old = {
        "hooks": {
            "SubagentStop": [spec_list(OLD)[5].group()],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        }
    }
    merged = value(merge(json.dumps(old, indent=2), SPECS))
    assert "SubagentStop" not in merged["hooks"]
    assert merged["hooks"]["Stop"] == old["hooks"]["Stop"]


def test_unmerge_keeps_foreign_handlers_and_preexisting_empty_group() -> None:
    merged = merge(EMPTY_GROUP, SPECS)
    assert value(merged)["hooks"]["PostToolUse"][0] == {"matcher": "Edit", "hooks": []}
    assert unmerge(merged) == EMPTY_GROUP


@pytest.mark.parametrize("name", list(FILES))
def test_unmerge_without_ctxmode_changes_nothing(name: str) -> None:
    assert unmerge(FILES[name]) == FILES[name]


@pytest.mark.parametrize(
    "text", ["", "{}", '{"hooks": null}', '{"hooks": {"PostToolUse": "x"}}', '{"hooks": []}']
)
def test_unmerge_leaves_odd_shapes_alone(text: str) -> None:
    assert unmerge(text) == text


# --- refusals -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ('{\n  "model": "opus"\n  "hooks": {}\n}\n', "line 3, column 3", "invalid JSON"),
        (
            '{\n  "model": "opus",\n  // keep sonnet for cheap runs\n  "x": 1\n}\n',
            "line 3, column 3",
            "a comment",
        ),
        ('{\n  /* block */ "model": "opus"\n}\n', "line 2, column 3", "a comment"),
        # A trailing comma is reported where the comma is, not at the bracket after it.
        ('{\n  "model": "opus",\n}\n', "line 2, column 18", "a trailing comma"),
        ('{"permissions": {"allow": ["Bash(ls)",]}}', "line 1, column 38", "a trailing comma"),
        ('{\r\n  "a": [\r\n    1,\r\n\r\n  ]\r\n}', "line 3, column 6", "a trailing comma"),
        ('\ufeff{"a": 1,\n\n}', "line 1, column 8", "a trailing comma"),
        ('{"model": "opus"', "line 1, column 17", "invalid JSON"),
        ('{"model": "opus"} trailing', "line 1, column 19", "invalid JSON"),
    ],
)
def test_malformed_and_jsonc_are_refused_with_line_and_column(
    text: str, where: str, what: str
) -> None:
    for operation in (lambda t: merge(t, SPECS), unmerge):
        with pytest.raises(SettingsError) as info:
            operation(text)
        assert where in str(info.value)
        assert what in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "not a JSON object"),
        ('"settings"', "not a JSON object"),
        ('{"hooks": []}', '"hooks" is not a JSON object'),
        ('{"hooks": {"PostToolUse": {"matcher": ""}}}', '"hooks.PostToolUse" is not a JSON array'),
    ],
)
def test_unexpected_shapes_are_refused_by_merge(text: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace(".", r"\.")):
        merge(text, SPECS)


# --- recognition ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "ours"),
    [
        (SPECS[0].command, True),
        (
            "'C:/Users/me/AppData/Local/ctxmode/ctxmode/venv/Scripts/python.exe' -I -S "
            "'C:/Users/me/AppData/Local/ctxmode/ctxmode/venv/Lib/site-packages/ctxmode/hooks/session_end.py'",
            True,
        ),
        (r"python C:\tools\ctxmode\hooks\pre_compact.py", True),
        ("python3 /src/ctxmode/hooks/session_start.py", True),
        ("python3 /src/ctxmode/hooks/session_start.pyc", False),
        ("python3 /src/otherproject/hooks/session_start.py", False),
        ("python3 /src/ctxmode/hooks/helper.py", False),
        ("echo ctxmode hooks", False),
        (None, False),
        (42, False),
        # A shared project file's form: the per-user launcher, by shim name.
        (
            "[ -x ~/.local/bin/ctxmode-hook ] && exec ~/.local/bin/ctxmode-hook session_end; exit 0",
            True,
        ),
        ("ctxmode-hook post_tool_use_failure", True),
        ("ctxmode-hook helper", False),
        ("ctxmode-hook session_ending", False),
    ],
)
def test_is_ctxmode_command(command: object, ours: bool) -> None:
    assert settings.is_ctxmode_command(command) is ours


@pytest.mark.parametrize(
    ("command", "shim", "launcher"),
    [
        (SPECS[0].command, "post_tool_use", False),
        ("ctxmode-hook post_tool_use_failure", "post_tool_use_failure", True),
        (
            "[ -x ~/.local/bin/ctxmode-hook ] && exec ~/.local/bin/ctxmode-hook pre_compact; exit 0",
            "pre_compact",
            True,
        ),
    ],
)
def test_shim_and_launcher_of_a_command(command: str, shim: str, launcher: bool) -> None:
    assert settings.shim_of(command) == shim
    assert settings.runs_launcher(command) is launcher


@pytest.mark.parametrize(
    ("platform", "path"),
    [
        ("linux", "/etc/claude-code/managed-settings.json"),
        ("darwin", "/Library/Application Support/ClaudeCode/managed-settings.json"),
        ("win32", "C:\\ProgramData\\ClaudeCode\\managed-settings.json"),
    ],
)
def test_managed_settings_path(platform: str, path: str) -> None:
    assert settings.managed_settings_path(platform) == path


def test_registrations_list_what_is_installed() -> None:
    found = settings.registrations(merge(FOREIGN_4SP, SPECS))
    assert [(r.event, r.shim, r.timeout, r.matcher, r.own_group) for r in found] == [
        ("PostToolUse", "post_tool_use", 10, "", True),
        ("SessionStart", "session_start", 30, "startup|resume|clear|compact|fork", True),
        ("PostToolUseFailure", "post_tool_use_failure", 10, "", True),
        ("UserPromptSubmit", "user_prompt_submit", 10, None, True),
        ("PreCompact", "pre_compact", 30, None, True),
        ("SessionEnd", "session_end", 5, None, True),
    ]


@pytest.mark.parametrize(
    ("text", "keys"),
    [
        (
            '{"enabledPlugins": {"ctxmode@ctxmode-dev": true, "other@x": true}}',
            ["ctxmode@ctxmode-dev"],
        ),
        ('{"enabledPlugins": {"ctxmode@ctxmode-dev": false}}', []),
        ('{"enabledPlugins": {"ctxmode-extra@x": true}}', []),
        ('{"enabledPlugins": ["ctxmode"]}', []),
        ("{}", []),
    ],
)
def test_enabled_plugins(text: str, keys: list[str]) -> None:
    assert settings.enabled_plugins(text) == keys


# --- round trips over generated files ---------------------------------------------------

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
)
_keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyzAZ_$-é", min_size=1, max_size=10)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_keys, inner, max_size=3)),
    max_leaves=8,
)
_foreign_group = st.fixed_dictionaries(
    {
        "hooks": st.lists(
            st.fixed_dictionaries(
                {
                    "type": st.just("command"),
                    "command": st.sampled_from(["say hi", "./fmt.sh", "jq . >/dev/null"]),
                }
            ),
            max_size=2,
        )
    },
    optional={"matcher": st.sampled_from(["", "Bash", "Edit|Write", "startup"])},
)
_events = st.sampled_from(["PostToolUse", "SessionStart", "SessionEnd", "Stop", "Notification"])
# Non-empty arrays and a non-empty hooks object: an empty container that ctxmode fills
# and empties again is removed by uninstall (its one documented, lossless-in-value case).
_hooks = st.dictionaries(
    _events, st.lists(_foreign_group, min_size=1, max_size=2), min_size=1, max_size=3
)
_settings = st.builds(
    lambda extra, hooks: {**extra, **({"hooks": hooks} if hooks is not None else {})},
    st.dictionaries(_keys.filter(lambda k: k != "hooks"), _json, max_size=4),
    st.one_of(st.none(), _hooks),
)
_layouts = st.sampled_from([2, 4, "\t", None, "compact"])


def _dump(doc: dict[str, Any], layout: object, newline: bool) -> str:
    if layout == "compact":
        text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    else:
        text = json.dumps(doc, indent=layout, ensure_ascii=layout == 4)  # type: ignore[arg-type]
    return text + ("\n" if newline else "")


@hsettings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=_settings, layout=_layouts, newline=st.booleans(), old_first=st.booleans())
def test_round_trip_over_generated_settings(
    doc: dict[str, Any], layout: object, newline: bool, old_first: bool
) -> None:
    original = _dump(doc, layout, newline)
    merged = merge(original, SPECS)
    assert value(merged) == with_ours(doc)
    assert merge(merged, SPECS) == merged
    assert unmerge(merged) == original
    if old_first:  # an upgrade over a stale install lands on the same bytes
        assert merge(merge(original, spec_list(OLD)), SPECS) == merged
