"""The secrets a project's sessions masked before, remembered as keyed digests.

A session repeats its secrets: a password given in a prompt (masked there: "the
password is X") comes back bare in a later command (``./bin/login admin X``), a commit
message ("reset db pass to X"), a search (``grep -r X``), where nothing says it is one.
So each value masked in a payload is remembered for the project's store, and every
later payload of any session of that store is masked for it too (``redact.mask_known``,
run by ``extract.masked`` before anything is cut or stored).

Never the value: a keyed digest (SHA-256 of a random key and the value, 10 bytes) and
its length, which tells the masker which words of a text are worth hashing. The key is
random, one per data root (``<root>/masked/key``, 32 bytes); each store has its file of
records (``<root>/masked/<store name>.bin``), both 0600 in a 0700 folder. A record is 16
bytes: 4 of a digest of the session that masked the value (``ctxmode purge --session``
removes that session's records), 2 of the value's length, 10 of its digest. A file
holds at most :data:`MAX_RECORDS`; past that the oldest go.

On the hook path, loaded only where the store has a file of records or a payload
masked something new: a session without secrets never imports this module.
"""

from __future__ import annotations

import os

from ctxmode import paths
from ctxmode.hashing import _sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = "masked"
KEY_NAME = "key"
KEY_BYTES = 32
RECORD = 16  # session tag 4, length 2, digest 10
TAG, LENGTH, DIGEST = 4, 2, 10
MAX_RECORDS = 8192
# A value this long is a blob (a key file, a document): its rules mask it where it is.
MAX_LENGTH = 1024


def folder(root: str) -> str:
    return os.path.join(root, FOLDER)


def records_path(root: str, store_path: str) -> str:
    """``<root>/masked/<store name>.bin``: the records of one store."""
    name = os.path.splitext(os.path.basename(store_path))[0]
    return os.path.join(root, FOLDER, name + ".bin")


class Memory:
    """What a store's sessions masked before (``knows``, ``lengths``), and what this
    process masked that is new (``new``, records to append).

    ``lengths`` is empty when nothing is remembered: then the masker hashes nothing."""

    __slots__ = ("_asked", "_base", "digests", "lengths", "new", "session_id", "session_tag")

    def __init__(self, key: bytes, data: bytes = b"", session_id: str = "") -> None:
        self._base: Any = _sha256(key)
        self._asked: dict[str, bool] = {}
        usable = len(data) - len(data) % RECORD
        self.digests = {data[i + TAG + LENGTH : i + RECORD] for i in range(0, usable, RECORD)}
        self.lengths = frozenset(
            int.from_bytes(data[i + TAG : i + TAG + LENGTH], "big")
            for i in range(0, usable, RECORD)
        )
        self.new: list[bytes] = []
        self.session_id = session_id
        self.session_tag = self.tag(session_id)

    def use_session(self, session_id: str) -> None:
        """Note what is masked from now on as ``session_id``'s (an import's many)."""
        if session_id != self.session_id:
            self.session_id = session_id
            self.session_tag = self.tag(session_id)

    def _digest(self, data: bytes) -> bytes:
        h = self._base.copy()
        h.update(data)
        digest: bytes = h.digest()
        return digest

    def digest(self, value: str) -> bytes:
        return self._digest(b"v\0" + value.encode("utf-8", "surrogatepass"))[:DIGEST]

    def tag(self, session_id: str) -> bytes:
        return self._digest(b"s\0" + session_id.encode("utf-8", "surrogatepass"))[:TAG]

    def knows(self, value: str) -> bool:
        """Whether ``value`` was masked before (its length is in ``lengths``). A text's
        words repeat (a path in the input and the output): each is hashed once."""
        known = self._asked.get(value)
        if known is None:
            known = self._asked[value] = self.digest(value) in self.digests
        return known

    def remember(self, values: Any) -> None:
        """Note each of ``values`` (value → kind, as ``redact.collecting`` returns
        them) that ``redact.memorable`` keeps and that is not known yet."""
        from ctxmode.redact import memorable, memory_form

        for found, kind in values.items():
            value = memory_form(found)
            if len(value) > MAX_LENGTH or not memorable(value, kind):
                continue
            self._asked.pop(value, None)
            digest = self.digest(value)
            if digest in self.digests:
                continue
            self.digests.add(digest)
            self.lengths = self.lengths | {len(value)}
            self.new.append(self.session_tag + len(value).to_bytes(LENGTH, "big") + digest)


def _read(path: str, limit: int) -> bytes | None:
    """A private file's bytes (at most ``limit``), or None: absent, a link, not regular."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if st.st_mode & 0o170000 != 0o100000:
            return None
        chunks = []
        size = 0
        while size < limit:
            chunk = os.read(fd, limit - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _key(root: str, create: bool) -> bytes | None:
    """The root's key; made (random, 0600) when ``create`` and there is none."""
    path = os.path.join(folder(root), KEY_NAME)
    key = _read(path, KEY_BYTES + 1)
    if key is not None and len(key) == KEY_BYTES:
        return key
    if not create:
        return None
    paths.ensure_dir(folder(root))
    # Written aside, then linked into place: a reader never sees half a key, and of two
    # processes making one at once, the first link wins and the second reads it.
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.write(fd, os.urandom(KEY_BYTES))
    finally:
        os.close(fd)
    try:
        os.link(temp, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(temp)
    key = _read(path, KEY_BYTES + 1)
    return key if key is not None and len(key) == KEY_BYTES else None


def load(root: str, store_path: str, session_id: str) -> Memory | None:
    """The store's memory, or None when it remembers nothing (no file of records)."""
    data = _read(records_path(root, store_path), MAX_RECORDS * RECORD * 2)
    if not data:
        return None
    key = _key(root, create=False)
    if key is None:
        return None  # records without their key are of no use: a new key starts afresh
    return Memory(key, data, session_id)


def fresh(root: str, session_id: str) -> Memory | None:
    """An empty memory to note a payload's secrets into (the key made if missing)."""
    key = _key(root, create=True)
    return None if key is None else Memory(key, b"", session_id)


def save(root: str, store_path: str, memory: Memory) -> None:
    """Append ``memory.new`` to the store's records (one ``O_APPEND`` write)."""
    if not memory.new:
        return
    path = records_path(root, store_path)
    paths.ensure_dir(folder(root))
    fd = paths.open_private(path, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"".join(memory.new))
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    memory.new = []
    if size > MAX_RECORDS * RECORD * 3 // 2:
        _rewrite(path, lambda data: data[-MAX_RECORDS * RECORD :])


def _rewrite(path: str, change: Any) -> None:
    """Replace the records file by ``change(its bytes)`` (atomically, 0600)."""
    data = _read(path, 1 << 24)
    if data is None:
        return
    data = data[: len(data) - len(data) % RECORD]
    temp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        os.write(fd, change(data))
    finally:
        os.close(fd)
    os.replace(temp, path)


def forget_sessions(root: str, store_path: str, session_ids: list[str]) -> int:
    """Remove the records of ``session_ids`` from the store's file; how many went."""
    path = records_path(root, store_path)
    key = _key(root, create=False)
    if key is None or not os.path.exists(path):
        return 0
    probe = Memory(key)
    tags = {probe.tag(sid) for sid in session_ids}
    removed = 0

    def keep(data: bytes) -> bytes:
        nonlocal removed
        kept = [data[i : i + RECORD] for i in range(0, len(data), RECORD)]
        out = [r for r in kept if r[:TAG] not in tags]
        removed = len(kept) - len(out)
        return b"".join(out)

    _rewrite(path, keep)
    return removed


def forget_store(root: str, store_path: str) -> list[str]:
    """Delete the store's file of records; the files removed."""
    path = records_path(root, store_path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return []
    return [path]
