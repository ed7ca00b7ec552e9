"""SHA-256 without :mod:`hashlib`, whose OpenSSL binding costs ~3 ms per process."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _load() -> Any:
    import sys

    # The builtin module is _sha256 up to 3.11 and _sha2 from 3.12: try the right one
    # first (a failed import costs every hook a directory scan).
    names = ("_sha256", "_sha2") if sys.version_info < (3, 12) else ("_sha2", "_sha256")
    for name in names:
        try:
            return __import__(name).sha256
        except (ImportError, AttributeError):  # pragma: no cover - depends on the build
            continue
    return __import__("hashlib").sha256  # pragma: no cover - builds without either


_sha256 = _load()


def sha256_hex(text: str) -> str:
    digest: str = _sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return digest
