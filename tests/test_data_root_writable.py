"""A data root the hooks cannot make or write (issue 30, 3.4): ``doctor`` fails and says
why (without making anything where it only looks), the status line says ``ctx ?``, not
``ctx 0 ev``; and :mod:`ctxmode.writable`, which finds that out without writing."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxmode import doctor
from ctxmode.cli import main
from tests.test_statusline import quiet_line, run_status, status_payload

LINUX_MOUNTS = Path("/proc/self/mountinfo").is_file()
needs_proc = pytest.mark.skipif(not LINUX_MOUNTS, reason="no /proc mount table (not Linux)")


def data_checks(project: Path) -> dict[str, doctor.Check]:
    ctx = doctor.Context(env=dict(os.environ), project_dir=str(project), now=time.time())
    return {check.name: check for check in doctor.check_data_root(ctx)}


@contextlib.contextmanager
def unwritable(folder: Path) -> Iterator[None]:
    """``folder`` takes no new file, even for root (chattr +i there; chmod 500 elsewhere)."""
    if os.geteuid() != 0:
        folder.chmod(0o500)
        try:
            yield
        finally:
            folder.chmod(0o700)
        return
    done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip("as root, only an immutable folder refuses new files, and chattr +i failed")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


# --------------------------------------------------------------------------- doctor


@needs_proc
def test_doctor_fails_for_a_root_under_proc(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CTXMODE_HOME", "/proc/ctxmode-test/data")
    found = data_checks(project)["data root"]
    assert found.status == "fail"
    assert found.summary == (
        "/proc/ctxmode-test/data does not exist and cannot be made (/proc is on proc, a "
        "virtual file system of the kernel that holds no files): hooks record nothing"
    )
    assert found.fix.startswith("point CTXMODE_HOME at a folder you can write (or unset it")
    result = CliRunner().invoke(main, ["doctor", "--project", str(project)])
    assert result.exit_code == 1
    assert "ctxmode is working" not in result.output


def test_doctor_looks_without_making_the_root(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    root = tmp_path / "fresh" / "data"
    monkeypatch.setenv("CTXMODE_HOME", str(root))
    found = data_checks(project)["data root"]
    assert (found.status, found.summary) == (
        "ok",
        f"{root} does not exist yet; the first hook call creates it (0700)",
    )
    assert not (tmp_path / "fresh").exists()


def test_doctor_fails_where_the_nearest_folder_takes_no_new_one(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    monkeypatch.setenv("CTXMODE_HOME", str(locked / "data"))
    with unwritable(locked):
        found = data_checks(project)["data root"]
    assert found.status == "fail"
    assert found.summary == (
        f"{locked / 'data'} does not exist and cannot be made ({locked} is not writable by "
        "you): hooks record nothing"
    )
    assert found.fix.startswith(f"create it: mkdir -p -m 700 {locked / 'data'}; or point ")


def test_doctor_tries_a_file_in_an_existing_root_and_leaves_none(
    project: Path, data_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``access`` says yes to root everywhere (and to anyone on some network file systems):
    a file made and removed again in ctxmode's own folder tells the truth."""
    (data_root / "sessions").mkdir(mode=0o700)
    assert data_checks(project)["data root"].status == "ok"
    assert sorted(os.listdir(data_root)) == ["sessions"]
    monkeypatch.setattr("ctxmode.doctor.data_root.os.access", lambda *args, **kw: True)
    with unwritable(data_root / "sessions"):
        found = data_checks(project)["data root"]
    assert (found.status, found.summary) == (
        "fail",
        f"no new file can be made in {data_root / 'sessions'} "
        f"({'Operation not permitted' if os.geteuid() == 0 else 'Permission denied'}): "
        "hooks cannot record",
    )
    assert sorted(os.listdir(data_root / "sessions")) == []


# --------------------------------------------------------------------------- status line


@needs_proc
def test_the_status_line_says_ctx_question_mark_for_a_root_under_proc(project: Path) -> None:
    env = {**os.environ, "CTXMODE_HOME": "/proc/ctxmode-test/data"}
    assert quiet_line(run_status(status_payload(project), env=env)) == "ctx ? · 71% context"


def test_the_status_line_says_ctx_question_mark_where_the_store_cannot_be_written(
    project: Path, data_root: Path
) -> None:
    (data_root / "sessions").mkdir(mode=0o700)
    assert quiet_line(run_status(status_payload(project, used=None))) == "ctx 0 ev"
    with unwritable(data_root / "sessions"):
        assert quiet_line(run_status(status_payload(project, used=None))) == "ctx ?"


def test_the_status_line_says_0_ev_for_a_root_not_made_yet(project: Path, tmp_path: Path) -> None:
    env = {**os.environ, "CTXMODE_HOME": str(tmp_path / "not-yet" / "data")}
    assert quiet_line(run_status(status_payload(project, used=None), env=env)) == "ctx 0 ev"
    assert not (tmp_path / "not-yet").exists()


# --------------------------------------------------------------------------- writable


MOUNTS = (
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "23 22 0:5 / /proc rw,nosuid shared:2 - proc proc rw\n"
    "24 22 0:6 / /mnt/my\\040disk rw shared:3 - vfat /dev/sdb1 rw\n"
    "25 22 0:7 / /sys rw shared:4 master:9 - sysfs sysfs rw\n"
    "26 22 0:8 / /procfiles rw shared:5 - xfs /dev/sdc1 rw\n"
)


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("/", "ext4"),
        ("/home/u", "ext4"),
        ("/proc", "proc"),
        ("/proc/self", "proc"),
        ("/procfiles/x", "xfs"),  # a prefix of the name is not the folder
        ("/mnt/my disk/x", "vfat"),  # \040 is a space
        ("/sys/fs", "sysfs"),  # optional fields before the separator
    ],
)
def test_the_file_system_of_a_path(tmp_path: Path, path: str, kind: str) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(MOUNTS)
    from ctxmode import writable

    assert writable.file_system(path, str(table)) == kind


def test_no_mount_table_no_verdict_on_the_file_system(tmp_path: Path) -> None:
    from ctxmode import writable

    assert writable.file_system("/proc", str(tmp_path / "none")) is None
    assert writable.problem(str(tmp_path / "a" / "b"), str(tmp_path / "none")) is None


def test_a_file_in_the_way(tmp_path: Path) -> None:
    from ctxmode import writable

    (tmp_path / "file").write_text("")
    assert (
        writable.problem(str(tmp_path / "file" / "data")) == f"{tmp_path / 'file'} is not a folder"
    )


def test_a_virtual_file_system_is_named_for_a_user_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a user without write access (as root, /proc passes the access check): the
    reason is still that the kernel's file system holds no files (a newcomer's run of
    test_doctor_fails_for_a_root_under_proc as a non-root user failed on this)."""
    from ctxmode import writable

    table = tmp_path / "mountinfo"
    folder = tmp_path / "kernel"
    folder.mkdir()
    table.write_text(f"22 1 0:5 / {folder} rw,nosuid - proc proc rw\n")
    monkeypatch.setattr(writable.os, "access", lambda *_args, **_kw: False)
    assert writable.problem(str(folder / "data"), str(table)) == (
        f"{folder} is on proc, a virtual file system of the kernel that holds no files"
    )
