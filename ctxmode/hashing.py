"""SHA-256 without :mod:`hashlib`, whose OpenSSL binding costs ~3 ms per process."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def _load() -> Any:
    try:  # Python 3.12+
        return __import__("_sha2").sha256
    except ImportError:  # pragma: no cover - depends on the interpreter
        pass
    try:  # Python 3.10-3.11
        return __import__("_sha256").sha256
    except ImportError:  # pragma: no cover - builds without the builtin module
        return __import__("hashlib").sha256


_sha256 = _load()


def sha256_hex(text: str) -> str:
    digest: str = _sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return digest
