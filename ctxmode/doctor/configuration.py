"""Configuration check: both config files parse, name known options, and every redact
pattern compiles (a bad one would fail every hook call)."""

from __future__ import annotations

from ctxmode import config
from ctxmode.doctor.core import FAIL, OK, WARN, Check, Context
from ctxmode.wording import plural


def check_config(ctx: Context) -> list[Check]:
    rows = config.explain(ctx.env, ctx.project_dir)
    files = [config.global_path(ctx.env), config.project_path(ctx.project_dir)]
    problems: list[str] = []
    broken: list[str] = []
    for path in files:
        try:
            config.read_file(path)
        except config.ConfigError as exc:
            broken.append(str(exc))
            continue
        for key in config.unknown_keys(path):
            problems.append(f"unknown option {key!r} in {path} (ignored)")
    bad_regex: list[str] = []
    for row in rows:
        for problem in row["problems"]:
            (bad_regex if "regular expression" in problem else problems).append(
                f"{row['name']}: {problem}"
            )
    if bad_regex:
        return [
            Check(
                "config",
                "config",
                FAIL,
                "a redact pattern is not a valid regular expression: every hook call fails",
                "ctxmode config set redact_patterns '[...]' (or unset it)",
                tuple(bad_regex + broken + problems),
            )
        ]
    if broken or problems:
        return [
            Check(
                "config",
                "config",
                WARN,
                f"{plural(len(broken) + len(problems), 'problem')} in the configuration files",
                "ctxmode config list shows what is in effect; fix with ctxmode config set/unset",
                tuple(broken + problems),
            )
        ]
    changed = [
        f"{row['name']}={config.format_value(row['value'])}"
        for row in rows
        if row["source"] != "default"
    ]
    summary = (
        "defaults" if not changed else f"{plural(len(changed), 'option')} set: {', '.join(changed)}"
    )
    return [Check("config", "config", OK, summary)]
