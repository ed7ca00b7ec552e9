"""The list of CLI commands: one import line per command module."""

from __future__ import annotations

import click

from ctxmode.cli.bench_cmd import bench_command
from ctxmode.cli.config_cmd import config_group
from ctxmode.cli.demo import demo_cmd
from ctxmode.cli.doctor import doctor_cmd
from ctxmode.cli.dump import dump
from ctxmode.cli.install_cmd import install, uninstall
from ctxmode.cli.search import search
from ctxmode.cli.sessions import purge_cmd, sessions_cmd, show_snapshot_cmd
from ctxmode.cli.stats import stats

ALL: list[click.Command] = [
    dump,
    install,
    uninstall,
    bench_command,
    doctor_cmd,
    demo_cmd,
    config_group,
    sessions_cmd,
    show_snapshot_cmd,
    purge_cmd,
    search,
    stats,
]
