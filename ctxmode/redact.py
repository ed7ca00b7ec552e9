"""Secret masking and ``<private>`` stripping (pure), applied before anything is stored.

``mask`` runs on every event of every hook, so the common case must cost next to
nothing: a lower-cased copy of the text is searched (in C, ``str.__contains__``) for a
few marker substrings, and only a rule whose marker is present runs. ``re`` is imported,
and each rule compiled, the first time a rule is needed, then cached for the process.
A hook whose events carry no marker never imports ``re`` at all.

Masks read ``[REDACTED:<kind>]``. The rules also see text that is already JSON-encoded
(an event's ``data``), where quotes arrive as ``\\"`` and newlines as ``\\n``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from re import Match, Pattern

    Rule = tuple[str, str, tuple[str, ...], str, str | Callable[[Match[str]], str]]

PREFIX = "[REDACTED:"

# A token starts at a boundary: not after a letter or digit, except after a JSON escape
# such as the ``\n`` in ``"line\nghp_…"`` (its ``n`` is no part of the token).
_LB = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt]))"

# Names whose value is a credential: *_TOKEN, *_SECRET, *_KEY, *PASSWORD, PASSWD, PWD,
# CREDENTIALS, api_key / apiKey … (matched case-insensitively). The pattern starts at the
# keyword that ends the name, not at the name: whatever precedes it is kept as it is, and
# the regex engine does not try every word of the text as a possible name.
_CRED_WORD = (
    r"(?:token|secret|passw(?:or)?d|pwd|credentials?"
    r"|(?:[_.-]|api|access|private|secret|client)key)"
)
# A value: double-quoted (also as JSON-escaped \"…\"), single-quoted, or a bare run.
# In JSON-encoded text a bare `"` is the end of a JSON string when one of `,:}]` follows:
# a value never opens on one nor runs across one, or masking would break the JSON.
_VALUE = (
    r"(?:(?P<dq>\\*\")(?P<v1>(?![,:}\]])(?:\\.|[^\"\\\n])*?)(?P=dq)"
    r"|(?P<sq>\\*')(?P<v2>(?:[^'\n\"\\]|\\.|\"(?![,:}\]]))*?)(?P=sq)"
    r"|(?P<v3>[^\s'\"\\,;&|)}\]<>`]+))"
)
# An optional quote that opens a value; never the quote that closes a JSON string.
_OPEN_QUOTE = r"(?:\\*[\"'](?![,:}\]]))?"
_TRIVIAL = frozenset({"", "null", "none", "true", "false", "undefined", "nil", "''", '""'})


def _keep_value(m: Match[str]) -> str:
    """Replace only the value of a ``name = value`` match, keeping name and quotes."""
    for group in ("v1", "v2", "v3"):
        value = m.group(group)
        if value is not None:
            if value.lower() in _TRIVIAL or value.startswith(PREFIX):
                return m.group(0)
            start, end = m.span(group)
            base = m.start(0)
            whole = m.group(0)
            return whole[: start - base] + PREFIX + "credential]" + whole[end - base :]
    return m.group(0)


def _header(m: Match[str]) -> str:
    if m.group("cred").startswith(PREFIX):
        return m.group(0)
    scheme = m.group("scheme")
    return m.group("head") + (scheme + " " if scheme else "") + PREFIX + "authorization]"


def _userinfo(m: Match[str]) -> str:
    scheme, info = m.group(1), m.group(2)
    if ":" in info or scheme.lower().rstrip(":/") in ("http", "https", "ftp", "ftps"):
        return scheme + PREFIX + "url-credentials]@"
    return m.group(0)  # ssh://git@host: a user name, not a secret


_CRED_PATTERN = (
    # NAME=value, NAME: value, "name": "value", --name=value, and --name value.
    r"(?i)(?:" + _CRED_WORD + r"\\*[\"']?\s*(?:=(?!=)|:(?![:/]))"
    r"|(?<![A-Za-z0-9_-])--?[A-Za-z0-9_-]*?" + _CRED_WORD + r"\s+(?!-))\s*" + _VALUE
)
# (kind, gate, markers, pattern, replacement): a rule runs when ``gate`` and one of its
# ``markers`` (if any) occur in the lower-cased text. The gate lets one scan rule out a
# family of markers; together they keep the no-secret case to ~20 substring searches.
# Order matters: whole blocks and provider tokens first, so a specific kind wins over
# the generic "credential" of NAME=value.
_RULES: tuple[Rule, ...] = (
    (
        "private-key",
        "private key",
        (),
        # The body reads backslash escapes as pairs, so that a bare `"` is the quote that
        # closes the JSON string it sits in. Unterminated (a trimmed text), the block ends
        # there or at the end: masking JSON-encoded data keeps it valid JSON.
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(?:\\[\s\S]|[^\"\\])*?"
        r"(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?=\")|\\?\Z)",
        PREFIX + "private-key]",
    ),
    ("anthropic-key", "sk-ant-", (), _LB + r"sk-ant-[A-Za-z0-9_-]{16,}", PREFIX + "anthropic-key]"),
    (
        "openai-key",
        "sk-",
        (),
        # Keys are random: demanding a digit spares slugs like "sk-learn-compat-layer".
        _LB + r"sk-(?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}",
        PREFIX + "openai-key]",
    ),
    (
        "github-token",
        "gh",
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
        _LB + r"gh[pousr]_[A-Za-z0-9]{20,}",
        PREFIX + "github-token]",
    ),
    (
        "github-token",
        "github_pat_",
        (),
        _LB + r"github_pat_[A-Za-z0-9_]{20,}",
        PREFIX + "github-token]",
    ),
    ("gitlab-token", "glpat-", (), _LB + r"glpat-[A-Za-z0-9_-]{20,}", PREFIX + "gitlab-token]"),
    ("slack-token", "xox", (), _LB + r"xox[abprs]-[A-Za-z0-9-]{10,}", PREFIX + "slack-token]"),
    (
        "aws-access-key-id",
        "ia",
        ("akia", "asia"),
        _LB + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        PREFIX + "aws-access-key-id]",
    ),
    ("google-api-key", "aiza", (), _LB + r"AIza[0-9A-Za-z_-]{35}", PREFIX + "google-api-key]"),
    (
        "stripe-key",
        "k_",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        _LB + r"[sr]k_(?:live|test)_[0-9A-Za-z]{10,}",
        PREFIX + "stripe-key]",
    ),
    (
        "jwt",
        "eyj",
        (),
        _LB + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        PREFIX + "jwt]",
    ),
    (
        "authorization",
        "authorization",
        (),
        r"(?i)(?P<head>(?<![A-Za-z0-9-])(?:proxy-)?authorization\\*[\"']?\s*[:=]\s*"
        + _OPEN_QUOTE
        + r"\s*)"
        r"(?:(?P<scheme>bearer|basic|token|bot|digest|negotiate|ntlm|apikey|sso-key)\s+)?"
        r"(?P<cred>[^\s'\"\\,;})\]]+)",
        _header,
    ),
    (
        "bearer",
        "bearer",
        (),
        r"(?i)(?<![A-Za-z0-9])(bearer\s+)[A-Za-z0-9._~+/=-]{12,}",
        r"\1" + PREFIX + "authorization]",
    ),
    (
        "url-credentials",
        "://",
        ("@",),
        r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*://)([^\s/?#@'\"\\<>]+)@",
        _userinfo,
    ),
    (
        "curl-user",
        "curl",
        ("-u", "--user"),
        r"(\bcurl\b[^\n]*?\s(?:-u|--user)[\s=]+" + _OPEN_QUOTE + r"[^\s:'\"\\\[]+:)([^\s'\"\\]+)",
        r"\1" + PREFIX + "password]",
    ),
    (
        "aws-secret-key",
        "aws_secret",
        (),
        r"(?i)(aws_secret_access_key\\*[\"']?\s*[:=]\s*" + _OPEN_QUOTE + r")([A-Za-z0-9/+=]{20,})",
        r"\1" + PREFIX + "aws-secret-key]",
    ),
    (
        "credential",
        "",
        ("token", "secret", "passw", "pwd", "credential"),
        _CRED_PATTERN,
        _keep_value,
    ),
    # The same rule for *_KEY names, behind one gate: "key" alone is too common a word
    # (every error event has a "key" field) to start the regex engine for.
    (
        "credential",
        "key",
        ("_key", "-key", "apikey", "accesskey", "privatekey", "clientkey"),
        _CRED_PATTERN,
        _keep_value,
    ),
)

_compiled: dict[str, Pattern[str]] = {}
_extra_compiled: dict[str, Pattern[str]] = {}


def _pattern(source: str) -> Pattern[str]:
    pattern = _compiled.get(source)
    if pattern is None:
        import re

        pattern = _compiled[source] = re.compile(source)
    return pattern


def _apply_extra(text: str, extra: Iterable[str | Pattern[str]]) -> str:
    """User patterns: the ``secret`` group when the pattern has one, else the whole match."""
    import re

    for item in extra:
        if isinstance(item, str):
            compiled = _extra_compiled.get(item)
            if compiled is None:
                compiled = _extra_compiled[item] = re.compile(item)
        else:
            compiled = item
        if "secret" in compiled.groupindex:

            def repl(m: Match[str]) -> str:
                start, end = m.span("secret")
                if start < 0:
                    return m.group(0)
                base = m.start(0)
                return m.group(0)[: start - base] + PREFIX + "custom]" + m.group(0)[end - base :]

            text = compiled.sub(repl, text)
        else:
            text = compiled.sub(PREFIX + "custom]", text)
    return text


def mask(text: str, extra: Iterable[str | Pattern[str]] = ()) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    ``extra``: more patterns (strings or compiled) to mask as ``[REDACTED:custom]``.
    """
    if extra:
        text = _apply_extra(text, extra)
    low = text.lower()
    for _kind, gate, markers, source, repl in _RULES:
        if gate not in low:
            continue
        if markers:  # a plain loop: a generator per rule would double the cost of a call
            for marker in markers:
                if marker in low:
                    break
            else:
                continue
        text, count = _pattern(source).subn(repl, text)
        if count:
            low = text.lower()
    return text


# Query and fragment parameters whose values are secrets in a URL.
_URL_SECRET_NAMES = frozenset(
    {
        "token", "key", "secret", "sig", "signature", "password", "passwd", "pwd", "auth",
        "access_token", "refresh_token", "id_token", "api_key", "apikey", "api-key", "code",
        "client_secret", "session", "sessionid", "credential", "credentials",
    }
)  # fmt: skip
_URL_SECRET_ENDINGS = ("token", "_key", "-key", "secret", "signature", "password", "credential")


def _secret_param(name: str) -> bool:
    low = name.lower()
    return low in _URL_SECRET_NAMES or low.endswith(_URL_SECRET_ENDINGS)


def _mask_params(params: str) -> str:
    out: list[str] = []
    for pair in params.split("&"):
        name, eq, value = pair.partition("=")
        if eq and value and _secret_param(name):
            out.append(name + "=" + PREFIX + "url-param]")
        else:
            out.append(pair)
    return "&".join(out)


def mask_url(url: str) -> str:
    """``url`` without its userinfo and with secret-looking query values masked."""
    scheme_end = url.find("://")
    if scheme_end > 0:
        start = scheme_end + 3
        end = len(url)
        for stop in "/?#":
            found = url.find(stop, start)
            if 0 <= found < end:
                end = found
        at = url.rfind("@", start, end)
        if at >= 0:
            url = url[:start] + url[at + 1 :]
    base, hash_, fragment = url.partition("#")
    path, q, query = base.partition("?")
    if q:
        path += "?" + _mask_params(query)
    if hash_:
        path += "#" + (_mask_params(fragment) if "=" in fragment else fragment)
    return mask(path)


_OPEN, _CLOSE = "<private>", "</private>"


def strip_private(text: str) -> str:
    """Remove ``<private>…</private>`` spans entirely (case-insensitive, nestable).

    An unterminated ``<private>`` hides everything after it: better to lose the end of a
    prompt than to store what the user marked as private.
    """
    low = text.lower()
    if _OPEN not in low:
        return text
    out: list[str] = []
    pos = 0
    while True:
        start = low.find(_OPEN, pos)
        if start < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:start])
        depth = 1
        cursor = start + len(_OPEN)
        while depth:
            nxt_open = low.find(_OPEN, cursor)
            nxt_close = low.find(_CLOSE, cursor)
            if nxt_close < 0:
                cursor = len(text)
                break
            if 0 <= nxt_open < nxt_close:
                depth += 1
                cursor = nxt_open + len(_OPEN)
            else:
                depth -= 1
                cursor = nxt_close + len(_CLOSE)
        pos = cursor
        if pos >= len(text):
            break
    return "".join(out)
