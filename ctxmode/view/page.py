"""The model → one self-contained HTML file (pure: text in, text out).

The page is ``ctxmode/data/view.html``: inline CSS and JS, no network request of any kind
(its Content-Security-Policy allows no source at all: ``default-src 'none'``, and the
one style and one script block by their SHA-256, so even a string that escaped its
escaping could run nothing). The model travels as JSON in a
``<script type="application/json">`` block; the page builds every node with
``textContent``, never ``innerHTML``.

Why the escapes in :func:`embed_json`: inside a ``<script>`` element the HTML parser
ends the element at the first ``</script`` whatever the JSON means, and ``<!--`` changes
how it looks for that end; escaping every ``<``, ``>`` and ``&`` as ``\\u003c``, ``\\u003e``,
``\\u0026`` (still the same JSON) makes both impossible. ``ensure_ascii`` writes every
other character, U+2028 and U+2029 included, as an escape too.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from typing import Any

TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "view.html")
DATA_TOKEN = "@@DATA@@"
CSP_TOKEN = "@@CSP@@"
_BLOCK = re.compile(r"<(style|script)>(.*?)</\1>", re.DOTALL)


def embed_json(value: Any) -> str:
    """JSON that can sit inside a ``<script>`` element: no ``<``, ``>``, ``&``, and
    nothing but ASCII (so no U+2028/U+2029 and no lone surrogate either)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def policy(template: str) -> str:
    """The page's Content-Security-Policy: nothing from anywhere; its own blocks by hash."""
    hashes: dict[str, list[str]] = {"style": [], "script": []}
    for kind, body in _BLOCK.findall(template):
        hashes[kind].append(_sha256(body))
    return (
        "default-src 'none'; "
        f"style-src {' '.join(hashes['style'])}; "
        f"script-src {' '.join(hashes['script'])}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )


def load_template() -> str:
    with open(TEMPLATE, encoding="utf-8") as handle:
        return handle.read()


def render_html(model: dict[str, Any], template: str | None = None) -> str:
    """The whole page for ``model`` (``ctxmode.view.model.build_model``)."""
    page = load_template() if template is None else template
    # The policy hashes the blocks as they are; the data block is not a script the
    # browser runs (type="application/json"), so filling it later changes no hash.
    page = page.replace(CSP_TOKEN, policy(page), 1)
    head, sep, tail = page.partition(DATA_TOKEN)
    if not sep:
        raise ValueError(f"{TEMPLATE}: no {DATA_TOKEN} in the template")
    return head + embed_json(model) + tail
