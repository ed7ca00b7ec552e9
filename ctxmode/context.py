"""What a hook handler needs besides its input: environment, paths, clock, deadline.

Its own module so that the harness (``hookrun``) and the handlers both import it and
neither imports the other: ``hookrun`` calls ``handlers.handle``, never the reverse.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from ctxmode.paths import Identity


class Context:
    """What a handler needs besides the input: environment, paths, clock, deadline,
    and where the session runs (the repository's identity, the client's name)."""

    __slots__ = (
        "_branch",
        "_moved",
        "background",
        "call_at",
        "call_exact",
        "client",
        "deadline",
        "env",
        "identity",
        "log_dir",
        "memory",
        "root",
        "started",
        "store_path",
    )

    def __init__(
        self,
        env: Mapping[str, str],
        root: str,
        store_path: str,
        deadline: float,
        identity: Identity | None = None,
        client: str | None = None,
    ):
        self.env = env
        self.root = root
        self.store_path = store_path
        self.log_dir = os.path.join(root, "logs")
        self.started = time.monotonic()
        self.deadline = deadline
        self.identity = identity
        self.client = client
        self._branch: str | None = None
        self._moved: dict[str, Identity | None] = {}
        # Set by the harness: when the client started this call (ns, its order in the
        # session) and whether it runs in the background (ctxmode.inflight).
        self.call_at: int | None = None
        # Whether call_at is the client's start of the call (hookrun.call_stamp); if not,
        # the store places the call by its own sequence (see stored_call_at).
        self.call_exact = False
        self.background = False
        # The store's memory of masked secrets, once a payload was masked
        # (handlers._memory: a ctxmode.secret_memory.Memory, or what the payload noted).
        self.memory: object | None = None

    @property
    def stored_call_at(self) -> int | None:
        """The call's place for the store: the exact stamp, or None (the store's next)."""
        return self.call_at if self.call_exact else None

    def remaining(self) -> float:
        return self.deadline - (time.monotonic() - self.started)

    @property
    def worktree(self) -> str | None:
        """The work tree the session runs in (None outside git): a handover prefers a
        snapshot of the same one, since a repository's worktrees share its store."""
        return self.identity.worktree if self.identity is not None else None

    def project(self, fallback: str) -> str:
        """The repository key the session's rows record (``fallback`` without identity)."""
        return self.identity.project if self.identity is not None else fallback

    def where(self, cwd: str) -> tuple[str | None, str | None, str | None, str | None]:
        """(worktree, branch, cwd, client) for the session's ``session_meta`` row.

        The work tree is the one ``cwd`` is in when that is another worktree of the same
        repository (the session moved: EnterWorktree, a ``cd``), else the session's own.
        The branch is read from the work tree's ``HEAD`` on first use only: hooks that
        write nothing never pay for it.
        """
        ident = self.identity
        if ident is None:
            return (None, None, cwd or None, self.client)
        moved = self.moved_to(cwd)
        if moved is not None:
            from ctxmode.paths import head_branch

            return (moved.worktree, head_branch(moved.gitdir), cwd or None, self.client)
        if self._branch is None and ident.gitdir:
            from ctxmode.paths import head_branch

            self._branch = head_branch(ident.gitdir) or ""
        return (ident.worktree, self._branch or None, cwd or None, self.client)

    def moved_to(self, folder: str) -> Identity | None:
        """The identity of the work tree ``folder`` is in when that is another worktree of
        the session's repository, else None. A few ``stat`` calls, only for a folder other
        than the session's work tree, once per folder."""
        ident = self.identity
        if not folder or ident is None or not ident.common_dir or folder == ident.worktree:
            return None
        if folder in self._moved:
            return self._moved[folder]
        from ctxmode.paths import identify_dir

        try:
            other: Identity | None = identify_dir(folder)
        except (OSError, ValueError):  # a name no file can have (a NUL, a lone surrogate)
            other = None
        if (
            other is None
            or other.common_dir != ident.common_dir
            or other.worktree
            in (
                None,
                ident.worktree,
            )
        ):
            other = None
        self._moved[folder] = other
        return other
