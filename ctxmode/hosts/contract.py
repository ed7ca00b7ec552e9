"""What a host provides: the interface of a host package and of each of its parts, typed.

A host is one folder, ``ctxmode/hosts/<name>/``, and one name in ``ctxmode.hosts.NAMES``.
Each protocol below is what one of its modules holds (module-level names: the protocols'
methods are the module's functions, without ``self``). tests/test_host_contract.py holds
every registered host to them: each name present, each function taking the parameters
named here. docs/hosts.md ("Adding a host") says which files a new host adds.

Documentation and test only: no hook imports this module (it imports typing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ctxmode.bench.cases import Case, HostCommands
    from ctxmode.bench.results import Sample
    from ctxmode.config_files import Report
    from ctxmode.doctor.core import Check, Context
    from ctxmode.history import Chunk
    from ctxmode.payload import HookInput
    from ctxmode.proof import VerifyResult
    from ctxmode.settings import HookSpec


@runtime_checkable
class Host(Protocol):
    """``hosts/<name>/__init__.py``: everything a hook needs, and nothing else.

    On the hook path (``hosts.get(name)`` in ``hookrun``): stdlib-light, no json, re or
    typing at module level (tests/test_layering.py), its other parts never imported here.
    """

    NAME: str  # as in hosts.NAMES; recorded as the client of its sessions
    OPTION: str  # its name on the command line: --host, --client
    LABEL: str  # its name for people: "Codex CLI"
    # Its tool names → the neutral kinds (hosts.KINDS) the extractors dispatch on, and the
    # tools it offers that ctxmode records nothing of, with the reason (every tool of a
    # supported version is in one of the two: tests/test_tool_tables.py).
    TOOL_KINDS: Mapping[str, str]
    NOT_RECORDED: Mapping[str, str]
    # The registration: (event as the client names it, timeout in the client's unit,
    # matcher or None), and where its settings live: scope → ("user"|"project", path).
    HOOKS: tuple[tuple[str, int, str | None], ...]
    SETTINGS_FORMAT: str
    USER_DIR_ENV: str
    USER_DIR_DEFAULT: str
    PROJECT_DIR_NAME: str
    SETTINGS_FILES: Mapping[str, tuple[str, str]]

    def parse(self, data: bytes, event: str | None = None) -> HookInput:
        """stdin → the neutral input (ctxmode's event names, Claude Code's field names and
        tool shapes), its ``tool_kind`` set; ``payload.PayloadError`` if it is none."""
        ...

    def salvage(self, head: bytes, event: str | None = None) -> HookInput:
        """The same from the head of an oversized payload (``payload.salvage``)."""
        ...

    def tool_kind(self, tool_name: str) -> str:
        """The neutral kind of one of its tools ("" when ctxmode records nothing of it)."""
        ...

    def output(self, event: str, text: str) -> bytes:
        """What the hook prints to hand ``text`` to the model (b"" where it cannot)."""
        ...


class HostOptions(Protocol):
    """Names a host package may have (each optional: ``hookrun`` reads them with getattr)."""

    # Its own events' shims (ctxmode/hooks/<shim>.py), where one is not ctxmode's own.
    SHIMS: Mapping[str, str]
    # Bytes of stdin read for an event before its input counts as oversized.
    INPUT_LIMITS: Mapping[str, int]
    # False: the project is climbed to from the payload's cwd, CLAUDE_PROJECT_DIR ignored.
    PROJECT_FROM_ENV: bool

    def late(self, inp: HookInput, root: str) -> tuple[list[HookInput], Callable[[], None] | None]:
        """Outcomes of earlier calls the client reports late (Codex: its rollout file), and
        a function that saves how far it read, called once they are stored."""
        ...

    def output_for(self, inp: HookInput, text: str) -> bytes:
        """Like ``output``, for an event whose output depends on its input."""
        ...

    def session_files(self, root: str, session_ids: list[str]) -> list[str]:
        """The files it keeps per session under the data root (Codex: how far it read each
        rollout), which ``ctxmode purge`` removes with the sessions."""
        ...


@runtime_checkable
class Installer(Protocol):
    """``hosts/<name>/install.py``: where its settings are and how ctxmode's entries go in
    and out again (byte for byte; files read and written through ``ctxmode.config_files``,
    the JSON edits of ``ctxmode.settings``)."""

    SCOPES: tuple[str, ...]  # of "user", "project", "local"; --user etc. name one
    HELP: str  # what `ctxmode install --help` says of it, after its --host name

    def install(
        self,
        scope: str = "user",
        project_dir: str | None = None,
        dry_run: bool = False,
        python: str | None = None,
        package_dir: str | None = None,
    ) -> Any:
        """Register ctxmode's hooks; return what was done (or would be: ``dry_run``)."""
        ...

    def uninstall(
        self, scope: str = "user", project_dir: str | None = None, dry_run: bool = False
    ) -> Any:
        """Remove them again; the rest of the files as it was."""
        ...

    def hook_specs(
        self, python: str | None = None, package_dir: str | None = None
    ) -> list[HookSpec]:
        """The handlers install writes: this interpreter on the package's shims."""
        ...

    def cli_install(
        self,
        report: Report,
        scope: str,
        project_dir: str | None,
        *,
        dry_run: bool = False,
        verify: bool = False,
        statusline: bool = False,
    ) -> None:
        """``ctxmode install --host OPTION``: do it and say so in ``report``; with
        ``verify`` the proof run follows. ``config_files.InstallError`` (``UsageError``
        for an option it has not) when it cannot."""
        ...

    def cli_uninstall(
        self, report: Report, scope: str, project_dir: str | None, *, dry_run: bool = False
    ) -> None:
        """``ctxmode uninstall --host OPTION``."""
        ...

    def dry_run_main(self, argv: Sequence[str]) -> int:
        """``install.sh --host OPTION --dry-run``, run from a checkout without click:
        ``argv`` is the interpreter and package folder, then the scope arguments."""
        ...


@runtime_checkable
class Proof(Protocol):
    """``hosts/<name>/proof.py``: ``install --verify``, the registered commands fed a sample
    session through the client's shell and environment (``ctxmode.proof`` runs it)."""

    def verify(self, path: str) -> VerifyResult: ...


@runtime_checkable
class Doctor(Protocol):
    """``hosts/<name>/doctor.py``: ``ctxmode doctor``'s checks of its registration (nothing
    at all when the client is not set up)."""

    GROUP: str  # the group of its checks; `ctxmode doctor` heads it "<LABEL> hooks"

    def checks(self, ctx: Context) -> list[Check]: ...


@runtime_checkable
class Bench(Protocol):
    """``hosts/<name>/bench.py``: its hook calls in ``ctxmode bench``. A non-default host's
    case events are ``"<name>:<event>"``."""

    CASES: tuple[Case, ...]  # in the order of a session
    PAYLOADS: Mapping[str, Any]  # its payload templates (@PROJECT@, @SESSION@, @N@)

    def commands(self, settings_path: str | None, python: str | None) -> HostCommands:
        """The commands to measure (the default host: as installed, or ``settings_path``'s;
        the others: as install would write them, run by ``python``)."""
        ...

    def prepare(self, project: str, scratch: str, session: str, wanted: Set[str]) -> dict[str, str]:
        """Sandbox files its cases need, and the payloads of ``wanted`` made now: key → file."""
        ...

    def check(self, case: Case, sample: Sample) -> list[str]:
        """What is wrong with a run of one of its cases (a hook that does nothing is fast)."""
        ...


@runtime_checkable
class History(Protocol):
    """``hosts/<name>/history.py`` (optional): the client's own history of its sessions,
    read for ``ctxmode import`` as the hooks would have seen it.

    A client whose history is no file per session (OpenCode's one SQLite database) names
    each session as a virtual file and adds ``stat(path) -> (size, mtime_ns)`` and
    ``open_bytes(path) -> BinaryIO`` (its bytes); the importer uses them when present
    (``importer.stat`` / ``importer.open_file``)."""

    CLIENT: str  # the host's NAME: the client of the sessions imported
    BOUNDARY_MARK: bytes  # bytes that mark one compaction record in a file

    def folder(self, env: Mapping[str, str]) -> str:
        """Where the client keeps it."""
        ...

    def files(self, where: str) -> list[str]:
        """Every history file under ``where``."""
        ...

    def project_files(self, where: str, project_dir: str) -> list[str]:
        """The files that may be ``project_dir``'s, found cheaply (more is fine)."""
        ...

    def claims(self, path: str) -> bool:
        """Whether a file named on the command line is one of its history files."""
        ...

    def head_cwd(self, path: str) -> tuple[str, str]:
        """``(cwd, session id)`` its first records name."""
        ...

    def subagent_of(self, path: str) -> tuple[str | None, str | None]:
        """``(agent id, agent type)`` of a subagent's file, ``(None, None)`` otherwise."""
        ...

    def read(
        self,
        data: bytes,
        start: int = 0,
        *,
        agent_id: str | None = None,
        agent_type: str | None = None,
        path: str = "",
        boundaries_before: int | None = None,
        at_end: bool = False,
    ) -> Chunk:
        """A window of a file's bytes → its calls and compactions (``ctxmode.history``);
        ``at_end``: the window runs to the end of the file, where a turn still open ends."""
        ...

    def count_boundaries(self, data: bytes) -> int:
        """Compactions in ``data`` (to number those after an offset)."""
        ...

    def compact_summary(self, content: str) -> str:
        """The client's summary of a compaction as the model read it."""
        ...


# Each part of a host: its protocol, and whether every host must have it.
PARTS: dict[str, tuple[type, bool]] = {
    "install": (Installer, True),
    "proof": (Proof, True),
    "doctor": (Doctor, True),
    "bench": (Bench, True),
    "history": (History, False),
}
