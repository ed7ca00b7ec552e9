"""How a hook command is started and measured: a bare helper process that spawns each
run through ``sh -c`` and reports its wall time, peak memory and CPU time
(:class:`Launcher`); plain ``subprocess`` where that cannot work (:class:`LocalRunner`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping

from ctxmode.bench.cases import BenchError
from ctxmode.bench.results import Sample

# The process that starts each hook. Why not this process: on Linux a child's peak
# memory (ru_maxrss) counts the memory of the process that spawned it, up to the exec;
# this CLI holds click, the seeded store and a 20 MB payload, which would hide the
# hook's own figure. So a bare interpreter that imports nothing but os/select/time
# spawns, times and reaps every run. Its own few MiB remain in the figure (a reading
# never falls below the launcher's size, ~ the floor's): an upper bound, never less.
# Protocol on its stdin: "<len> <len>\n" + command + stdin file path; it answers
# "<seconds> <maxrss> <exit> <cpu seconds> <len> <len>\n" + stdout + stderr.
LAUNCHER = r"""
import os, select, sys, time

def read_exact(n):
    parts = []
    while n:
        chunk = os.read(0, n)
        if not chunk:
            os._exit(0)
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)

def read_line():
    line = b""
    while not line.endswith(b"\n"):
        char = os.read(0, 1)
        if not char:
            os._exit(0)
        line += char
    return line

try:  # forget the start-up peak (Linux): only what a hook adds should show
    with open("/proc/self/clear_refs", "w") as handle:
        handle.write("5")
except OSError:
    pass
scale = 1 if sys.platform == "darwin" else 1024
while True:
    sizes = read_line().split()
    command = read_exact(int(sizes[0])).decode()
    path = read_exact(int(sizes[1])).decode()
    source = os.open(path, os.O_RDONLY)
    # A payload up to 1 MiB is read before the clock starts; a bigger one is streamed.
    exhausted = os.fstat(source).st_size <= 1 << 20
    pending = os.read(source, 1 << 20) if exhausted else b""
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    started = time.perf_counter()
    pid = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", command], os.environ, file_actions=[
        (os.POSIX_SPAWN_DUP2, in_r, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
        (os.POSIX_SPAWN_DUP2, err_w, 2)])
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    os.set_blocking(in_w, False)
    writing = True
    output = {out_r: [], err_r: []}
    readers = [out_r, err_r]
    while readers or writing:
        if writing and exhausted and not pending:
            os.close(in_w)
            writing = False
            continue
        readable, writable, _ = select.select(readers, [in_w] if writing else [], [])
        if writable:
            if not pending:
                pending = os.read(source, 1 << 16)
                exhausted = not pending
            try:
                pending = pending[os.write(in_w, pending[: 1 << 16]):]
            except BrokenPipeError:  # the hook stopped reading: its right
                pending, exhausted = b"", True
        for fd in readable:
            data = os.read(fd, 1 << 16)
            if data:
                output[fd].append(data)
            else:
                readers.remove(fd)
                os.close(fd)
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - started
    os.close(source)
    out, err = b"".join(output[out_r]), b"".join(output[err_r])
    cpu = usage.ru_utime + usage.ru_stime
    head = f"{seconds!r} {usage.ru_maxrss * scale} {os.waitstatus_to_exitcode(status)} {cpu!r} "
    os.write(1, (head + f"{len(out)} {len(err)}\n").encode() + out + err)
"""


class Launcher:
    """A small helper process that runs hook commands and reports time and memory."""

    def __init__(self, env: Mapping[str, str], cwd: str, scratch: str) -> None:
        self.scratch = scratch
        self.counter = 0
        self.proc = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", LAUNCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )

    def run(self, command: str, stdin: bytes | str) -> Sample:
        """Run ``sh -c command``; ``stdin`` is the payload, or the path of a file holding it."""
        if isinstance(stdin, bytes):
            self.counter += 1
            path = os.path.join(self.scratch, f"payload-{self.counter % 4}")
            with open(path, "wb") as handle:
                handle.write(stdin)
        else:
            path = stdin
        assert self.proc.stdin is not None and self.proc.stdout is not None
        raw_command, raw_path = command.encode(), path.encode()
        self.proc.stdin.write(f"{len(raw_command)} {len(raw_path)}\n".encode())
        self.proc.stdin.write(raw_command + raw_path)
        self.proc.stdin.flush()
        head = self.proc.stdout.readline().split()
        if len(head) != 6:
            raise BenchError("the benchmark's launcher process stopped")
        out = self.proc.stdout.read(int(head[4]))
        err = self.proc.stdout.read(int(head[5]))
        return Sample(float(head[0]), int(head[1]), int(head[2]), out, err, float(head[3]))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class LocalRunner:
    """Fallback where posix_spawn/wait4 are missing (Windows): time only, no memory."""

    def __init__(self, env: Mapping[str, str], cwd: str, scratch: str) -> None:
        self.env, self.cwd = dict(env), cwd

    def run(self, command: str, stdin: bytes | str) -> Sample:
        if isinstance(stdin, str):
            with open(stdin, "rb") as handle:
                stdin = handle.read()
        started = time.perf_counter()
        proc = subprocess.run(
            ["sh", "-c", command],
            input=stdin,
            capture_output=True,
            env=self.env,
            cwd=self.cwd,
            check=False,
        )
        seconds = time.perf_counter() - started
        return Sample(seconds, None, proc.returncode, proc.stdout, proc.stderr)

    def close(self) -> None:
        pass


def make_runner(env: Mapping[str, str], cwd: str, scratch: str) -> Launcher | LocalRunner:
    if hasattr(os, "posix_spawn") and hasattr(os, "wait4") and os.path.exists("/bin/sh"):
        return Launcher(env, cwd, scratch)
    return LocalRunner(env, cwd, scratch)  # pragma: no cover - not POSIX
