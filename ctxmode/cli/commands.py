"""The list of CLI commands: one import line per command module."""

from __future__ import annotations

import click

from ctxmode.cli.dump import dump
from ctxmode.cli.install_cmd import install, uninstall

ALL: list[click.Command] = [dump, install, uninstall]
