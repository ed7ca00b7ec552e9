"""Secret masking, ``<private>`` stripping and safe cutting (pure).

Where it runs: :func:`ctxmode.extract.masked` is the one choke point. It removes
``<private>`` spans from every string of a hook payload and masks each string *whole*,
before any extractor reads it, so every later cut (an error line, a sentence, a
snippet) works on text whose secrets are already gone: a cut can no longer leave the
head of a secret that its pattern would not match any more. The dispatcher masks each
event again, and :func:`cut_at` keeps cuts out of ``[REDACTED:…]`` markers.

Secrets are recognised by structure, not by values: known provider prefixes and their
shapes; credential-like names before an assignment, a flag, a header, an XML element
or a ``.netrc`` entry; URL userinfo and credential-like query parameters; command lines
that take a password (``mysql -pX``, ``docker login -p X``, ``curl -u user:X``); key
words in prose ("my password is X", "use token X"), where a weak context also asks for
a value that looks random; and long random-looking values assigned to any name. Since
issue 29 also: commands that set an account's password (useradd, chpasswd, ``net user``,
SQL's ``IDENTIFIED BY``/``PASSWORD '…'``, what echo pipes into passwd, PowerShell's
``ConvertTo-SecureString``); base64, hex and %-encoded forms of what is masked (and
``user:password`` pairs); tokens split by spaces or by invisible characters (dropped
inside a word before masking); key material with no name (a long random run, a PEM
body without its lines, a crypt hash, more providers' prefixes); multi-line values of
configuration formats (YAML block scalars, quoted values over lines, continued lines,
``.pgpass``); the prose rule in two dozen languages; and sentences that set a password
("reset db pass to X", "X is the new password") or search for one. Since 0.5.0's holes
were closed also: an unquoted value with spaces in an env or shell statement
(``PASSWORD=abc def``), a bare ``user/password@connect-identifier``, fullwidth and other
compatibility letters (read in their NFKC form, masked where they stand), and a password
given by its position in a call whose API fixes it (``pymysql.connect(h, u, X)``). The
false positives of the rules are measured by ``benchmarks/redact_false_positives.py``.

``mask`` runs on every string of every hook, so the common case must cost next to
nothing: a lower-cased copy of the text is searched (in C, ``str.__contains__``) for
marker substrings, and only a rule whose marker is present runs. ``re`` is imported, and
each rule compiled, the first time a rule is needed, then cached for the process. A
hook whose strings carry no marker never imports ``re`` at all.

Masks read ``[REDACTED:<kind>]``. The rules also see text that is already JSON-encoded
(an event's ``data``), where quotes arrive as ``\\"`` and newlines as ``\\n``: no rule
lets a masked value run across a ``"`` or a backslash, so masked JSON stays valid.

Long on purpose: one table of rules, each with its pattern, markers, precheck and
replacement, reads best in one place (a rule and its precheck must agree: see
tests/test_privacy_structure.py), and every hook imports this module, where each extra
module costs an import.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from re import Match, Pattern
    from typing import Any

    Rule = tuple[str, str, tuple[str, ...], str, str | Callable[[Match[str]], str | None]]

PREFIX = "[REDACTED:"
# What stands where a <private> span was removed (strip_private).
PRIVATE_MARK = PREFIX + "private]"

# A token starts at a boundary: not after a letter or digit, except after a JSON escape
# such as the ``\n`` in ``"line\nghp_…"`` (its ``n`` is no part of the token) or a URL
# escape such as the ``%3D`` in ``token%3Dghp_…``.
_LB = r"(?:(?<![A-Za-z0-9_])|(?<=\\[nrt])|(?<=%[0-9A-Fa-f]{2}))"
_RB = r"(?![A-Za-z0-9_])"

# Names whose value is a credential: *_TOKEN, *_SECRET, *PASSWORD, *PASSWD, *_PASS,
# smtpPass, *PASSPHRASE, PWD, CREDENTIALS, *_AUTH, *_KEY with a qualifier (api_key, apiKey,
# AccountKey, SIGNING_KEY …), matched case-insensitively. The pattern starts at the
# keyword that ends the name, not at the name: whatever precedes it is kept as it is,
# and the regex engine does not try every word of the text as a possible name.
_CRED_WORD = (
    r"(?:token|secret|passw(?:or)?d|pass(?:phrase|code)|(?<![a-z0-9])pass|pwd|(?<![a-z0-9])pw"
    r"|credentials?|(?<![a-z0-9])creds|auth|(?-i:(?<=[a-z0-9])(?:Pass|Creds))"
    r"|(?:[_.-]|api|access|private|secret|client|account|master|signing|encryption|session"
    r"|license|app|auth|service|subscription|webhook|consumer|shared)key"
    r"|[_.-]key[_.-]data)"
)
# A bare value runs to whitespace or a quote. It ends early at what ends a value in its
# usual surroundings: a ``;`` before another ``name=`` (a connection string), a ``,``
# before a space or another ``name=``, a closing bracket before a separator, a shell
# operator. A password may hold all of these characters elsewhere, so they do not end
# it there; nor does ``&`` (a query string is the URL rule's). It never opens on a
# bracket (``auth: {`` is a structure, not a value).
_BARE = (
    r"(?:[^\s'\"\\<>`&;,|(){}\[\]]"
    r"(?:[^\s'\"\\<>`&;,|)}\]]|&(?![\s&|]|$)|;(?![\w.\[\]-]+=)|,(?![\s\w.-]*=|\s|$)"
    r"|[)}\]](?![\s,;)}\].|]|$)|\|(?!\s))*)"
)
# A value: double-quoted (also as JSON-escaped \"…\"), single-quoted, or a bare run. A
# quoted value left open (a cut text) runs to the end of its line. In JSON-encoded text
# a bare `"` is the end of a JSON string when one of `,:}]` follows: a value never opens
# on one nor runs across one, or masking would break the JSON.
_VALUE = (
    r"(?:(?P<dq>\\*\")(?P<v1>(?![,:}\]])(?:\\.|[^\"\\\n])*?)(?:(?P=dq)|(?=\n)|\Z)"
    r"|(?P<sq>\\*')(?P<v2>(?:[^'\n\"\\]|\\.|\"(?![,:}\]]))*?)(?:(?P=sq)|(?=\n)|\Z)"
    r"|(?P<v3>" + _BARE + r"))"
)
# An optional quote that opens a value; never the quote that closes a JSON string.
_OPEN_QUOTE = r"(?:\\*[\"'](?![,:}\]]))?"
_TRIVIAL = frozenset(
    {"", "null", "none", "true", "false", "undefined", "nil", "''", '""', "yes", "no"}
)
# Punctuation that ends a sentence after a bare value rather than belonging to it.
_TRAIL = ".,;:"


# Words of code that start an expression: the value is computed, not written.
_EXPR_WORDS = frozenset(("await", "new", "typeof", "yield", "require", "function"))


def _code_word(m: Match[str], bare: str) -> bool:
    """A bare value that is code: a keyword starting an expression followed by more of it
    (``credential = await appleAuth.request({``), or the name it is assigned to again
    (``refreshToken: refreshToken,``: a JavaScript object built from variables)."""
    text, start = m.string, m.start(0)
    end = start + len(m.group(0))
    if bare in _EXPR_WORDS and text[end : end + 1] == " ":
        return True
    if not bare.isidentifier() or len(bare) < 4:
        return False
    name = text[max(0, start - 60) : m.start("v3")].rstrip(" \t:=>\"'")
    return name.endswith(bare) and not name[-len(bare) - 1 : -len(bare)].isalnum()


def _masked_value(kind: str) -> Callable[[Match[str]], str]:
    """A replacement that masks only the value group of a match, keeping the rest."""

    def repl(m: Match[str]) -> str:
        for group in ("v1", "v2", "v3", "v"):
            try:
                value = m.group(group)
            except IndexError:
                continue
            if value is None:
                continue
            if value.lower() in _TRIVIAL or value.startswith(PREFIX) or not value.strip("*_#~"):
                return m.group(0)  # (markdown alone: "in 1Password:**")
            bare = value.rstrip(_TRAIL)
            if public_key_value(bare) or key_file(bare):
                return m.group(0)  # a public key, a fingerprint, a key's file: no secret
            if group in ("v3", "v") and (code_value(bare) or _count(bare)):
                return m.group(0)  # code (a call, a reference) or a count: no secret
            if group == "v3" and (bare.rstrip(")]}|?").lower() in _TYPE_NAMES or described(bare)):
                return m.group(0)  # a type ("token: string;") or a word ("password: required")
            if group == "v3" and _code_word(m, bare):
                return m.group(0)  # "credential = await login(…)", "refreshToken: refreshToken,"
            start, end = m.span(group)
            if group in ("v3", "v"):
                while end > start + 1 and m.string[end - 1] in _TRAIL:
                    end -= 1
            base = m.start(0)
            whole = m.group(0)
            return whole[: start - base] + PREFIX + kind + "]" + whole[end - base :]
        return m.group(0)

    return repl


_keep_value = _masked_value("credential")

# What a credential-like name may start with before "key" (API_KEY, apiKey, AccountKey).
_KEY_QUALIFIERS = (
    "api", "access", "private", "secret", "client", "account", "master", "signing",
    "encryption", "session", "license", "app", "auth", "service", "subscription", "webhook",
    "consumer", "shared",
)  # fmt: skip


def _cred_name(name: str, word: str, flag: bool) -> bool:
    """Whether ``name``, ending with the credential ``word`` the pattern found, names a
    credential: *TOKEN, *SECRET, *PASSWORD, *AUTH anywhere; PASS, PW and CREDS alone or
    after a separator or a lower-case letter (DB_PASS, smtpPass); KEY after a separator
    or a qualifier (API_KEY, apiKey, AccountKey, not monkey); and a flag ending in
    ``pass`` (keytool's -storepass). ``name`` ends with ``word``: any other word than
    those four (TOKEN, SECRET, PASSWORD, AUTH…) names a credential wherever it ends."""
    low = name.lower()
    head = name[: len(name) - len(word)]
    if flag and low.endswith("pass"):
        return True
    if not head:
        return low != "key"
    before = head[-1]
    lowword = word.lower()
    if lowword in ("pass", "pw", "creds"):
        return not before.isalnum() or (word[0].isupper() and before.islower() and lowword != "pw")
    if lowword == "key":
        if head.lower().rstrip("_.-").endswith(("public", "pub", "publishable")):
            return False  # PUBLIC_KEY, pub_key, publicKey: public by name
        return before in "_.-" or head.lower().endswith(_KEY_QUALIFIERS)
    return True


# What a --secret flag's value starts with when it describes a secret (docker build
# --secret id=…,src=…; podman's type=…,target=…), not when it is one.
_SECRET_SPECS = ("id=", "type=", "src=", "source=", "env=")


def _cred_value(m: Match[str]) -> str | None:
    """The credential rule's replacement: the value masked when the name is one; None
    when it is not (the search then resumes right after the word: monkey=password=x)."""
    word = m.group("w")
    flag = m.group("flag")
    value = m.group("v3")
    if flag:
        name = flag.lstrip("-") + word
        if value and name.lower() == "secret" and value.startswith(_SECRET_SPECS):
            return None  # docker build --secret id=npmrc,src=…: the id names the secret
        if value and value.isupper() and value.replace("_", "").replace("-", "").isalpha():
            return None  # a metavar in help text (--password TEXT, --token TOKEN)
    else:
        text, i = m.string, m.start("w")
        while i > 0 and (text[i - 1].isalnum() or text[i - 1] in "_.-"):
            i -= 1
        name = text[i : m.start("w")] + word
        if name == word and word.lower() == "pass" and _pass_as_word(m, i):
            return None
        if name.endswith("signingkey") and key_id((value or "").rstrip(_TRAIL)):
            return None  # git's user.signingkey: a GPG key's id, public
        if i and text[i - 1] in "'\"" and _label_string(m, text[i - 1]):
            return None
    return _keep_value(m) if _cred_name(name, word, bool(flag)) else None


def _label_string(m: Match[str], quote: str) -> bool:
    """``console.log('DB_PASSWORD:', process.env.DB_PASSWORD)``: the name and its colon
    inside one string (a label), closed by the quote the rule took for the value's
    opening one; what follows is the code between two strings. (A JSON key closes its
    quote before the colon: ``"password":"x"`` keeps its mask.)"""
    opened = m.group("sq") or m.group("dq")
    if not opened or opened[-1] != quote:
        return False
    between = m.string[m.end("sfx") : m.start("sq" if m.group("sq") else "dq")]
    return between.strip(" \t") == ":"


def _line_before(text: str, at: int) -> str:
    """The text of ``at``'s line before it; a line starts after a newline, raw or
    JSON-escaped (an event's data: "…\\n--- PASS: TestX")."""
    escaped = text.rfind("\\n", 0, at)
    return text[max(text.rfind("\n", 0, at) + 1, escaped + 2 if escaped >= 0 else 0) : at]


def _test_status(word: str, before: str) -> bool:
    """A test runner's status: PASS in capitals after nothing but dashes, equals signs
    or stars on its line (``--- PASS: TestX``, ``=== PASS:``)."""
    return word == "PASS" and bool(before.strip()) and not before.strip(" \t-=*#>[|")


def _pass_as_word(m: Match[str], at: int) -> bool:
    """Whether "pass" alone before its ``:`` or ``=`` is the English word, not a name: a test
    runner's status (``--- PASS: TestX``, ``=== PASS:``: the word in capitals after
    nothing but dashes, equals signs or stars on its line), or a noun in a sentence
    (``Quiz copy pass: all eight questions``: after a word and a space, with a value of
    letters alone; ``db pass: hunter2`` keeps its mask)."""
    text = m.string
    before = _line_before(text, at)
    if _test_status(m.group("w"), before):
        return True
    value = m.group("v3")
    return (
        value is not None
        and ":" in text[m.end("w") : m.start("v3")]
        and value.rstrip(_TRAIL).isalpha()
        and before.endswith(" ")
        and before[-2:-1].isalpha()
    )


def _header(m: Match[str]) -> str:
    cred = m.group("cred")
    words = cred.lstrip("`'\"").split() or [""]
    if len(words) > 1 and words[0].lower() in ("bearer", "basic", "token", "digest"):
        words = words[1:]  # (`Bearer ${token}`: the scheme inside a template string)
    if cred.startswith(PREFIX) or (words[0][:1] == "$" and code_value(words[0])):
        return m.group(0)  # (Authorization: Bearer $TOKEN: a reference to it)
    scheme = m.group("scheme")
    return m.group("head") + (scheme + " " if scheme else "") + PREFIX + "authorization]"


def _userinfo(m: Match[str]) -> str:
    scheme, info = m.group(1), m.group(2) or m.group(3)
    if info.startswith(PREFIX) and info.endswith("]"):
        return m.group(0)
    if ":" in info or scheme.lower().rstrip(":/") in ("http", "https", "ftp", "ftps"):
        return scheme + PREFIX + "url-credentials]@"
    return m.group(0)  # ssh://git@host: a user name, not a secret


def _url_param(m: Match[str]) -> str:
    if _secret_param(m.group("name")):
        return m.group("name") + "=" + PREFIX + "url-param]"
    return m.group(0)


# Words after "password is" that describe it rather than being it.
_DESCRIPTIVE = """a an the is was be been being not no none null empty blank set unset stored saved
    kept hidden masked encrypted hashed required optional missing wrong incorrect invalid
    correct right valid expired changed reset rotated same different too very still also
    now here there in on at for to from with without and or but of that this it its your
    my our their his her weak strong long short secure insecure protected visible shown
    field input prompt manager policy hash length below above ok okay fine good bad new
    old default generated random available unavailable needed used using via by if when
    where which what who should must will would can could may might please thanks
    string str int integer number bool boolean bytes any object optional secretstr char
    text varchar broken working locked disabled enabled too_short weak compromised leaked
    case sensitive true false yes undefined nil"""
_NOT_A_VALUE = frozenset(_DESCRIPTIVE.split())
_STRONG = ("pass", "pwd", "pw", "pin", "secret", "cred")


def looks_random(value: str) -> bool:
    """Whether a word looks like a generated secret rather than a word, a name or a path."""
    if value[:1] == "*" or value[-1:] == "*":
        value = value.strip("*")  # markdown's emphasis: "**Weak Password Policy**"
    if len(value) < 6 or value.startswith(PREFIX) or value.lower() in _NOT_A_VALUE:
        return False
    if not value.isprintable() or " " in value:
        return False  # a word has no whitespace
    if value[0] == "/" or value[:2] in ("~/", "./") or value[:3] == "../" or "://" in value:
        return False  # a path or a URL (URLs have rules of their own)
    if value[0] in "~." and ("/" in value or value[1:].isalpha()):
        return False  # ~user/x, .config/x, .bashrc; ".sF3x~9" is a password
    if "(" in value or ")" in value or "[" in value or "{" in value:
        return False  # code: compute(), items[0]
    digits = sum(c.isdigit() for c in value)
    alpha = sum(c.isalpha() for c in value)
    if digits and alpha:
        return True
    if alpha and len(value) >= 8 and any(not c.isalnum() and c not in "-_." for c in value):
        return True
    upper = sum(c.isupper() for c in value)
    if len(value) >= 16 and upper and alpha - upper and not (upper == 1 and value[0].isupper()):
        # Mixed case inside a long word: not a name like "DbPassword", nor one made of
        # capitalised words ("TestDevMachinesSuite", "getUserAccountName").
        return not camel_name(value)
    return len(value) >= 24 and alpha == len(value)


def _random_words(segment: str, glued: bool = False, ids: bool = False) -> str:
    """``segment`` with each word (between spaces or tabs) that looks generated masked.

    ``glued``: the segment's last word touches the ``=`` or ``:`` after it: the head of a
    value that holds one ("pw zsnfDQWOss=Y7…"), masked unless a plain name (``user=``,
    ``AccountKey=``).
    ``ids``: after the word "key", where a GPG key's id is no secret ("gpg: key 8E1F…:")."""
    out = []
    parts = segment.replace("\t", " \t ").split(" ")
    for i, part in enumerate(parts):
        core = part.strip(_STRIP)
        head = (
            glued
            and i == len(parts) - 1
            and any(c.isalnum() for c in core)  # "token /= a": an operator, no value
            and not _plain_name(core)
            and not camel_name(core)  # "token AccountKey=": the name of what follows
        )
        if ids and key_id(core):
            out.append(part)
            continue
        out.append(
            part.replace(core, PREFIX + "credential]") if head or looks_random(core) else part
        )
    return " ".join(out).replace(" \t ", "\t")


def camel_name(word: str) -> bool:
    """A name of code made of words: letters only, each capital followed by at least two
    small letters ("TestDevMachinesSuite", "getUserAccount"). Random letters rarely are."""
    if not word.isalpha() or not word.isascii():
        return False
    i, n = 0, len(word)
    while i < n and word[i].islower():
        i += 1
    while i < n:
        if not word[i].isupper():
            return False
        j = i + 1
        while j < n and word[j].islower():
            j += 1
        if j - i < 3:
            return False
        i = j
    return True


def _count(value: str) -> bool:
    """One to three digits, maybe with decimals, after ``=`` or ``:`` (``pass=0``,
    ``failed: 2``, ``thresholds: pass=7.5``), or more in groups of three (``16,684``): a
    count or a measure, not a password (a PIN has four digits or more, and no comma)."""
    whole, _, decimals = value.partition(".")
    if "," in whole:  # thousands: "Secret findings: 16,684"
        head, *groups = whole.split(",")
        return (
            head.isdigit()
            and len(head) <= 3
            and all(len(g) == 3 and g.isdigit() for g in groups)
            and (not decimals or decimals.isdigit())
        )
    return whole.isdigit() and len(whole) <= 3 and (not decimals or decimals.isdigit())


def code_value(value: str) -> bool:
    """Whether a value written after a secret's name is code rather than the secret: a
    reference to one (``$TOKEN``, ``${X}``, ``$(cmd …)``, a backquoted command), a call
    or an index (``getToken()``, ``torch.Size([4``, ``stream.read(1)[0]``), a name of one
    reached through an object (``process.env.DB_PASSWORD``, ``self.password``). A
    password holds none of these shapes whole: the check is on the value from its start."""
    if not value:
        return False
    head = value[0]
    if head == "`":
        return True
    if head == "$":
        nxt = value[1:2]
        if nxt in ("(", "{"):
            return True
        k = 1
        while k < len(value) and (value[k].isalnum() or value[k] == "_"):
            k += 1
        return k > 1 and not value[1].isdigit() and value[k : k + 1] in ("", ".", ",", ";", ")")
    k = 0
    while k < len(value) and (value[k].isalnum() or value[k] in "_.$"):
        k += 1
    name, after = value[:k], value[k : k + 1]
    if not name or not (name[0].isalpha() or name[0] in "_$") or name.endswith("."):
        return False
    parts = name.split(".")
    if any(not p or not (p[0].isalpha() or p[0] in "_$") for p in parts):
        return False
    if after in ("(", "["):
        # A method's call or an index (torch.Size([4, items[0]), or a plain call with no
        # argument (getToken()); merge_setting(request.auth, …) stays the rule's to judge.
        rest = value[k + 1 : k + 2]
        lower = name[0].islower() or name[0] == "_"
        return len(parts) > 1 or (lower and (after == "[" or rest in ("", ")")))
    if after == "" and len(parts) > 1:
        return is_secret_name(parts[-1]) or (parts[-1].isupper() and "_" in parts[-1])
    return False


_CODE_MARKS = frozenset("()[]{}<>")


def code_shaped(word: str) -> bool:
    """A word that holds code punctuation (brackets, a redirect) or is :func:`code_value`:
    never remembered nor hunted down elsewhere as a secret (a password here has none)."""
    return any(c in _CODE_MARKS for c in word) or code_value(word)


def _plain_name(word: str) -> bool:
    """A name of code or a word: snake_case, kebab-case, lower or upper case alone."""
    flat = word.replace("-", "_").replace(".", "_")
    return flat.isidentifier() and (flat.islower() or flat.isupper() or flat[1:].islower())


# English endings of an adjective, a participle or an abstract noun: "the password is
# hardcoded", "token was revoked", "password authentication failed", "the warning is
# harmless". A word of small letters alone with one of these endings describes the
# secret; a password made of one word has digits or capitals (looks_random) or is
# another word.
_ENGLISH_ENDINGS = ("ed", "ing", "less", "ful", "able", "ible", "ous", "ive", "tion",
                    "sion", "ment", "ness", "ical", "ent", "ant")  # fmt: skip


def described(word: str) -> bool:
    """A word that describes a secret instead of being one: one of the descriptive words
    (missing, required, expired…) or a word of 4 to 20 small ASCII letters with an
    English ending of an adjective or a participle (hardcoded, harmless, revoked)."""
    if not word.isascii() or not word.isalpha() or not word.islower():
        return False
    return word in _NOT_A_VALUE or (4 <= len(word) <= 20 and word.endswith(_ENGLISH_ENDINGS))


# Types of a value in code: "password: string;", "idToken: string)" (TypeScript),
# "token: str" (Python), "pass: String" (Rust): an annotation, not a value.
_TYPE_NAMES = frozenset(
    ("string", "str", "int", "integer", "number", "bool", "boolean", "bytes", "any", "object",
     "char", "text", "secretstr", "secretbytes", "buffer", "uint8array", "void", "unknown")
)  # fmt: skip

# The file name of a key pair's half as ssh-keygen and gpg write them (id_ed25519,
# id_rsa.pub, id_ecdsa_sk_work), and a key or certificate file's extension: a path
# whose last part has one names a key, it is not the key.
_KEY_FILE_HEADS = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_xmss")
_KEY_FILE_EXTS = (".pub", ".pem", ".key", ".crt", ".cer", ".csr", ".der", ".asc", ".gpg",
                  ".p12", ".pfx", ".ppk", ".jks", ".keystore", ".kdbx")  # fmt: skip
_PATH_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-/~$")


def key_file(value: str) -> bool:
    """Whether ``value`` names a key's file: ``id_ed25519_github``, ``id_rsa.pub``,
    ``~/.ssh/id_ed25519``, ``/etc/openvpn/server.key`` (a path, or a bare name of
    ssh-keygen's kind; a bare ``x.key`` may be a value)."""
    if not value or not all(c in _PATH_CHARS for c in value):
        return False
    last = value.rstrip("/").rpartition("/")[2]
    head = last.lower()
    for kind in _KEY_FILE_HEADS:
        if head.startswith(kind):
            rest = head[len(kind) :]  # "", "_github", ".pub", "_sk-work.pub"
            return rest == "" or (rest[0] in "_-." and _plain_name(rest[1:].replace(".", "_")))
    if "/" not in value or not head.endswith(_KEY_FILE_EXTS):
        return False
    return all(
        p == "" or _plain_name(p.replace(".", "_")) or p[:1] in "~$" for p in value.split("/")
    )


# What an OpenSSH public key is written with: its type, and a body that starts with the
# type again (base64 of a 4-byte length and the name: "AAAAC3NzaC1lZDI1NTE5…").
_OPENSSH_TYPES = (b"ssh-", b"ecdsa-", b"sk-ssh-", b"sk-ecdsa-", b"rsa-sha2-")


def public_key_value(value: str) -> bool:
    """Whether ``value`` is public key material, however random: an OpenSSH public key
    (``ssh-ed25519 AAAA…``, or its body alone: the base64 of its own type name), or a
    key's fingerprint (``SHA256:…``, ``MD5:12:34:…``)."""
    head = value[:7].upper()
    if head == "SHA256:" or head[:4] == "MD5:" or head[:5] == "SHA1:":
        return True
    if value.startswith(_PUBLIC_KEY_TYPES):
        return True
    if not value.startswith("AAAA") or len(value) < 32:
        return False
    import binascii

    try:
        data = binascii.a2b_base64(value[:32])
    except (binascii.Error, ValueError):
        return False
    return data[:3] == b"\0\0\0" and data[4:].startswith(_OPENSSH_TYPES)


def key_id(word: str) -> bool:
    """A GPG key's id or fingerprint: 8, 16 or 40 hex digits (``0x`` before them or not),
    with a digit: what ``gpg --list-keys`` and ``gpg: key …:`` print. Public."""
    hexpart = word[2:] if word[:2] in ("0x", "0X") else word
    if "/" in hexpart:  # rsa4096/0xABCDEF0123456789
        algo, _, hexpart = hexpart.partition("/")
        if not algo.isalnum():
            return False
        hexpart = hexpart[2:] if hexpart[:2] in ("0x", "0X") else hexpart
    return (
        len(hexpart) in (8, 16, 40)
        and not hexpart.strip("0123456789abcdefABCDEF")
        and any(c.isdigit() for c in hexpart)
    )


def _prose(m: Match[str]) -> str:
    """ "my password is X", "use token X": X masked when the context or X itself says so.

    A strong context (a password word and a link such as "is" or ":", or a ``.netrc``
    entry) masks any value but a word that describes it ("is wrong"); a weak one
    ("token X", "the key is X") only a value that looks generated. A word between the
    key word and its link that looks generated is masked too ("password X9k-2: 1").
    """
    whole, base = m.group(0), m.start(0)
    value = m.group("v")
    core = value.rstrip(_TRAIL + "!?)]}")
    if not m.group("link"):
        return whole
    vstart = m.start("v") - base
    head = whole[:vstart]
    kw = m.group("kw").lower()
    # "pass" alone is an English word ("Forward Pass Config - Gain:", "Pass 2 of 3:",
    # "this pass was reviewed"): a key word only right before its link, and then with a
    # value that is no plain word.
    bare_pass = kw == "pass"
    worded_link = False
    if m.group("conn"):
        kw_end, conn_start = m.end("kw") - base, m.start("conn") - base
        segment = whole[kw_end:conn_start]
        worded_link = segment.strip() != ""
        glued = worded_link and not segment[-1].isspace() and whole[conn_start] in "=:"
        glued = glued and not bare_pass
        ids = kw == "key"
        head = whole[:kw_end] + _random_words(segment, glued, ids) + whole[conn_start:vstart]
    unchanged = head + whole[vstart:]
    if not _worded(core) or code_value(core) or (worded_link and _count(core)):
        # Punctuation alone, code ("Gain: torch.Size([4", "$TOKEN"), or a count after
        # words ("secret keys read: 1"; "the password is 7" keeps its mask).
        return unchanged
    if bare_pass and (worded_link or core.isalpha() or _count(core)) and not looks_random(core):
        return unchanged
    if bare_pass and _test_status(m.group("kw"), _line_before(m.string, base)):
        return whole  # "--- PASS: TestMaskSecrets/single_secret (0.00s)"
    if worded_link and public_key_value(segment.split()[-1] + ":" + core):
        return whole  # "ssh-ed25519 key SHA256:CKiM8…": a key's fingerprint
    if described(core) or core in _EXPR_WORDS or public_key_value(core) or key_file(core):
        # "the password is hardcoded", "password authentication failed": a word that
        # describes it; "key SHA256:…", "ssh key id_ed25519_work": public, or a file.
        return unchanged
    if kw == "key" and (key_id(core) or _public_before(whole, m.string, base)):
        return unchanged  # "gpg: key 8E1F…:", "Key ID: 8E1F…"; "public key: …"
    conn = (m.group("conn") or "").strip()
    if kw in ("machine", "login"):
        strong = True
    elif kw in ("key", "pin") and not conn:
        return unchanged  # "pin node@20", "ssh key id_ed25519": verbs and names
    elif kw == "pin" and conn in (":", "="):
        strong = core.isdigit() and 4 <= len(core) <= 8  # PIN: 4821, not pin = 18
        if not strong:
            return unchanged
    else:
        strong = bool(conn) and kw.startswith(_STRONG)
    if strong:
        if core.lower() in _NOT_A_VALUE:
            return unchanged
    elif not looks_random(core):
        return unchanged
    return head + PREFIX + "credential]" + whole[vstart + len(core) :]


def _public_before(whole: str, text: str, base: int) -> bool:
    """Whether the word before the key word that starts ``whole`` (at ``base`` in
    ``text``) says the key is public: "public key: …", "pub key = …"."""
    before = text[max(0, base - 14) : base].rstrip(" \t_-*`").lower()
    return before.endswith(("public", "pub", "publishable"))


# Names of values that are identifiers or digests, never secrets, however random.
_DIGEST_NAMES = (
    "sha", "hash", "sum", "digest", "integrity", "commit", "rev", "etag", "uuid", "guid",
    "version", "id", "ids", "ref", "checksum", "fingerprint", "path", "dir", "file", "url",
    "uri", "name", "image", "tag", "branch", "cursor",
)  # fmt: skip


def _random_value(m: Match[str]) -> str:
    """``NAME=<40 random characters>``: masked when the value looks generated."""
    value = m.group("v")
    name = m.group("name").lower().rstrip("_-.")
    if value.startswith(PREFIX) or name.endswith(_DIGEST_NAMES) or name in ("h1", "h2"):
        return m.group(0)  # (h1: a Go module's checksum in go.sum)
    if name.endswith("key") and _public_before(m.group(0), m.string, m.start(0)):
        return m.group(0)  # "public key: <base64>" (wg show): public by name
    if name.startswith(("sha", "md5")) or public_key_value(value):
        return m.group(0)  # SHA256:… a key's fingerprint (ssh-keygen -l), AAAA… a public key
    body = value.rstrip("=")
    has_digit = any(c.isdigit() for c in body)
    has_upper = any(c.isupper() for c in body)
    has_lower = any(c.islower() for c in body)
    keyish = name.endswith(("key", "sig", "hmac")) and has_digit and len(set(body)) >= 8
    if not keyish and (not (has_digit and has_upper and has_lower) or len(set(body)) < 12):
        return m.group(0)  # a hex key under a plain "key" is one; a word or a digest is not
    start = m.start("v") - m.start(0)
    return m.group(0)[:start] + PREFIX + "secret]"


# What may follow the credential word at the end of a name: SECRET_KEY_BASE, TOKEN_2.
_CRED_SUFFIX = (
    r"(?:[_.-]?(?:base|value|data|b64|base64|hex|raw|str|string|plain|text|enc|encrypted"
    r"|[0-9]{1,2})(?![A-Za-z0-9]))?"
)
_CRED_PATTERN = (
    # NAME=value, NAME: value, "name": "value", env["NAME"] = value, name := value,
    # name => value, password: str = "value", --name=value, --name value, -storepass value
    # and argv lists ["--password", "value"]. The pattern names only the last word of a
    # credential-like name; _cred_value reads the whole name and judges it (a long
    # alternation of names costs milliseconds to compile in every hook that needs it).
    r"(?i)(?P<flag>(?<![A-Za-z0-9_-])--?[A-Za-z0-9_-]*?)?"
    r"(?P<w>token|secret|passw(?:or)?d|pass(?:phrase|code)?|pwd|pw|credentials?|creds|auth|key)"
    r"(?P<sfx>" + _CRED_SUFFIX + r")"
    r"(?(flag)(?:[ \t]+|\\*[\"'][ \t]*,[ \t]*(?=\\*[\"'][^\"'\\\n]*\\*[\"'][ \t]*[,\]]))(?!-)"
    r"|(?:\\*[\"'])?\]?"
    r"(?:[ \t]*:[ \t]*[A-Za-z_][\w.\[\]|]*(?:[ \t]*=[ \t]*(?=\\*[\"'])|[ \t]+=[ \t]+)"
    # "NAME==X" glued: an assignment of "=X" (ansible -e 'x_pass==X'), or a hard-coded
    # comparison; "a == b" with spaces stays code.
    r"|[ \t]*(?:=>|:=|=(?!=)|==(?![=\s])|:(?![:/]))))"
    r"[ \t]*" + _VALUE
)
# "pass" alone is in "passed" and "bypass": only the spellings that can end a name.
_CRED_MARKERS = (
    "token", "secret", "passw", "passph", "passco", "pass=", "pass:", 'pass"', "pass'",
    "pass ", "pass\t", "pass\\", "pass>", "pwd", "pw=", "pw:", "pw ", 'pw"', "pw'", "pw>",
    "cred", "auth",
)  # fmt: skip
# (secretKey and authKey need none: "secret" and "auth" start the rule of _CRED_MARKERS.)
_KEY_MARKERS = (
    "_key", "-key", ".key", "apikey", "accesskey", "privatekey", "clientkey", "accountkey",
    "masterkey", "signingkey", "encryptionkey", "sessionkey", "licensekey", "appkey",
    "servicekey", "subscriptionkey", "webhookkey", "consumerkey", "sharedkey",
)  # fmt: skip

# Commands that take a password as an argument: the prefix up to the value.
_CMD_PASSWORD = (
    # Case-sensitive: mysql's -P is its port, -p its password.
    # "-p" glued to what follows is the password, whatever it starts with ("-p-x": "-x").
    r"(?:\b(?:mysql\w*|mariadb\w*)\b[^\n|;&]{0,300}?\s-p(?=[^\s'\"]|\\*['\"][^\s'\"])"
    r"|\blogin\b[^\n|;&]{0,300}?\s-p\s+"
    r"|\bsshpass\s+-p\s*"
    r"|\bredis-cli\b[^\n|;&]{0,300}?\s-a\s+"
    r"|\b(?:sqlcmd|bcp|osql|isql)\b[^\n|;&]{0,300}?\s-P\s*"
    r"|\bldap\w+\b[^\n|;&]{0,300}?\s-w\s+"
    r"|\bmongo\w*\b[^\n|;&]{0,300}?\s-p\s+"
    r"|\bssh-keygen\b[^\n|;&]{0,300}?\s-[NP]\s+"
    r"|\b(?:un)?zip\b[^\n|;&]{0,300}?\s-P\s+"
    r"|\b7za?\b[^\n|;&]{0,300}?\s-p(?=\S)"
    r"|\badd-(?:generic|internet)-password\b[^\n|;&]{0,300}?\s-w\s+"
    r"|\bhtpasswd\s+(?=(?:-\w+\s+)*-\w*b)(?:(?=(?:-\w+\s+)*-\w*n)(?:-\w+\s+)+\S+\s+"
    r"|(?!(?:-\w+\s+)*-\w*n)(?:-\w+\s+)+\S+\s+\S+\s+)"
    r"|\b(?:echo|printf)\s+(?=\S+\s*\|[^\n]*--password-stdin)"
    r"|--password-stdin\s*<<<\s*"
    r"|\b(?:smb\w*|rpcclient)\b[^\n|;&]{0,300}?\s-U\s+[^\s%]+%"
    r"|\bsecret\s+set\s+\S+\s+(?:--body|-b)[\s=]+"
    r")" + _VALUE
)
# A secret store's value on the command line (az keyvault secret set --value X, aws
# secretsmanager create-secret --secret-string X); GitHub Actions' ::add-mask::X.
_STORE_VALUE = (
    r"(?:\bsecrets?(?:manager)?\b[^\n|;&]{0,200}?\b(?:set|create|add|put|update|create-secret"
    r"|put-secret-value|update-secret)\b[^\n|;&]{0,200}?\s--(?:value|secret-string)[\s=]+"
    r"|::add-mask::)" + _VALUE
)
# aws configure set aws_secret_access_key VALUE, npm config set //host/:_authToken VALUE
_CONFIG_SET = (
    r"(?i)\b(?:config(?:ure)?|secrets?|vars?|variables?)\s+(?:set|add|put|create)\s+"
    r"(?:\S+\s+){0,3}?[^\s=]*?" + _CRED_WORD + r"(?:\\*[\"'])?\s+(?!-)" + _VALUE
)

# The rest of a header's value: to the end of its line or quote, or to a shell operator
# (a header written unquoted in a command line).
_HEADER_REST = r"(?:(?!\s+(?:&&|\|\|?|;)\s)[^\n'\"\\])*"
_CALL_PATTERN = (
    r"(?i)" + _CRED_WORD + r"(?P<q1>\\*[\"'])\s*,\s*(?P<q2>\\*[\"'])"
    r"(?P<v>(?!\[REDACTED:)[^\"'\\\n]+)(?P=q2)\s*\)"
)
_KV_PATTERN = (
    r"(?i)\b(?:key|name)\s*=\s*\\*[\"'][\w.:-]*?" + _CRED_WORD + r"\\*[\"']\s+value\s*=\s*"
    r"\\*[\"'](?P<v>(?!\[REDACTED:)[^\"'\\<>]+)"
)
_PARAM_PATTERN = r"(?<=[?&#])(?P<name>[\w.%\[\]-]+)=(?!\[REDACTED:)[^\s&#'\"\\<>]+"
_XML_PATTERN = (
    r"(?i)<(?P<tag>[\w:.-]*?" + _CRED_WORD + _CRED_SUFFIX + r")(?:\s[^<>]*)?>"
    r"(?P<v>(?!\[REDACTED:)\s*[^<\"\\\s][^<\"\\]*)</(?P=tag)\s*>"
)
_ENTRY_PATTERN = (
    r"(?i)<(?P<tag>[\w:.-]+)\s[^<>]{0,200}?\b(?:key|name)\s*=\s*\\*[\"'][\w.:-]*?"
    + _CRED_WORD
    + r"\\*[\"'][^<>]{0,200}>(?P<v>(?!\[REDACTED:)\s*[^<\"\\\s][^<\"\\]*)</(?P=tag)\s*>"
)
_PROSE_PATTERN = (
    r"(?i)(?<![\w-])(?P<kw>pass(?:word|phrase|wd|code)?|pwd|pw|pin|secret(?:[ _-]?key)?"
    r"|(?:api|access|auth|private|secret|license|deploy|bot)[ _-]?(?:key|token)"
    r"|token|key|credentials?)"
    # Either up to four words then a link ("for the staging db is", ":"), or a space.
    r"(?P<link>(?:(?:[ \t]+(?!(?:is|was)\b)[\w.@/-]+){0,4}?"
    r"(?P<conn>[ \t]*(?:(?:(?:is|was)(?:[ \t]+now)?|will[ \t]+be|should[ \t]+be|set[ \t]+to)"
    r"(?![\w-])[ \t]*:?|=>|[=:]))"
    r"|[ \t]+)"
    r"[ \t]*[\"'`\u201c\u2018]?)"
    # A quoted value runs to its closing quote, spaces and all; a bare one to a space.
    r"(?P<v>(?<=[\"'`\u201c\u2018])(?!\[REDACTED:)[^\"'`\u201d\u2019\n<>\\]{1,200}"
    r"(?=[\"'`\u201d\u2019])|(?![=:]|\[REDACTED:)[^\s\"'`\u201d\u2019<>\\]+)"
)
_RANDOM_PATTERN = (
    r"(?<![\w.-])(?P<name>[A-Za-z_][\w.-]{0,60})(?:\\*[\"'])?[ \t]*[:=][ \t]*(?:\\*[\"'])?"
    r"(?P<v>[A-Za-z0-9+_-]{20,}={0,2})(?![\w+/=-])"
)

_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
_KEY_TAILS = "\x00key-tails"


def _key_tails(text: str) -> tuple[str, int]:
    """Mask what is left of private-key blocks whose BEGIN line was cut off: each END
    line and the run of base64 lines (raw or JSON-escaped newlines) before it.

    Done by hand: a regex for "base64 lines, then an END line" backtracks through every
    long run of letters in the text, quadratically.
    """
    out: list[str] = []
    pos = 0
    count = 0
    while True:
        i = text.find("-----END", pos)
        if i < 0:
            break
        j = text.find("-----", i + 8)
        label = text[i + 8 : j] if j >= 0 else ""
        if j < 0 or "PRIVATE KEY" not in label or len(label) > 40:
            out.append(text[pos : i + 8])
            pos = i + 8
            continue
        start = i
        while start > pos:
            c = text[start - 1]
            if c in "rn" and start - 2 >= pos and text[start - 2] == "\\":
                slashes = 1
                while start - 2 - slashes >= pos and text[start - 2 - slashes] == "\\":
                    slashes += 1
                if slashes % 2 == 0:
                    break  # "\\n": an escaped backslash, then the letter n
                start -= 2  # a JSON-escaped line break
            elif c in _B64 or c in "\r\n":
                start -= 1
            else:
                break
        while start < i and text[start] in "\r\n":
            start += 1  # the line break before the body stays
        slashes = 0
        while start - slashes - 1 >= pos and text[start - slashes - 1] == "\\":
            slashes += 1
        start -= slashes % 2  # never split an escape such as "\t" in JSON text
        out.append(text[pos:start])
        out.append(PREFIX + "private-key]")
        count += 1
        pos = j + 5
    out.append(text[pos:])
    return "".join(out), count


# -- prechecks: Python tests that keep ``re`` unloaded for text that only looks close --
#
# A marker says a rule *could* match ("secret" in a docstring, "#" and "=" in code). The
# regex engine costs its import (~7 ms a process) and each pattern's compilation, so
# the commonest rules first ask these cheap questions; each is conservative: it may say
# yes for nothing, never no for a match.

_ROOTS = ("token", "secret", "pass", "pw", "cred", "auth", "key")  # "pw" finds "pwd" too
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")


_WORDS = frozenset(
    ("token", "secret", "password", "passwd", "passphrase", "passcode", "pass", "pwd", "pw",
     "credential", "credentials", "creds", "auth", "key")
)  # fmt: skip
_SUFFIXES = frozenset(
    ("base", "value", "data", "b64", "base64", "hex", "raw", "str", "string", "plain",
     "text", "enc", "encrypted")
)  # fmt: skip


def _assigned(text: str, low: str, words: tuple[str, ...] = _ROOTS) -> bool:
    """A credential-like name (see _cred_name, which reads its case: smtpPass) that is
    assigned (``= : =>``, ``'NAME', 'v'``) or a ``--flag`` before a value, in ``text``."""
    n = len(low)
    if len(text) != n:
        return True  # lower() changed the length: indexes into low do not fit text
    for root in words:
        i = low.find(root)
        while i >= 0:
            for word in _WORDS_OF[root]:
                if not low.startswith(word, i):
                    continue
                k = i + len(word)
                start = i  # the name, as _cred_value reads it
                while start > 0 and low[start - 1] in _NAME_CHARS:
                    start -= 1
                flag = i  # a --flag: the run of [a-z0-9_-] before the word starts with "-"
                while flag > 0 and (low[flag - 1].isalnum() or low[flag - 1] in "_-"):
                    flag -= 1
                tail = k
                while tail < n and tail - k < 12 and low[tail] in _NAME_CHARS:
                    tail += 1
                suffix = low[k:tail].lstrip("_.-")
                if (
                    suffix
                    and suffix not in _SUFFIXES
                    and not (suffix.isdigit() and len(suffix) < 3)
                ):
                    continue  # TOKENIZER, PASSWORD_FILE: not the end of a credential name
                if _cred_name(text[start:k], text[i:k], False):
                    j = tail
                    while j < n and j - tail < 4 and low[j] in " \t\"'\\]":
                        j += 1
                    if j < n and (low[j] in "=:" or (low[j] == "," and j > tail)):
                        return True
                if (
                    low[flag] == "-"
                    and tail < n  # --token or --token-base, then a value
                    and low[tail] in " \t\"'"
                    and _cred_name(text[flag:k].lstrip("-"), text[i:k], True)
                ):
                    return True
            i = low.find(root, i + 1)
    return False


# The words the credential pattern knows, by the root a text is searched for.
_WORDS_OF = {
    root: tuple(sorted((w for w in _WORDS if w.startswith(root)), key=len, reverse=True))
    for root in _ROOTS
}


def _cred_ready(text: str, low: str) -> bool:
    return _assigned(text, low)


def _param_ready(text: str, low: str) -> bool:
    """``?name=`` ``&name=`` ``#name=`` with a secret-like name."""
    n = len(text)
    for sep in "?#&":
        i = text.find(sep)
        while i >= 0:
            j = i + 1
            while j < n and (text[j].isalnum() or text[j] in "_.%[]-"):
                j += 1
            if j < n and text[j] == "=" and j > i + 1 and _secret_param(text[i + 1 : j]):
                return True
            i = text.find(sep, i + 1)
    return False


_PROSE_ROOTS = (
    "pass", "pwd", "pw", "pin", "secret", "token", "key", "cred", "api", "access", "auth",
    "private", "license", "deploy", "bot",
)  # fmt: skip
_PROSE_KWS = frozenset(
    ("pass", "password", "passphrase", "passwd", "passcode", "pwd", "pw", "pin", "secret",
     "token", "key", "credential", "credentials", "secretkey")
)  # fmt: skip
_COMPOUND_HEADS = frozenset(
    ("api", "access", "auth", "private", "secret", "license", "deploy", "bot")
)  # fmt: skip
_PROSE_OF = {
    root: tuple(sorted((w for w in _PROSE_KWS if w.startswith(root)), key=len, reverse=True))
    for root in _PROSE_ROOTS
}
_LINK_WORDS = frozenset(("is", "was", "be", "to", "now"))
_STRIP = "\"'`.,;!?()[]{}<>\u201c\u201d\u2018\u2019"


def _prose_ready(text: str, low: str) -> bool:
    """What the prose rule would mask (see _prose), asked without a regex: a key word
    starting a word; then, within five words, a link (is, :, =) and a value that is no
    descriptive word (a password) or looks generated (a token); or, right after it, a
    value that looks generated."""
    for root in _PROSE_ROOTS:
        i = low.find(root)
        while i >= 0:
            if i == 0 or not (low[i - 1].isalnum() or low[i - 1] in "_-"):
                # As the pattern: a key word, not necessarily a whole word ("keyis").
                for word in _PROSE_OF[root]:
                    if low.startswith(word, i) and _prose_value(text, i + len(word), word):
                        return True
                if root in _COMPOUND_HEADS:
                    k = i + len(root)
                    for sep in ("", " ", "_", "-"):
                        for last in ("key", "token"):
                            if low.startswith(sep + last, k) and _prose_value(
                                text, k + len(sep) + len(last), f"{root} {last}"
                            ):
                                return True
            i = low.find(root, i + 1)
    return False


_UNQUOTE = str.maketrans({c: " " for c in "\"'`\u201c\u201d\u2018\u2019"})


def _worded(value: str) -> bool:
    """A value with a letter or digit in it (punctuation alone is no secret)."""
    return PREFIX not in value and any(c.isalnum() for c in value)


def _core(token: str) -> str:
    token = token.lstrip("\"'`\u201c\u2018")
    for i, c in enumerate(token):
        if c in "\"'`\u201d\u2019<>\\":
            token = token[:i]
            break
    return token.rstrip(_TRAIL + "!?)]}")


def _prose_value(text: str, k: int, kw: str) -> bool:
    """Conservatively: could the prose rule mask a value after the key word ending at
    ``k``? (It may answer yes for nothing; never no for a value it would mask.)"""
    end = text.find("\n", k)
    line = text[k : end if 0 <= end < k + 240 else k + 240]
    raw = line.split()[:9]
    split = line.replace(":", " : ").replace("=", " = ").split()[:12]
    unquoted = line.translate(_UNQUOTE).split()[:12]  # a value opens after a quote
    cores = [c for c in map(_core, raw + split + unquoted) if _worded(c)]
    linked = any(t in (":", "=") or t.lower() in _LINK_WORDS for t in split[:9])
    if (linked or kw not in ("key", "pin")) and any(looks_random(c) for c in cores):
        return True
    return (
        linked
        and kw.startswith(_STRONG)
        and any(c.lower() not in _NOT_A_VALUE and c not in (":", "=", "-") for c in cores)
    )


def _call_ready(text: str, low: str) -> bool:
    """define('NAME', 'value'): a closing quote and parenthesis after a key word."""
    for closer in ("')", '")', "' )", '" )'):
        i = low.find(closer)
        while i >= 0:
            a = max(low.rfind("\n", 0, i) + 1, i - 300)
            if "," in low[a:i] and _assigned(text[a:i], low[a:i]):
                return True
            i = low.find(closer, i + 1)
    return False


def _markup_ready(text: str, low: str) -> bool:
    """A closing tag ``</…>`` or a ``value=`` near a word that names a credential (an
    element's content may span lines)."""
    for needle in ("</", "value"):
        i = low.find(needle)
        while i >= 0:
            near = low[max(0, i - 600) : i + 200]
            if any(root in near for root in _ROOTS):
                return True
            i = low.find(needle, i + 1)
    return False


def _random_ready(text: str, low: str) -> bool:
    """``name = <a run of 20 token characters>`` with digits and both cases, or a
    ``…key`` name."""
    shape = _shape(text)
    for sep in (b"=", b":"):
        i = shape.find(sep)
        while i >= 0:
            j = i + 1
            while j < len(shape) and shape[j] == 0x20 and j - i < 5:
                j += 1
            k = j
            while k < len(shape) and shape[k] == 0x61:
                k += 1
            if k - j >= 20:
                run = text[j:k]
                if any(c.isdigit() for c in run) and (
                    (any(c.isupper() for c in run) and any(c.islower() for c in run))
                    or low[max(0, i - 12) : i].rstrip(" \"'").endswith(("key", "sig", "hmac"))
                ):
                    return True
            i = shape.find(sep, k if k > i else i + 1)
    return False


# -- shapes found raw by the review of 0.4.0 (issue 29) -------------------------------------
#
# Each family by its structure, not its values: where a command's grammar puts the
# password; an encoded form that decodes to something masked (or to ``user:password``);
# key material by its shape (a long random run, the lines of a PEM body, a crypt hash);
# multi-line values of configuration formats; the same prose in other languages; and
# sentences that *set* a password ("reset db pass to X", "X is the new password").

# Commands that set or take an account's password, by the value's place in each one's
# grammar (more of them than _CMD_PASSWORD's, which only take one to log in).
_ADMIN_PASSWORD = (
    r"(?:\b(?:useradd|usermod|adduser)\b[^\n|;&]{0,300}?\s-p\s+"
    r"|\bnet\s+user\s+(?:/\w+\s+)*(?!/)[^\s/]+\s+(?![/*])"
    r"|\bnet\s+use\s+(?:[A-Za-z*]:\s+)?\\\\\S+\s+(?:(?i:/user):\S+\s+)?(?![/*])"
    r"|\bmysqladmin\b[^\n|;&]{0,300}?\spassword\s+"
    r"|\bhtpasswd\s+-(?=\w*b)(?=\w*n)\w+\s+\S+\s+"
    r"|\b(?:rabbitmqctl|rabbitmqadmin)\s+(?:add_user|change_password|authenticate_user)\s+\S+\s+"
    r"|\bmosquitto_passwd\s+-b\s+\S+\s+\S+\s+"
    r"|\bset-initial-password\s+"
    r"|(?i:\bConvertTo-SecureString\b)(?:\s+-(?i:AsPlainText|Force|String))*\s+(?!-)"
    r"|\bopenssl\b[^\n|;&]{0,300}?\s-pass(?:in|out|word)?\s+pass:"
    r"|\bopenssl\s+(?:enc|aes\S*|des\S*|bf\S*|camellia\S*)\s[^\n|;&]{0,300}?-k\s+"
    r"|\b(?:psexec|paexec)\w*\b[^\n|;&]{0,300}?\s-p\s+"
    r"|(?i:\bschtasks\b[^\n|;&]{0,300}?\s/rp\s+)"
    r"|\bldappasswd\b[^\n|;&]{0,300}?\s-[sa]\s+"
    r"|\blftp\b[^\n|;&]{0,300}?\s-u\s+[^\s,]+,"
    r"|\binflux\w*\b[^\n|;&]{0,300}?\s-p\s+"
    r"|\bsnmp\w+\b[^\n|;&]{0,300}?\s-[AX]\s+"
    r"|\b(?:sqlplus|sqlldr|expdp|impdp|rman)\s+(?:-\w+\s+)*[\w$#.-]+/(?!/)"
    r"|\bopenssl\s+passwd\b(?:\s+-(?:salt\s+\S+|\S+))*\s+"
    r"|\bmkpasswd\b(?:\s+(?:-[msSR]\s+\S+|--\S+|-\w))*\s+(?!-)"
    r"|(?i:\b(?:requirepass|masterauth)\s+)"
    r"|\bchangeUserPassword\(\s*['\"][^'\"\n]+['\"]\s*,\s*"
    r"|\bcrypt(?:\.crypt)?\(\s*(?=['\"])"
    # What echo or printf pipe into a command that reads a password on its stdin.
    r"|\bprintf\s+(?:'[^'\n]*%s[^'\n]*'|\"[^\"\n]*%s[^\"\n]*\")\s+(?=[^\n|]*\|" + "{stdin})"
    r"|\b(?:echo|printf)\s+(?:-[neE]+\s+)*(?=[^\n|]*\|" + "{stdin})"
    r"|\b(?:chpasswd|passwd|kinit|smbpasswd|cryptsetup)\b[^\n|;&]{0,200}?<<<\s*"
    r")"
)
_STDIN_READERS = (
    r"\s*(?:sudo\s+(?:-[^S\s]\S*\s+)*)?(?:passwd|chpasswd|kinit|smbpasswd|vncpasswd"
    r"|cryptsetup|sudo\s+(?:-\w+\s+)*-\w*S\b|openssl\b[^\n]*-pass\w*\s+stdin"
    r"|gpg\b[^\n]*--passphrase-fd"
    # A secret store fed on stdin: gcloud secrets create, docker secret create, gh secret set.
    r"|[\w.-]+\s+(?:[\w.-]+\s+)?secrets?\s+(?:create|set|add|put|versions\s+add)\b)"
)
_ADMIN_PASSWORD = _ADMIN_PASSWORD.replace("{stdin}", _STDIN_READERS) + _VALUE
_ADMIN_MARKERS = (
    "useradd", "usermod", "adduser", "net user", "net use", "mysqladmin", "htpasswd",
    "rabbitmq", "mosquitto_passwd", "set-initial-password", "convertto-securestring",
    "openssl", "psexec", "paexec", "schtasks", "ldappasswd", "lftp", "influx", "snmp",
    "sqlplus", "sqlldr", "expdp", "impdp", "rman", "passwd", "kinit", "cryptsetup", "sudo",
    "gpg", "requirepass", "masterauth", "changeuserpassword", "crypt(", "secret",
)  # fmt: skip
# An expect script answers a password prompt with send.
_EXPECT_SEND = r"(?i)\bexpect\b[^\n]*assword[^\n]*\n[ \t]*send\s+(?:--\s+)?" + _VALUE

# SQL: CREATE/ALTER USER … IDENTIFIED BY 'x', … [WITH] [ENCRYPTED] PASSWORD 'x',
# CREATE LOGIN … WITH PASSWORD = 'x', SET PASSWORD [FOR u] = [PASSWORD(]'x'. A bare
# PASSWORD takes only a quoted literal after it: "password 'x'" is one, "password is" not.
_SQL_PASSWORD = (
    r"(?i)(?:\bidentified\s+(?:with\s+\S+\s+)?by\s+(?:password\s+)?"
    r"|\bset\s+password\s+(?:for\s+\S+\s*)?=\s*(?:password\s*\(\s*)?"
    r"|\b(?:with|login|encrypted|unencrypted|(?:user|role|login)\s+\S+)\s+password"
    r"(?:\s*=\s*|\s+)(?=\\*['\"]))" + _VALUE
)


def _sql_value(m: Match[str]) -> str:
    """After PASSWORD, a quoted literal is masked; after IDENTIFIED BY, a value only in a
    statement about a user or a role ("identified by four decimal values" is prose)."""
    if m.group("v3") is not None or m.group(0)[:10].lower() == "identified":
        line_start = m.string.rfind("\n", 0, m.start()) + 1
        before = m.string[max(line_start, m.start() - 200) : m.start()].lower()
        if not any(word in before for word in ("user ", "role ", "grant ", "login ")):
            return m.group(0)
    return _masked_value("password")(m)


# A value piped into an encoder, or handed to one in code: building a Basic header.
_ENCODER_INPUT = (
    r"(?:\b(?:echo|printf)\s+(?:-[neE]+\s+)*(?=[^\n|]*\|\s*(?:base64|openssl\s+(?:base64|enc)"
    r"|xxd|basenc|b64))"
    r"|\b(?:b64encode|btoa|encodeToString|encodebytes|base64_encode|Base64\.encode\w*)"
    r"\(\s*b?(?=\\*['\"]))" + _VALUE
)


def _encoder_input(m: Match[str]) -> str:
    """Masked when it is a ``user:password`` pair or looks generated ("hello" is not)."""
    value = m.group("v1") or m.group("v2") or m.group("v3") or ""
    user, colon, secret = value.partition(":")
    if (colon and user and secret and " " not in value) or looks_random(value):
        return _masked_value("credential")(m)
    return m.group(0)


# Encoded forms: a base64, hex or %-encoded run that decodes to text the rules mask,
# or to a ``user:password`` pair (a Basic credential). Digests, ids and binary decode to
# bytes that are no text, and are left alone.
_B64_RUN = r"(?<![A-Za-z0-9+/=_-])(?P<v>[A-Za-z0-9+/_-]{20,}={0,2})(?![A-Za-z0-9+/=_-])"
_HEX_RUN = r"(?<![A-Za-z0-9])(?P<v>(?:[0-9a-fA-F]{2}){12,})(?![A-Za-z0-9])"
# (never from the letter of a JSON escape: masked from the `n` of a `\n`, the text
# would be JSON no more)
_PCT_RUN = r"(?<!\\)(?P<v>[^\s'\"<>\\]*%[0-9A-Fa-f]{2}[^\s'\"<>\\]*)"
_decoding = 0  # how deep a decoded text is being masked (an encoding inside an encoding)


def _as_text(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if not text or not text.strip() or not all(c.isprintable() or c in "\t\r\n" for c in text):
        return None
    return text


def _pair(text: str) -> bool:
    """``user:password``, the pair a Basic header encodes (not a URL, a time, a path)."""
    user, colon, secret = text.strip().partition(":")
    return (
        bool(colon)
        and 0 < len(user) <= 64
        and all(c.isalnum() or c in "._@+-" for c in user)
        and 3 <= len(secret) <= 256
        and not any(c.isspace() for c in secret)
        and not secret.startswith("/")
        and not user.isdigit()
    )


def _hides_secret(text: str, pair: bool = True) -> bool:
    """Whether a decoded text is, or holds, a secret."""
    global _decoding
    if pair and _pair(text):
        return True
    if _decoding >= 2:
        return False
    _decoding += 1
    try:
        return _mask(text) != text
    finally:
        _decoding -= 1


# The first character of each group of four in the base64 of ASCII text: its first byte
# is below 0x80, so its top six bits are below 32.
_B64_TEXT_LEADS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdef")


def _b64_decoded(m: Match[str]) -> str:
    value = m.group("v")
    body = value.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1 or not _B64_TEXT_LEADS.issuperset(body[::4]):
        return m.group(0)  # no base64 of text (a word, a name of code, binary data)
    import binascii

    try:
        data = binascii.a2b_base64(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        return m.group(0)
    text = _as_text(data)
    if text is None or not _hides_secret(text):
        return m.group(0)
    return PREFIX + "encoded]"


def _hex_decoded(m: Match[str]) -> str:
    value = m.group("v")
    if not set(value[::2]) <= set("234567"):
        return m.group(0)  # the hex of ASCII text has 2-7 first in each pair: a digest has not
    try:
        text = _as_text(bytes.fromhex(value))
    except ValueError:
        return m.group(0)
    if text is None or not _hides_secret(text):
        return m.group(0)
    return PREFIX + "encoded]"


def _pct_decoded(m: Match[str]) -> str:
    value = m.group("v")
    out = bytearray()
    i = 0
    raw = value.encode("utf-8", "surrogatepass")
    while i < len(raw):
        if raw[i] == 0x25 and i + 2 < len(raw) + 0 and i + 3 <= len(raw):
            try:
                out.append(int(raw[i + 1 : i + 3], 16))
                i += 3
                continue
            except ValueError:
                pass
        out.append(raw[i])
        i += 1
    decoded = out.decode("utf-8", "replace")
    if decoded == value or _decoding >= 2 or PREFIX in value or not decoded.isprintable():
        return m.group(0)
    if not _hides_secret(decoded, pair=False):
        return m.group(0)
    return PREFIX + "encoded]"


# A provider's token written in groups ("ghp_AbC1 2dEf 3GhI …"), joined where its rule
# would know it: the groups after the prefix each look generated (a digit or a capital).
_SPLIT_TOKEN = (
    _LB + r"(?P<v>(?:gh[pousr]_|github_pat_|glpat-|sk-ant-|sk-proj-|sk-|xox[abposr]-|AKIA|ASIA"
    r"|AIza|[sr]k_live_|npm_|pypi-|hf_|SG\.|xapp-|whsec_|dckr_pat_|hvs\.)"
    r"[A-Za-z0-9_-]*(?:(?:[ \t]{1,2}|\r?\n[ \t]*)(?:(?=[A-Za-z0-9_-]*[0-9A-Z])[A-Za-z0-9_-]{3,}"
    r"|[a-z]{8,}(?![A-Za-z0-9_-])))"
    r"{1,12})"
)
_SPLIT_MARKERS = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "xox", "akia",
    "asia", "aiza", "k_live_", "npm_", "pypi-", "hf_", "sg.", "xapp-", "whsec_", "dckr_pat_",
    "hvs.",
)  # fmt: skip


def _split_token(m: Match[str]) -> str:
    joined = "".join(m.group("v").split())
    masked = _mask(joined) if _decoding < 2 else joined
    if masked == joined or not masked.startswith(PREFIX):
        return m.group(0)
    return masked


# A provider's token whose head its rule masked alone ("sk-proj-AbC1… 2dEf…": the rule
# took the head for the whole): the groups after the mask that look generated (a digit
# and a letter, or a long mixed-case run) are its tail.
_CONTINUED = (
    r"\[REDACTED:[a-z0-9-]*(?:key|token)\](?P<rest>(?:[ \t]{1,2}[A-Za-z0-9_-]{4,}(?![^\s]))+)"
)


def _continues(group: str) -> bool:
    if any(c.isdigit() for c in group) and any(c.isalpha() for c in group):
        return True
    return len(group) >= 10 and any(c.isupper() for c in group[1:]) and not group.isupper()


def _continued(m: Match[str]) -> str:
    rest = m.group("rest")
    groups = rest.split()
    n = 0
    while n < len(groups) and _continues(groups[n]):
        n += 1
    if not n:
        return m.group(0)
    head = m.group(0)[: m.start("rest") - m.start(0)]
    lead = rest[: len(rest) - len(rest.lstrip())]
    end = len(lead)
    for group in groups[:n]:
        end = rest.index(group, end) + len(group)
    return head + lead + PREFIX + "api-token]" + rest[end:]


# More providers' prefixes, each with a body of its own shape (hex, short, dashed): the
# long random ones are found by _ENTROPY_RUN anyway.
_MORE_TOKENS = (
    _LB + r"(?:gsk_|r8_|pplx-|xai-|tvly-|lsv2_(?:pt|sk)_|pcsk_|ATATT3x|ATCTT3x|figd_"
    r"|pat-(?:na|eu)\d-|shippo_(?:live|test)_|rzp_(?:live|test)_|FLWSECK(?:_TEST)?-|xkeysib-"
    r"|nvapi-|AKCp|phx_|sbp_|sb_secret_|fm2_|fo1_|bkua_|nfp_|rdme_|dt0c01\."
    r"|CLOJARS_|EZAK|ATBB|BBDC-|sgp_|apify_api_|LTAI|AKID|GOOG1)[A-Za-z0-9_.=+/-]{14,}" + _RB
)
_MORE_MARKERS = (
    "gsk_", "r8_", "pplx-", "xai-", "tvly-", "lsv2_", "pcsk_", "att3x", "figd_", "pat-na",
    "pat-eu", "shippo_", "rzp_", "flwseck", "xkeysib-", "nvapi-", "akcp", "phx_", "sbp_",
    "sb_secret_", "fm2_", "fo1_", "bkua_", "nfp_", "rdme_", "dt0c01.",
    "clojars_", "ezak", "atbb", "bbdc-", "sgp_", "apify_api_", "ltai", "akid", "goog1",
)  # fmt: skip

# Key material alone: a long run of base64/base62 that mixes cases and digits like
# random bytes do, never a name of code (CamelCase, snake_case), a path or a digest.
_ENTROPY_RUN = r"(?<![A-Za-z0-9+/_=.:@%-])(?P<v>[A-Za-z0-9+/_-]{32,}={0,2})(?![A-Za-z0-9+/_=@-])"
_DIGEST_CONTEXT = ("sha1", "sha256", "sha384", "sha512", "integrity", "checksum", "digest",
                   "hash", "h1:", "etag", "nonce-", "?b?", "?q?")  # fmt: skip


def random_run(value: str) -> bool:
    """Whether a run of 32+ token characters looks like random bytes: capitals, small
    letters and digits, changing class often, with many distinct characters; not hex (a
    digest), not a name of code (its words: runs of small letters, "getUserAccount2")."""
    body = value.rstrip("=")
    if not body.strip("0123456789abcdefABCDEF-"):
        return False  # hex, a UUID: a digest or an id
    if body[:3].lower() in ("sha", "md5"):
        return False  # sha512-… (a lock file's integrity)
    upper = lower = digit = changes = letters = worded = run = 0
    prev = ""
    for c in body:
        if c.islower():
            cls = "l"
            lower += 1
            run += 1
        else:
            if run >= 3:
                worded += run  # the small letters of a word ("ength" of "Length")
            run = 0
            if c.isupper():
                cls = "u"
                upper += 1
            elif c.isdigit():
                cls = "d"
                digit += 1
            else:
                prev = ""
                continue
        letters += 1
        if prev and cls != prev:
            changes += 1
        prev = cls
    if run >= 3:
        worded += run
    if not (upper and lower and digit) or letters < 28:
        return False
    if len(set(body)) < min(len(body), 64) * 0.4:
        return False
    # Random characters change class every 1.6 characters or so, and few of them make
    # runs of small letters; the words of a name of code do. (Tuned on 20,000 random
    # runs, 0.2% missed, and the 3,600 runs of 32+ characters in the standard library,
    # the installed packages and the recorded fixtures: none taken but random data.)
    return changes >= letters * 0.33 and letters <= (changes + 1) * 2.8 and worded < letters * 0.6


def _id_path(value: str) -> bool:
    """A path whose parts are names and hex ids (``CHAT_LOGS/0d98b9aa-bbbc-…-d4a3e0e5e710``,
    ``Archives/<uuid>``): a file's name, however random the id in it. The parts of a
    base64 value split at its ``/`` are random themselves, not names."""
    parts = value.split("/")
    return len(parts) > 1 and all(
        not p or _plain_name(p) or not p.strip("0123456789abcdefABCDEF-") for p in parts
    )


_PUBLIC_LABELS = ("public key", "publickey", "pubkey", "pub key")


def _entropy_run(m: Match[str]) -> str:
    value = m.group("v")
    if not random_run(value) or _id_path(value) or public_key_value(value):
        return m.group(0)  # (an OpenSSH public key's body names its type: AAAAC3NzaC1l…)
    text, start = m.string, m.start("v")
    line_start = text.rfind("\n", 0, start) + 1
    before = text[max(line_start, start - 40) : start].lower()
    if any(word in before for word in _DIGEST_CONTEXT):
        return m.group(0)
    if before.rstrip(" \t\"'`*:=").replace("_", " ").endswith(_PUBLIC_LABELS):
        return m.group(0)  # "public key: <base64>" (wg show, a key pair's listing)
    # A value under a name of an identifier (request_id: …, "cursor": "…") is one.
    name = before.rstrip(" \t\"'").rstrip(":=").rstrip(" \t\"'")
    k = len(name)
    while k > 0 and (name[k - 1].isalnum() or name[k - 1] in "_.-"):
        k -= 1
    if name[k:] and name[k:].rstrip("_-.").endswith(_DIGEST_NAMES):
        return m.group(0)
    if _in_public_block(text, start):
        return m.group(0)  # a certificate's or a public key's body
    return PREFIX + "key-material]"


# What a public key is written after: its body is random, and no secret.
_PUBLIC_KEY_TYPES = ("ssh-rsa", "ssh-ed25519", "ssh-dss", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-")


def _in_public_block(text: str, at: int) -> bool:
    """Whether ``at`` lies in a PEM block that is not a private or secret key (a
    certificate, a public key), or right after a public key's type (ssh-ed25519 …)."""
    if text[max(0, at - 30) : at].rstrip().endswith(_PUBLIC_KEY_TYPES):
        return True
    begin = text.rfind("-----BEGIN ", 0, at)
    if begin >= 0:
        end = text.find("-----END", begin)
        if end < 0 or end > at:  # inside that block
            label = text[begin + 11 : text.find("-----", begin + 11)]
            return not any(word in label for word in _SECRET_LABELS)
    # A body whose BEGIN line was cut: the END line after it says what it was.
    end = text.find("-----END", at)
    if end < 0 or 0 <= text.find("-----BEGIN", at) < end:
        return False
    close = text.find("-----", end + 8)
    label = text[end + 8 : close if close >= 0 else len(text)]
    return len(label) > 40 or not any(word in label for word in _SECRET_LABELS)


_SECRET_LABELS = ("PRIVATE", "SECRET", "Static", "STATIC")


# A PEM body without its BEGIN/END lines: two or more lines of 64 base64 characters
# and the shorter line that ends it.
_PEM_BODY = r"(?m)(?:^[A-Za-z0-9+/]{60,80}\r?\n){2,}^[A-Za-z0-9+/]{0,80}={0,2}\r?$"


# A crypt(3) hash (/etc/shadow, .htpasswd, useradd -p): the password's stand-in.
_CRYPT_HASH = (
    r"(?<![\w$])\$(?:(?:1|5|6|md5|sha1|apr1)\\?\$(?:rounds=\d+\\?\$)?[./A-Za-z0-9]{1,16}\\?\$"
    r"[./A-Za-z0-9]{8,}|2[abxy]?\\?\$\d\d\\?\$[./A-Za-z0-9]{53}|y\\?\$[./A-Za-z0-9]+\\?\$[./A-Za-z0-9]+\\?\$"
    r"[./A-Za-z0-9]{8,}|argon2(?:id|i|d)\\?\$v=\d+\\?\$[^\s$\\]+\\?\$[^\s$\\]+\\?\$[A-Za-z0-9+/]{8,}"
    r"|pbkdf2[-_]sha\d+\\?\$\d+\\?\$[^\s$\\]+\\?\$[^\s$\\]+)"
)
_CRYPT_MARKERS: tuple[str, ...] = ("$1$", "$2$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$y$", "$md5",
                  "$apr1$", "$argon2", "$sha1$", "$pbkdf2")  # fmt: skip
# A hash written in a shell or SQL string has its "$"s escaped (``\$2b\$10\$…``).
_CRYPT_MARKERS += tuple(m[0] + m[1:].replace("$", "\\$") for m in _CRYPT_MARKERS if "$" in m[1:])

# Sentences that set a password: a verb that sets it, its name, then "to X" / "-> X"
# ("reset db pass to X", "rotate staging pw -> X", "change it from X to Y", "password
# changed to X"); and the value before its name: "X is the new password".
_SET_VERBS = (
    r"(?:set|sets|reset|resets|change|changed|changes|changing|update|updated|updates|rotate"
    r"|rotated|rotates|switch|switched|move|moved|bump|bumped|renew|renewed|regenerate"
    r"|regenerated|replace|replaced|swap|swapped|generate|generated|assign|assigned)"
)
_SET_NAMES = r"(?:password|passphrase|passcode|passwd|pass|pwd|pw|pin|secret|token)"
_SET_VALUE = r"[ \t]*[\"'`\u201c\u2018]?(?P<{}>(?!\[REDACTED:)[^\s\"'`\u201d\u2019<>\\]+)"
_SET_TO = (
    r"(?i)(?:\b" + _SET_VERBS + r"\b[^\n]{0,40}?\b" + _SET_NAMES + r"\b[^\n]{0,24}?"
    r"|\b"
    + _SET_NAMES
    + r"[ \t]+(?:(?:was|is|has[ \t]+been|got|gets)[ \t]+)?"
    + _SET_VERBS
    + r"|\b"
    + _SET_NAMES
    + r"(?=[ \t]*(?:->|\u2192))"  # "password -> X"
    + r")(?:[ \t]+from"
    + _SET_VALUE.format("old")
    + r")?"
    r"(?:[ \t]+to|[ \t]*->|[ \t]*\u2192)(?![\w-])" + _SET_VALUE.format("v")
)


def _set_to(m: Match[str]) -> str:
    whole, base = m.group(0), m.start(0)
    out = whole
    for group in ("v", "old"):
        value = m.group(group)
        if value is None:
            continue
        core = value.rstrip(_TRAIL + "!?)]}")
        # A value, not a word: "pass the node to every child", "token set to None".
        if not _worded(core) or core.isalpha() or len(core) < 4 or core[0] in "/{<(":
            continue
        if core[0] in "$%" and (reference(core) or not looks_random(core[1:])):
            continue  # $NEW_PASS, %PW%; "%C3wd+jB4" is a password
        if core[0] in "~." and not looks_random(core):
            continue  # a path (~/x, ./x, .env); ".Y3vlM38" is a password
        start = m.start(group) - base
        out = out[:start] + PREFIX + "credential]" + out[start + len(core) :]
    return out


_VALUE_FIRST = (
    r"(?i)(?<![\w-])(?P<v>[^\s\"'`<>\\]{4,})[ \t]+(?:(?:is|was|will[ \t]+be|becomes)[ \t]+"
    r"(?:the|my|our|your|its|their|his|her)|as(?:[ \t]+(?:the|my|our|your|a|an))?)[ \t]+"
    r"(?:(?:new|old|current|actual|real|staging"
    r"|prod|production|db|database|admin|root|wifi|vpn|ssh|master|default)[ \t]+){0,3}"
    r"(?:password|passphrase|passcode|pw|pin|secret|token|api[ \t]+key)\b"
)


def _value_first(m: Match[str]) -> str:
    core = m.group("v").strip(_STRIP)
    low = core.lower()
    if not _worded(core) or low in _NOT_A_VALUE or low in _FOREIGN_WORDS or low in _PROSE_KWS:
        return m.group(0)
    if not looks_random(core) and (core.isalpha() or is_secret_name(core)):
        return m.group(0)  # a word ("this", "it", "Password"): a value is no plain word
    start = m.start("v") - m.start(0)
    whole = m.group(0)
    at = whole.find(core, start)
    return whole[:at] + PREFIX + "credential]" + whole[at + len(core) :]


# A search for a secret: a grep, rg, git log -S … whose line names a password (in its
# pattern, its comment) has its generated-looking words masked: what it searches for.
_SEARCH_LINE = (
    r"(?i)\b(?:[ez]?grep|rg|ag|ack|findstr|select-string|sls|git[ \t]+(?:grep|log))\b[^\n]*"
)
_SEARCH_MARKERS = ("grep", "rg ", "ag ", "ack ", "findstr", "select-string", "sls ", "git log")
_SEARCH_NAMES = ("pass", "pwd", "pw", "secret", "token", "cred", "api_key", "apikey", "auth")
_SEARCH_SPLIT = str.maketrans({c: " " for c in "'\"=:()[]{}|<>,;`"})
_REGEX_LEADS = ("\\s*", "\\s+", "\\s?", "\\b", "\\W*", ".*", "?")
_REGEX_SPLIT = str.maketrans({c: " " for c in "'\"()[]{}|<>,;`?"})


def _alternation(piece: str) -> bool:
    """A regex alternation of names or words (``PASSED|FAILED``, ``error\\|warn``,
    ``MinimumPasswordLength|PasswordHistorySize``): each choice a plain word or a name."""
    choices = piece.replace("\\|", "|").split("|")
    choices = [c.strip("^$!") for c in choices]  # anchors, a negation: "!ADMIN\\|^admin$"
    return len(choices) > 1 and all(
        c.replace(".", "_").isidentifier()
        and (_plain_name(c) or camel_name(c) or not looks_random(c))
        for c in choices
        if c
    )


def _command_end(line: str) -> int:
    """Where the command that starts ``line`` ends: at a ``;``, ``&`` or ``|`` outside
    quotes (``grep -q "^PASS"; then pass=$((pass+1))``: what follows is another
    command, no pattern searched for). Quotes are read as written, escaped or not."""
    quote = ""
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in ";&|" and i and line[i - 1] != "\\":
            return i
    return len(line)


def _search_line(m: Match[str]) -> str:
    whole = m.group(0)
    end = _command_end(whole)
    line, rest = whole[:end], whole[end:]
    if not any(name in line.lower() for name in _SEARCH_NAMES):
        return whole
    # Each word as written (quotes off), then its pieces between a pattern's syntax.
    words = {w.strip("'\"`\\;") for w in line.split()} | set(line.translate(_SEARCH_SPLIT).split())
    for lead in _REGEX_LEADS[:3]:  # "pass\\s*=\\s*X=Y": the value keeps its "="
        line_words = line.replace(lead, " ").translate(_REGEX_SPLIT).split()
        words |= {w.strip("=") for w in line_words}
    found = set()
    for piece in words:
        core = piece
        while core.startswith(_REGEX_LEADS):  # a pattern's own syntax before the value
            core = core[1:] if core[0] == "?" else core[2:]
        core = core.strip(".")
        name = core.rstrip("\\").strip("^$!")
        if _alternation(core) or _plain_name(name) or camel_name(name):
            continue  # "PASSED|FAILED", "NAME\\|": a pattern's words
        if _id_path(core):
            continue  # src/app.py: a path
        if core[:1] != "-" and PREFIX[1:] not in core and looks_random(core):
            found.add(core)  # (a mask's inside, split at its brackets, is no value)
    for core in sorted(found, key=len, reverse=True):
        line = line.replace(core, PREFIX + "credential]")
    return line + rest


# The prose rule in other languages: the word for password (or key, token) and what
# links it to its value ("das Passwort ist X", "パスワードは「X」", "пароль: X").
_FOREIGN_STRONG = (
    "passwort", "kennwort", "mot de passe", "mdp", "contraseña", "contrasena", "clave de acceso",
    "senha", "palavra-passe", "palavra passe", "parola d'ordine", "wachtwoord", "lösenord",
    "losenord", "adgangskode", "passord", "salasana", "hasło", "haslo", "heslo", "jelszó",
    "jelszo", "şifre", "sifre", "parola", "пароль", "пароля", "密码", "密碼", "口令",
    "パスワード", "暗証番号", "비밀번호", "암호", "كلمة المرور", "كلمة السر", "סיסמה", "סיסמא",
    "mật khẩu", "kata sandi", "kata laluan", "รหัสผ่าน", "κωδικός", "κωδικος", "гасло",
    "הסיסמה", "password", "पासवर्ड", "geslo", "رمز عبور", "kodeord", "lozinka", "lozinku",
    "parool", "slaptažodis", "contrasenya", "pasahitza", "parolă",
)  # fmt: skip
_FOREIGN_WEAK = (
    "schlüssel", "api-schlüssel", "clé", "clé api", "clave", "chave", "jeton", "токен", "ключ",
    "トークン", "令牌", "密钥", "秘密鍵", "apiキー", "토큰", "sleutel", "nyckel", "nøgle",
    "avain", "klucz", "token",
)  # fmt: skip
_FOREIGN_LINKS = (
    "ist", "lautet", "war", "wäre", "est", "était", "es", "era", "é", "è", "is", "är", "er",
    "on", "to", "jest", "je", "это", "—", "–", "-", ":", "：", "=", "は", "是", "为", "為",
    "는", "은", "이", "هي", "היא", "là", "adalah", "ialah", "คือ", "είναι", "este", "será",
    "sera", "sarà", "wordt", "blir", "bliver", "olacak", "будет", "も", "を", "를", "을",
    "改成", "改为", "改為", "设为", "設為", "设置为", "auf", "zu", "en", "a", "naar", "till",
    "til", "na", "на", "है", "था", "است", "هو", "ni", "ay",
)  # fmt: skip
_FOREIGN_WORDS = frozenset(
    [
        "falsch",
        "richtig",
        "korrekt",
        "leer",
        "abgelaufen",
        "geändert",
        "zurückgesetzt",
        "ungültig",
        "geheim",
        "incorrect",
        "incorrecte",
        "correcte",
        "vide",
        "expiré",
        "expirée",
        "changé",
        "changée",
        "invalide",
        "secret",
        "incorrecta",
        "incorrecto",
        "correcta",
        "vacía",
        "vacio",
        "cambiada",
        "caducada",
        "inválida",
        "secreta",
        "errada",
        "errado",
        "incorreta",
        "vazia",
        "alterada",
        "expirada",
        "inválida",
        "sbagliata",
        "errata",
        "corretta",
        "vuota",
        "cambiata",
        "scaduta",
        "onjuist",
        "fout",
        "juist",
        "leeg",
        "verlopen",
        "gewijzigd",
        "fel",
        "rätt",
        "tom",
        "utgånget",
        "forkert",
        "rigtig",
        "udløbet",
        "feil",
        "riktig",
        "väärä",
        "oikea",
        "tyhjä",
        "błędne",
        "nieprawidłowe",
        "poprawne",
        "puste",
        "špatné",
        "správné",
        "prázdné",
        "yanlış",
        "doğru",
        "boş",
        "неверный",
        "неправильный",
        "правильный",
        "пустой",
        "неверен",
    ]
)
_FOREIGN_PATTERN = (
    # Not inside a Latin word; after any other letter (数据库密码: the database password).
    r"(?i)(?<![A-Za-z0-9_-])(?P<kw>"
    + "|".join(
        sorted(
            (w.replace(" ", r"[ \t]+") for w in _FOREIGN_STRONG + _FOREIGN_WEAK),
            key=len,
            reverse=True,
        )
    )
    + r")(?:[a-zäöüéèêàáíóúñçøåæłśźżćńęąşğıăâîșțšžčėįųūа-яё]{0,4})"  # inflections: Passwortes
    # A link word stands alone: never the tail of the value ("X3kA!" is no "a" link).
    r"(?P<link>(?:[ \t]+[^\s:：=]{1,20}){0,3}?[ \t]*(?P<conn>(?<![^\s])(?:"
    + "|".join(
        sorted((w for w in _FOREIGN_LINKS if w.isalpha() and w.isascii()), key=len, reverse=True)
    )
    + r")(?![\w])|(?<![^\s])[—–-](?!\S)|"
    + "|".join(
        sorted(
            (w for w in _FOREIGN_LINKS if not (w.isalpha() and w.isascii()) and w not in "—–-"),
            key=len,
            reverse=True,
        )
    )
    + r")[ \t]*:?|[ \t]+)[ \t]*[\"'`\u201c\u2018\u00ab\u300c\u300e\uff08(]?"
    r"(?P<v>(?!\[REDACTED:)[^\s\"'`\u201d\u2019\u00bb\u300d\u300f\uff09)<>\\\u3000-\u9fff"
    r"\uac00-\ud7af\uff00-\uffef]+)"
)


# -- their prechecks (as above: conservative, and no ``re``) --

# Runs of base64 characters: [A-Za-z0-9+/_-] → "a", anything else " " (one byte each).
_B64_SHAPE = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+/_-") else 0x20
    for b in range(256)
)  # fmt: skip
_ALNUM_SHAPE = bytes(0x61 if chr(b).isascii() and chr(b).isalnum() else 0x20 for b in range(256))


_runs_of: tuple[str, list[str]] | None = None  # the last text's base64 runs of 20+


def _runs(text: str, shortest: int, table: bytes = _B64_SHAPE) -> list[str]:
    """The maximal runs of ``table``'s characters at least ``shortest`` long. (Several
    prechecks ask about one text in turn: its base64 runs are found once.)"""
    global _runs_of
    if table is _B64_SHAPE and shortest >= 20:
        if _runs_of is None or _runs_of[0] is not text:
            _runs_of = (text, _find_runs(text, 20, table))
        return [run for run in _runs_of[1] if len(run) >= shortest]
    return _find_runs(text, shortest, table)


def _find_runs(text: str, shortest: int, table: bytes) -> list[str]:
    shape = text.encode("ascii", "replace").translate(table)
    needle = b"a" * shortest
    found = []
    i = shape.find(needle)
    while i >= 0:
        j = shape.find(b" ", i)
        j = len(shape) if j < 0 else j
        found.append(text[i:j])
        i = shape.find(needle, j)
    return found


def _entropy_ready(text: str, low: str) -> bool:
    return any(random_run(run) for run in _runs(text, 32))


def _b64_ready(text: str, low: str) -> bool:
    for run in _runs(text, 20):
        body = run.replace("-", "+").replace("_", "/")
        if len(body) % 4 != 1 and _B64_TEXT_LEADS.issuperset(body[::4]):
            return True
    return False


def _hex_ready(text: str, low: str) -> bool:
    for run in _runs(text, 24, _ALNUM_SHAPE):
        if (
            len(run) % 2 == 0
            and not run.strip("0123456789abcdefABCDEF")
            and set(run[::2]) <= set("234567")
        ):
            return True
    return False


def _pct_ready(text: str, low: str) -> bool:
    i = text.find("%")
    while i >= 0:
        pair = text[i + 1 : i + 3]
        if len(pair) == 2 and not pair.strip("0123456789abcdefABCDEF"):
            return True
        i = text.find("%", i + 1)
    return False


def _pem_body(m: Match[str]) -> str:
    if _in_public_block(m.string, m.start()):
        return m.group(0)
    return PREFIX + "private-key]"


_PEM_SHAPE = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "+/") else 0x20
    for b in range(256)
)  # fmt: skip


def _pem_ready(text: str, low: str) -> bool:
    """Two lines that are nothing but 60 to 80 base64 characters (a path of 60 is none)."""
    if text.count("\n") < 2:
        return False
    shape = text.encode("ascii", "replace").translate(_PEM_SHAPE)
    lines = 0
    i = shape.find(b"a" * 60)
    while i >= 0:
        j = shape.find(b" ", i)
        j = len(shape) if j < 0 else j
        if j - i <= 80 and (i == 0 or text[i - 1] == "\n") and text[j : j + 1] in ("\n", "\r"):
            lines += 1
            if lines == 2:
                return True
        i = shape.find(b"a" * 60, j)
    return False


def _sql_ready(text: str, low: str) -> bool:
    if "identified" in low:
        return True
    n = len(low)
    i = low.find("password")
    while i >= 0:
        k = i + 8
        while k < n and low[k] in " \t\r\n":
            k += 1
        if k < n and low[k] in "=(":
            k += 1
            while k < n and low[k] in " \t\r\n":
                k += 1
        if k < n and (low[k] in "'\"\\" or low.startswith("for", k)):
            return True
        i = low.find("password", i + 1)
    return False


def _word_at(low: str, word: str) -> bool:
    """``word`` where a word starts (not inside another: "performance" holds no rman)."""
    i = low.find(word)
    while i >= 0:
        if i == 0 or not low[i - 1].isalnum():
            return True
        i = low.find(word, i + 1)
    return False


_ADMIN_COMMANDS = (
    "useradd", "usermod", "adduser", "net ", "mysqladmin", "htpasswd", "rabbitmq",
    "mosquitto_passwd", "set-initial-password", "convertto-securestring", "openssl",
    "psexec", "paexec", "schtasks", "ldappasswd", "lftp", "influx", "snmp", "sqlplus",
    "sqlldr", "expdp", "impdp", "rman", "mkpasswd", "requirepass", "masterauth",
    "changeuserpassword", "crypt",
)  # fmt: skip
_STDIN_WORDS = ("passwd", "kinit", "cryptsetup", "sudo", "openssl", "gpg", "secret")


def _admin_ready(text: str, low: str) -> bool:
    stdin = ("|" in text and ("echo" in low or "printf" in low)) or "<<<" in text
    if stdin and any(word in low for word in _STDIN_WORDS):
        return True
    return any(_word_at(low, word) for word in _ADMIN_COMMANDS)


def _expect_ready(text: str, low: str) -> bool:
    return "\n" in text and "assword" in low


_ENCODER_CALLS = ("b64encode(", "btoa(", "encodetostring(", "encodebytes(", "base64_encode(",
                  "base64.encode")  # fmt: skip


def _encoder_ready(text: str, low: str) -> bool:
    if any(call in low for call in _ENCODER_CALLS):
        return True
    return (
        "|" in text
        and ("echo" in low or "printf" in low)
        and any(tool in low for tool in ("base64", "openssl", "xxd", "basenc", "b64"))
    )


def _search_ready(text: str, low: str) -> bool:
    return any(name in low for name in _SEARCH_NAMES)


_VF_LINKS = frozenset(("is", "was", "be", "becomes", "as"))


def _value_first_ready(text: str, low: str) -> bool:
    """A link word among the six words before a password word (see _VALUE_FIRST)."""
    for kw in ("password", "passphrase", "passcode", "pw", "pin", "secret", "token", "api"):
        i = low.find(kw)
        while i >= 0:
            if _VF_LINKS.intersection(low[max(0, i - 160) : i].split()[-6:]):
                return True
            i = low.find(kw, i + 1)
    return False


def _set_ready(text: str, low: str) -> bool:
    """A password word, and "to" or an arrow after it (see _SET_TO)."""
    for kw in ("pass", "pwd", "pw", "pin", "secret", "token"):
        i = low.find(kw)
        while i >= 0:
            after = low[i : i + 80]
            if " to" in after or "->" in after or "\u2192" in after or "\tto" in after:
                return True
            i = low.find(kw, i + 1)
    return False


# Links of the languages that borrow "password" and "token" (not English words).
_BORROWED_LINKS = ("est", "ist", "es", "era", "lautet", "war", "wäre", "était", "är", "jest",
                   "este", "será", "sera", "sarà", "wordt", "blir", "bliver", "olacak", "naar")  # fmt: skip


def _foreign_ready(text: str, low: str) -> bool:
    for marker in _FOREIGN_MARKERS:
        if marker in low and (
            marker not in ("password", "token")
            or not low.isascii()
            or any(f" {w} " in low for w in _BORROWED_LINKS)
        ):
            return True
    return False


_FOREIGN_STRONG_SET = frozenset(w for w in _FOREIGN_STRONG if w != "parola")
_ENGLISH_LINKS = frozenset(("is", "to", "on", "a", "en", "-", "—", "–", ":", "=", "：", "na"))


def _foreign(m: Match[str]) -> str:
    """Like :func:`_prose`: a password word linked to its value masks any value but a
    word that describes it; a key or token word, or no link, only a generated one."""
    value = m.group("v")
    core = value.rstrip(_TRAIL + "!?)]}")
    if not _worded(core):
        return m.group(0)
    kw = " ".join(m.group("kw").lower().split())
    conn = m.group("conn")
    linked = conn is not None
    if kw in ("password", "token") and (not linked or conn.lower() in _ENGLISH_LINKS):
        return m.group(0)  # English: the prose rule's (Italian: "la password è X")
    if linked and kw in _FOREIGN_STRONG_SET:
        if core.lower() in _NOT_A_VALUE or core.lower() in _FOREIGN_WORDS:
            return m.group(0)
    elif not looks_random(core):
        return m.group(0)
    start = m.start("v") - m.start(0)
    whole = m.group(0)
    if linked:  # a word glued to the link is the head of the value ("пароль X#=Y")
        kw_end, conn_start = m.end("kw") - m.start(0), m.start("conn") - m.start(0)
        segment = whole[kw_end:conn_start]
        if segment.strip() and not segment[-1].isspace() and whole[conn_start] in "=:：":
            whole = whole[:kw_end] + _random_words(segment, True) + whole[conn_start:]
            start += len(whole) - len(m.group(0))
    return whole[:start] + PREFIX + "credential]" + whole[start + len(core) :]


_FOREIGN_MARKERS = tuple(sorted({w.split()[0] for w in _FOREIGN_STRONG + _FOREIGN_WEAK}))

# .pgpass: hostname:port:database:username:password, one a line.
_PGPASS = (
    # (Not from a time of day: a log's "16:41:50.104][run.sh:2903:setup]" has four colons.)
    r"(?m)(?:^|(?<=[ \t]))(?![0-2]?\d:[0-5]\d:[0-5]\d)[^:\s#]+:(?:\d{1,5}|\*):[^:\s]+:[^:\s]+:"
    r"(?P<v>(?!\[REDACTED:)(?:[^\s:\\]|\\.)+)(?=\s|$)"
)


def _pgpass_ready(text: str, low: str) -> bool:
    if text.count(":") < 4:
        return False
    for line in text.split("\n"):
        if line.count(":") < 4:
            continue
        words = line.split()
        for k in range(len(words)):
            rest = " ".join(words[k:])
            if rest.count(":") < 4:
                break
            host, port, db, user, _rest = rest.split(":", 4)
            if (
                host and "#" not in host and not any(c.isspace() for c in host)
                and (port == "*" or (port.isdigit() and len(port) <= 5))
                and db and user and not any(c.isspace() for c in db + user)
            ):  # fmt: skip
                return True
    return False


# A line that speaks of a password, a login or credentials ("login with admin / X",
# "log in as ops:X", "the new one is X (the db password)", "rotate admin password (X)")
# has each word shaped like a generated password masked: letters and digits with a
# symbol, or mixed case with digits that changes kind of character often (random, not
# a name of code like "base64Encode"). Near the word only (a window of the line), and
# never a name holding the word itself, a path, a URL, a reference or code.
_PW_LINES = "\x00password-lines"
_PW_WORDS = ("password", "passwd", "passphrase", "pwd", "pw", "pass", "creds", "credentials",
             "login", "log in", "logon", "sign in", "signin")  # fmt: skip
_PW_SHORT = frozenset(("pass", "pw", "pwd", "login", "logon", "signin", "log in", "sign in"))
_PW_SYMBOLS = frozenset("!@#$%^&*+=~?")
_PW_SPLIT = str.maketrans({c: " " for c in "\"'`()[]{}<>,;|\\"})
_PW_BEFORE, _PW_AFTER = 160, 200


def _changes(v: str) -> int:
    """How often ``v`` changes kind of character (upper, lower, digit, other)."""
    changes, last = 0, ""
    for c in v:
        kind = "u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s"
        changes += kind != last and last != ""
        last = kind
    return changes


def reference(v: str) -> bool:
    """``$NAME``, ``${NAME}``, ``$(cmd)``, ``%NAME%``: what stands for a value, not one."""
    if v[:2] in ("${", "$(") or (v[:1] == "%" and v[-1:] == "%" and len(v) > 2):
        return True
    name = v[1:].replace("_", "a")
    return v[:1] == "$" and name[:1].isalpha() and name.isalnum() and name.isascii()


def _header_name(v: str) -> bool:
    """Capitalised words joined by hyphens (``X-Amz-Security-Token``,
    ``X-Amz-S3session-Token``): a header's name. Two of them words of three letters or
    more, at most one with a digit: random characters between hyphens rarely are."""
    parts = v.split("-")
    if len(parts) < 2 or sum(not p.isalpha() for p in parts) > 1:
        return False
    return sum(len(p) >= 3 and p.isalpha() for p in parts) >= 2 and all(
        p.isalnum() and p[0].isupper() and (p[1:].islower() or p.isupper() or p[1:].isdigit())
        for p in parts
    )


def _pw_shaped(v: str) -> bool:
    """Whether a word is shaped like a generated (or a person's) password."""
    n = len(v)
    if n < 8 or n > 100 or v[0] in "/{<\\" or "://" in v or PREFIX in v or reference(v):
        return False
    body = v.rstrip("=")
    if n >= 12 and len(body) % 4 != 1 and _B64.issuperset(v) and "=" not in body:
        import binascii

        try:
            decoded = _as_text(binascii.a2b_base64(body + "=" * (-len(body) % 4)))
        except (binascii.Error, ValueError):
            decoded = None
        if decoded is not None and decoded != v and _pw_shaped(decoded):
            return True  # a password in base64
    if "@" in v:
        host = v.rsplit("@", 1)[1]
        tld = host.rsplit(".", 1)[-1]
        if (
            "." in host
            and host.islower()
            and tld.isalpha()
            and host.replace(".", "").replace("-", "").isalnum()
        ):
            return False  # an address: user@host.example
    upper = lower = digit = symbol = False
    changes, last = 0, ""
    for c in v:
        kind = "u" if c.isupper() else "l" if c.islower() else "d" if c.isdigit() else "s"
        if kind == "s" and c in _PW_SYMBOLS:
            symbol = True
        upper |= kind == "u"
        lower |= kind == "l"
        digit |= kind == "d"
        changes += kind != last and last != ""
        last = kind
    head, dot, ext = v.rpartition(".")
    if dot and 1 <= len(ext) <= 5 and ext.isalpha() and ext.islower() and head.isidentifier():
        return False  # a file name: PolicyV2.md
    if _header_name(v):
        return False  # X-Amz-Security-Token, Content-Type: a header's name
    if not digit:  # a long run that changes case like random bytes (base64), not CamelCase
        return upper and lower and n >= 16 and changes >= 0.45 * n
    if not (upper or lower):
        return False
    if v[0] == "-" and all(c.isalnum() or c in "-_." for c in v):
        return upper and lower and changes >= 5  # a flag (--no-verify, -Xmx512m) but random
    return symbol or (upper and lower and (changes >= 5 or (n >= 12 and changes >= 4)))


def _pw_windows(low: str) -> list[tuple[int, int]]:
    spans = []
    for word in _PW_WORDS:
        i = low.find(word)
        while i >= 0:
            end = i + len(word)
            # A word of its own; the short ones not inside a name of code either
            # (pass_zero, should_pass, login_required), the long ones may end one
            # (DB_PASSWORD==X, db_credentials: X).
            joins = "_" if word in _PW_SHORT else ""
            if (i == 0 or not (low[i - 1].isalpha() or low[i - 1] in joins)) and (
                end == len(low) or not (low[end].isalnum() or low[end] in joins)
            ):
                start = max(low.rfind("\n", 0, i) + 1, i - _PW_BEFORE)
                stop = low.find("\n", end)
                stop = min(len(low) if stop < 0 else stop, end + _PW_AFTER)
                if low[start:stop].strip() != "pass":  # Python's pass statement
                    spans.append((start, stop))
            i = low.find(word, end)
    return merge_spans(spans)


def _under_id_name(words: list[str], k: int) -> bool:
    """Whether ``words[k]`` is the value of a name of an identifier or a digest before
    it (``"request_id":"req_…"``, ``commit: 3f2a…``): the words of a line split at quotes."""
    j = k - 1
    if j >= 0 and words[j] in (":", "=", ":="):
        j -= 1
    elif j < 0 or words[j][-1:] not in (":", "="):
        return False
    name = words[j].rstrip(":=").lower().rstrip("_-.") if j >= 0 else ""
    return len(name) > 2 and name.endswith(_DIGEST_NAMES) and name.replace("_", "").isalnum()


def _password_lines(text: str) -> tuple[str, int]:
    low = text.lower()
    if len(low) != len(text):
        return text, 0
    found: set[str] = set()
    for start, stop in _pw_windows(low):
        window = text[start:stop]
        at = window.find(PREFIX)
        while at >= 0:  # what is masked already is no word of the line
            end = window.find("]", at)
            window = window[:at] + " " + window[end + 1 :] if end > 0 else window[:at]
            at = window.find(PREFIX)
        for escape in ("\\\\", "\\n", "\\r", "\\t", '\\"', "\\/"):
            window = window.replace(escape, "  ")  # JSON-encoded text: never mask an escape
        words = window.translate(_PW_SPLIT).split()
        for k, word in enumerate(words):
            if word.startswith("**"):
                word = word.strip("*")  # markdown's bold: "**e2e:** 6/6 pass"
            word = word.strip(".:=")
            if _under_id_name(words, k):
                continue  # "request_id":"req_011C…": an identifier, however random
            pieces = word.replace("/", ":").replace("=", ":").split(":")
            # A path, a URL, name=value, a:b: only their parts; a word whose "=" or ":"
            # follows no name is one value ("%fg-7I=*MFsr1").
            whole = len(pieces) == 1 or (
                "/" not in word and (word.count("=") > 1 or not _plain_name(pieces[0].lstrip("-")))
            )
            candidates = {word, *pieces} if whole else set(pieces)
            head, colon, tail = word.partition(":")
            if colon and _plain_name(head):
                candidates.add(tail)  # user:pass, the password holding "=" or ":"
            if len(word) > 3 and word[0] == "s" and word[1] in "/|#,":
                parts = word.split(word[1])  # sed's s/OLD/NEW/: NEW whole
                if len(parts) >= 4:
                    candidates.add(parts[2])
            for piece in candidates:
                if any(w in piece.lower() for w in _PW_WORDS if len(w) > 3):
                    continue  # a name: DB_PASSWORD, getPassword2
                if _pw_shaped(piece):
                    found.add(piece)
    if not found:
        return text, 0
    for value in sorted(found, key=len, reverse=True):
        text = _replace_unescaped(text, value, PREFIX + "password]")
    return text, len(found)


def _replace_unescaped(text: str, value: str, mask: str) -> str:
    """``text`` with ``value`` replaced where no backslash escapes its first character
    (in JSON text, ``\\nX`` is a line break then X: the ``n`` is no part of a value)."""
    out, pos = [], 0
    i = text.find(value)
    while i >= 0:
        slashes = 0
        while i - slashes > 0 and text[i - slashes - 1] == "\\":
            slashes += 1
        if slashes % 2 == 0:
            out.append(text[pos:i] + mask)
            pos = i + len(value)
        i = text.find(value, i + len(value) if pos == i + len(value) else i + 1)
    out.append(text[pos:])
    return "".join(out)


# A call that authenticates with a user and a password as literals: the second argument
# (``HTTPBasicAuth("u", "X")``, ``auth=("u", "X")``, ``NetworkCredential::new("u", "X")``,
# ``ldap.simple_bind_s("cn=admin", "X")``, ``smtp.login("me", "X")``).
_AUTH_CALL = (
    r"(?i)(?:auth|credentials?|login|logon|simple_bind(?:_s)?|bind_s|authenticate)(?:\]?::new)?[ \t]*"
    r"(?:=[ \t]*)?\([ \t]*(?P<q1>\\*[\"'])[^\"'\\\n]*(?P=q1)[ \t]*,[ \t]*"
    r"(?P<q2>\\*[\"'])(?P<v>(?!\[REDACTED:)[^\"'\\\n]+)(?P=q2)"
)
_keep_password = _masked_value("password")


# Kubernetes and ECS environment lists: the name in one entry, the value in the next
# line ("- name: DB_PASSWORD" / "value: X", {"name": "DB_PASSWORD", "value": "X"}).
_ENV_ENTRY = (
    r"(?i)\bname\\*[\"']?[ \t]*[:=][ \t]*\\*[\"']?[\w.-]*?" + _CRED_WORD + r"[\w.-]*?\\*[\"']?"
    r"[ \t]*,?[ \t]*(?:\r?\n[ \t-]*)?\\*[\"']?value\\*[\"']?[ \t]*[:=][ \t]*" + _VALUE
)
_PSK = r"(?i)(?<![\w-])(?:wpa_)?psk\\*[\"']?[ \t]*[=:][ \t]*" + _VALUE


# Multi-line values under a credential's name (found line by line, see _config_blocks):
# a YAML block scalar (``password: |`` and its indented lines), a quoted value that runs
# over lines (.env, shell, TOML's triple quotes), a value continued with a backslash.
_BLOCKS = "\x00config-blocks"


def _blocks_ready(text: str, low: str) -> bool:
    if "\n" not in text or not any(root in low for root in (*_ROOTS, "sig", "cookie")):
        return False
    return any(mark in text for mark in "|>\"'\\")


def _assignment(line: str) -> tuple[str, int] | None:
    """(name, where its value starts) of a line that assigns a credential: ``name: value``,
    ``name = value``, ``export NAME=value``, ``"name": value``, ``- name: value``; the
    name first on the line (in code, ``prompt='Password: '`` assigns no password)."""
    stripped = line.lstrip(" \t")
    if stripped[:1] == "[" and stripped.find("] ", 0, 40) > 0:
        stripped = stripped[stripped.find("] ") + 2 :].lstrip(" \t")  # a log's "[34] "
    bar = stripped.find(" | ", 0, 40)
    if bar > 0 and " " not in stripped[:bar].strip():
        stripped = stripped[bar + 3 :].lstrip(" \t")  # docker compose's "db-1  | "
    for lead in ("export ", "- "):
        if stripped.startswith(lead):
            stripped = stripped[len(lead) :].lstrip(" \t")
    offset = len(line) - len(stripped)
    i = 1 if stripped[:1] in "\"'" else 0
    start = i
    while i < len(stripped) and (stripped[i].isalnum() or stripped[i] in "_.-"):
        i += 1
    name = stripped[start:i]
    if not name or not is_secret_name(name):
        return None
    if start and stripped[i : i + 1] == stripped[0]:
        i += 1  # the closing quote of a JSON key
    while i < len(stripped) and stripped[i] in " \t":
        i += 1
    if stripped[i : i + 1] not in (":", "="):
        return None
    i += 1
    while i < len(stripped) and stripped[i] in " \t":
        i += 1
    return name, offset + i


def _blob_line(line: str) -> bool:
    """A line of a multi-line secret: one word (a key's, a token's lines), not a line of
    configuration (``name: value``, ``[section]``) nor of prose or code."""
    word = line.strip()
    return not word or (
        " " not in word and "\t" not in word and ":" not in word and not word.startswith("[")
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _config_blocks(text: str) -> tuple[str, int]:
    lines = text.split("\n")
    spans: list[tuple[int, int, int]] = []  # (line, start, end) to mask
    n = 0
    while n < len(lines):
        line = lines[n]
        found = _assignment(line) if (":" in line or "=" in line) else None
        if found is None:
            n += 1
            continue
        at = found[1]
        rest = line[at:].rstrip()
        head = rest.split("#", 1)[0].strip()
        if head[:1] in ("|", ">") and not head[1:].strip("+-0123456789"):
            # A YAML block scalar: every line more indented than the key's.
            own = _indent(line)
            k = n + 1
            while k < len(lines) and (not lines[k].strip() or _indent(lines[k]) > own):
                if lines[k].strip():
                    spans.append((k, _indent(lines[k]), len(lines[k].rstrip())))
                k += 1
            n = k
            continue
        quote = rest[:3] if rest[:3] in ('"""', "'''") else rest[:1]
        if quote in ('"', "'", '"""', "'''"):
            body = rest[len(quote) :]
            if quote not in body:  # open here, closed on a later line (or never)
                k = n + 1
                while k < len(lines) and k - n <= 64 and quote not in lines[k]:
                    k += 1
                inner = [
                    body,
                    *lines[n + 1 : k],
                    lines[k][: lines[k].find(quote)] if k < len(lines) else "",
                ]
                if k < len(lines) and k - n <= 64 and all(_blob_line(x) for x in inner):
                    if body.strip():
                        spans.append((n, at + len(quote), at + len(rest)))
                    spans.extend((j, 0, len(lines[j])) for j in range(n + 1, k) if lines[j])
                    end = lines[k].find(quote)
                    if end > 0:
                        spans.append((k, 0, end))
                    n = k + 1
                    continue
        if (
            rest.endswith("\\")
            and (len(rest) - len(rest.rstrip("\\"))) % 2
            and quote not in ('"', "'", '"""', "'''")
            and not code_value(rest.split(None, 1)[0])  # TOKEN=$(curl … \\ (a command)
        ):
            # Continued with a backslash: this line's value and every line it continues.
            spans.append((n, at, at + len(rest) - 1))
            k = n + 1
            while k < len(lines):
                more = lines[k].rstrip()
                cont = more.endswith("\\") and (len(more) - len(more.rstrip("\\"))) % 2
                start = _indent(more)
                spans.append((k, start, len(more) - 1 if cont else len(more)))
                k += 1
                if not cont:
                    break
            n = k
            continue
        n += 1
    spans = [(k, a, b) for k, a, b in spans if b > a and not lines[k][a:b].startswith(PREFIX)]
    if not spans:
        return text, 0
    for k, a, b in sorted(spans, reverse=True):
        lines[k] = lines[k][:a] + PREFIX + "credential]" + lines[k][b:]
    return "\n".join(lines), len(spans)


# -- the holes 0.5.0 left open -----------------------------------------------------------
#
# 1. An unquoted value split by plain spaces at the start of a shell or env statement
#    (``PASSWORD=abc def ghi``): the credential rule masks its first word; the rest of
#    the statement is the value's too, up to what ends a statement (``&&``, ``;``, ``|``,
#    a comment, a redirect, the next ``KEY=``). In a shell the words after an
#    assignment may instead be the command it prefixes (``PGPASSWORD=x psql -h db``):
#    a known command, a path or options there keep the words.

_SPACED_VALUE = (
    # (A line of a diff starts with its + or -; a string, JSON-encoded text's too, with ".)
    r"(?m)(?:(?:^|(?<=\\n)|(?<=\"))[+-]?|(?<=&&)|(?<=\|\|)|(?<=[;|(]))[ \t]*"
    r"(?:(?:export|set|setx|declare(?:[ \t]+-\w+)*|local|readonly|env|-)[ \t]+)?"
    r"(?:[A-Za-z_]\w*=[^\s;&|'\"\\`]*[ \t]+)*"
    # An environment's name (upper case) or a .properties key (dotted): a name of code
    # (``sort_key=lambda x: …``, ``auth=f(a, b)``) is no statement of its own.
    r"(?:[A-Z_][A-Z0-9_]*|[A-Za-z_][\w-]*(?:\.[\w-]+)+)=\[REDACTED:credential\]"
    # A comment starts at a "#" before a space; "#x9" glued is a piece of the value.
    r"(?P<rest>[^\s;&|<>`'\"\\()]*(?:[ \t]+(?!#(?:[ \t]|$)|[&|;<>()]|[A-Za-z_]\w*=)"
    r"[^\s;&|<>`'\"\\()]+)+)"
    # ... and the value runs to what ends a statement or its string, not to a bracket.
    r"(?=[ \t\r]*(?:$|\\[nr]|\\*\"|&&|\|\||[;|&<>]|#(?:[ \t]|$)|[A-Za-z_]\w*=))"
)
# Programs an assignment is often written before (``PGPASSWORD=x psql``).
_PREFIXED_COMMANDS = frozenset(
    (
        "psql", "pg_dump", "pg_dumpall", "pg_restore", "pg_basebackup", "createdb", "dropdb",
        "mysql", "mysqldump", "mysqladmin", "mariadb", "mongosh", "mongo", "mongodump",
        "mongorestore", "redis-cli", "sqlcmd", "sqlplus", "git", "gh", "docker",
        "docker-compose", "podman", "kubectl", "helm", "terraform", "tofu", "ansible",
        "ansible-playbook", "vault", "aws", "gcloud", "az", "python", "python3", "pip", "pip3",
        "node", "npm", "npx", "yarn", "pnpm", "bun", "deno", "ruby", "bundle", "rails", "rake",
        "go", "cargo", "make", "cmake", "java", "mvn", "gradle", "dotnet", "php", "composer",
        "pytest", "tox", "uv", "poetry", "sh", "bash", "zsh", "fish", "sudo", "env", "exec",
        "nohup", "time", "xargs", "curl", "wget", "ssh", "scp", "rsync", "sftp", "ftp", "lftp",
        "rclone", "restic", "borg", "duplicity", "openssl", "gpg", "jq", "yq", "echo", "printf",
        "cat", "tee", "true", "false", "uvicorn", "gunicorn", "flask", "django-admin",
        "manage.py", "celery", "supervisord", "systemctl", "service",
    )
)  # fmt: skip


def _spaced_value(m: Match[str]) -> str:
    """The rest of an unquoted value's statement, masked with its first word, unless it
    is the command the assignment prefixes."""
    rest = m.group("rest")
    words = rest.split()
    first = words[0] if rest[:1] in " \t" else ""
    if first and (
        first in _PREFIXED_COMMANDS
        or first[:1] == "/"
        or first[:2] in ("./", "~/", "${", "$(")
        or reference(first)
        or ("/" in first and first[:1] not in "!#%^*+=")
        or (
            first.replace("-", "_").replace(".", "_").isidentifier()
            and first.islower()
            and any(
                w[:2] == "--" or (len(w) == 2 and w[0] == "-" and w[1].isalpha()) for w in words
            )
        )
    ):
        return m.group(0)
    return m.group(0)[: m.start("rest") - m.start(0)] + m.group(0)[m.end("rest") - m.start(0) :]


# 2. A bare ``user/password@connect-identifier`` (Oracle's ``scott/X@db:1521/ORCL``,
#    ``u/X@//host/svc``, ``u/X@(DESCRIPTION=…)``, ``u/X@alias``) with no command before it.
#    A host with a connect structure (``//``, a port, a service, a dotted host name, a
#    descriptor) masks any password; a bare alias only one shaped like a password, or
#    after a command that takes a connect string. A version, a hash or a branch after
#    the ``@`` (``actions/checkout@v4``, ``nginx@sha256:…``, ``icon@2x.png``) is a
#    reference, never a host.
_CONNECT_STRING = (
    r"(?:(?<![\w@/.:$#%~+\\-])|(?<=\\[nrt]))"
    r"(?P<user>[A-Za-z_][\w$#.-]{0,29})(?P<sep>[/:])(?P<v>(?!\[REDACTED:)[^\s/'\"\\<>`]+)"
    r"@(?P<host>//[\w.-]+(?::\d{1,5})?(?:/[\w.$#-]+)?(?![\w@/.:-])"
    r"|\((?i:description|address)=[^\s'\"\\]*"
    # Go's database/sql DSN: user:password@tcp(host:port)/db
    r"|(?:tcp6?|udp|unix)\([^\s'\"\\()]*\)"
    r"|[A-Za-z][\w.-]*(?::\d{1,5})?(?:/[\w.$#-]+)?(?![\w@/.:-]))"
)
_REF_WORDS = frozenset(
    ("latest", "next", "main", "master", "head", "stable", "beta", "alpha", "canary",
     "nightly", "edge", "dev", "develop", "trunk", "release", "lts", "current", "rc")
)  # fmt: skip
_CONNECT_COMMANDS = ("connect", "conn", "sqlplus", "exp", "imp", "expdp", "impdp", "sqlldr",
                     "rman", "dgmgrl", "tnsping", "sql")  # fmt: skip


def _connect_string(m: Match[str]) -> str:
    value, host = m.group("v"), m.group("host")
    core = host.lstrip("/")
    if not _worded(value) or value.lower() in _TRIVIAL:
        return m.group(0)
    if host.endswith(")") and host[:1] != "(":
        pass  # user:password@tcp(…): Go's DSN, a connect structure whatever the separator
    elif m.group("sep") == ":":
        return m.group(0)  # user:X@host is the URL rule's (with a scheme) or nothing
    if host[0] != "(" and host[:2] != "//":
        first = core[:1]
        if first.isdigit() or (first in "vV" and core[1:2].isdigit()):
            return m.group(0)  # a version (@v4, @1.2.3, @2x.png)
        name = core.split(":")[0].split("/")[0]
        if name.lower() in _REF_WORDS or (len(name) >= 7 and not name.strip("0123456789abcdef")):
            return m.group(0)  # a branch or a commit
    # A descriptor, //host, a port, a service or a protocol say "connect"; a bare host
    # name or alias (db.internal, orcl; also docs/alice@example.com) needs a password's
    # shape or a command before it.
    structured = host[0] == "(" or host[:2] == "//" or ":" in core or "/" in core or "(" in core
    shaped = _generated(value)
    if not structured and not shaped:
        text = m.string
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[max(line_start, m.start() - 80) : m.start()].split()
        words = [w for w in before if not w.startswith("-")]
        if not words or words[-1].lower().rsplit("/", 1)[-1] not in _CONNECT_COMMANDS:
            return m.group(0)
    start, end = m.start("v") - m.start(0), m.end("v") - m.start(0)
    return m.group(0)[:start] + PREFIX + "password]" + m.group(0)[end:]


def _generated(value: str) -> bool:
    """Shaped like a password or a generated value, and no name of code or word with a
    number at its end (``Service2``, ``handler_v2``; ``D5SJXKJ.SY7O10`` and the
    passphrase ``tulip-canyon-orbit-12`` are values)."""
    if not (_pw_shaped(value) or looks_random(value)):
        return False
    head = value.rstrip("0123456789")
    separators = sum(c in "-_." for c in head.rstrip("-_."))
    name = head.rstrip("-_.")
    return not (
        name and _plain_name(name) and separators <= 1 and not any(c.isdigit() for c in name)
    )


def _connect_ready(text: str, low: str) -> bool:
    """An ``@`` with a ``/`` before it in the same word, or Go's ``@tcp(``."""
    if "@tcp" in low or "@unix(" in low or "@udp(" in low:
        return True
    i = text.find("@")
    while i >= 0:
        j = i - 1
        while j >= 0 and j > i - 64 and not text[j].isspace() and text[j] not in "'\"":
            if text[j] == "/":
                return True
            j -= 1
        i = text.find("@", i + 1)
    return False


# 4. Positional credentials: calls whose argument at one position *is* the password —
#    (host, user, password) of a DB-API or PHP connect, ftplib.FTP, JDBC's getConnection,
#    PDO; (host, port, user, password) of paramiko's connect; (user, password, dsn) of
#    Oracle's; (user, password) of a login, a bind, a Basic/Digest auth object or an
#    ``auth=(user, password)`` tuple. Only a string literal at that place is masked (a
#    name is no secret), and, where the call could be another API's (a ``connect`` of
#    an unknown object, a name merely ending in ``auth``), only one that is no plain word.
_POSITIONAL = "\x00positional"
_POSITIONAL_MARKERS = ("connect", "ftp", "mysqli", "pdo", "login", "logon", "auth", "credential",
                       "bind")  # fmt: skip
# Modules whose connect takes (host, user, password, ...).
_DB_MODULES = frozenset(
    ("pymysql", "mysqldb", "connector", "psycopg2", "psycopg", "pymssql", "pgdb", "pg8000",
     "mariadb", "aiomysql", "asyncmy", "cymysql", "umysql")
)  # fmt: skip
_ORACLE_MODULES = ("cx_oracle", "oracledb")
# Call names whose password position is certain, and that position.
_STRONG_CALLS = {
    "ftp": 2, "ftp_tls": 2, "getconnection": 2, "mysqli": 2, "mysqli_connect": 2,
    "mysql_connect": 2, "mysql_pconnect": 2, "pdo": 2, "mssql_connect": 2,
    "oci_connect": 1, "oci_pconnect": 1, "oci_new_connect": 1, "login": 1, "logon": 1,
    "simple_bind_s": 1, "simple_bind": 1, "bind_s": 1, "httpbasicauth": 1,
    "httpdigestauth": 1, "basicauth": 1, "digestauth": 1, "httpproxyauth": 1,
    "networkcredential": 1, "plaincredentials": 1, "usernamepasswordcredentials": 1,
}  # fmt: skip
_SPACE_ESCAPES = ("\\n", "\\r", "\\t")


def _strip_arg(text: str, a: int, b: int) -> tuple[int, int]:
    """(a, b) narrowed past whitespace and JSON-escaped line breaks at both ends."""
    while a < b:
        if text[a] in " \t\r\n":
            a += 1
        elif text.startswith(_SPACE_ESCAPES, a):
            a += 2
        else:
            break
    while b > a:
        if text[b - 1] in " \t\r\n":
            b -= 1
        elif b - 2 >= a and text[b - 2 : b] in _SPACE_ESCAPES:
            b -= 2
        else:
            break
    return a, b


def _call_args(text: str, i: int) -> tuple[list[tuple[str, int, int]] | None, int]:
    """The arguments of the call whose ``(`` is at ``i``: (kind, start, end) each, kind
    ``str`` (start, end: the literal's content), ``int``, ``kw``, ``star`` or ``other``;
    None when the call does not close within 800 characters. And where the reading
    stopped (no marker before it starts another call worth reading)."""
    n = min(len(text), i + 800)
    args: list[tuple[str, int, int]] = []
    depth = 0
    start = j = i + 1
    # The literals at the call's own level in the argument being read: (where its quote
    # and the backslashes escaping it start, content start, content end, end).
    literals: list[tuple[int, int, int, int]] = []
    while j < n:
        c = text[j]
        if c in "\"'":
            k = 0
            while j - k - 1 >= start and text[j - k - 1] == "\\":
                k += 1
            if k:  # JSON-encoded text: the literal closes with the same escaped quote
                end = text.find("\\" * k + c, j + 1, n)
            else:
                end = j + 1
                while end < n and text[end] != c and text[end] != "\n":
                    end += 2 if text[end] == "\\" else 1
                end = end if end < n and text[end] == c else -1
            if end < 0:
                return None, j
            if depth == 0:
                literals.append((j - k, j + 1, end, end + k + 1))
            j = end + k + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}" and depth:
            depth -= 1
        elif c in ",)" and depth == 0:
            a, b = _strip_arg(text, start, j)
            piece = text[a:b]
            if (
                len(literals) == 1
                and literals[0][3] == b
                and len(text[a : literals[0][0]]) <= 2
                and not text[a : literals[0][0]].strip("bBrRuUfF")
            ):
                args.append(("str", literals[0][1], literals[0][2]))
            elif piece.isdigit():
                args.append(("int", a, b))
            elif piece[:1] == "*":
                args.append(("star", a, b))
            elif (
                "=" in piece and piece.split("=", 1)[0].strip().isidentifier() and "==" not in piece
            ):
                args.append(("kw", a, b))
            elif a < b or c == ",":
                args.append(("other", a, b))
            if c == ")":
                return args, j
            start = j + 1
            literals = []
        elif c == ";" and depth == 0:
            return None, j
        j += 1
    return None, j


def _positional(text: str) -> tuple[str, int]:
    low = text.lower()
    if len(low) != len(text):
        return text, 0
    spans: list[tuple[int, int]] = []
    for marker in _POSITIONAL_MARKERS:
        i = low.find(marker)
        while i >= 0:
            a = i
            while a > 0 and (low[a - 1].isalnum() or low[a - 1] == "_"):
                a -= 1
            b = i + len(marker)
            while b < len(low) and (low[b].isalnum() or low[b] == "_"):
                b += 1
            name = low[a:b]
            k = b
            while k < len(low) and low[k] in " \t":
                k += 1
            tuple_ = False
            if name == "auth" and low[k : k + 1] in ("=", ":") and low[k + 1 : k + 2] != "=":
                k += 1
                while k < len(low) and low[k] in " \t":
                    k += 1
                tuple_ = True
            if low[k : k + 1] == "(":
                found, b = _password_arg(text, low, a, name, k, tuple_)
                if found is not None:
                    spans.append(found)
            i = low.find(marker, max(b, i + 1))
    if not spans:
        return text, 0
    out: list[str] = []
    pos = 0
    for a, b in merge_spans(spans):
        out += (text[pos:a], PREFIX + "password]")
        pos = b
    out.append(text[pos:])
    return "".join(out), len(spans)


def _password_arg(
    text: str, low: str, a: int, name: str, paren: int, tuple_: bool
) -> tuple[tuple[int, int] | None, int]:
    """The span of the password literal of the call named ``name`` at ``a`` (or None),
    and where the reading of its arguments stopped."""
    receiver = ""
    r = a
    while r > 1 and low[r - 1] == "." and (low[r - 2].isalnum() or low[r - 2] == "_"):
        r -= 1
        while r > 0 and (low[r - 1].isalnum() or low[r - 1] == "_"):
            r -= 1
        # The nearest object of the chain: mysql.connector.connect → connector.
        receiver = low[r:a].rstrip(".").rsplit(".", 1)[-1]
    strong = True
    if tuple_:
        index = 1
    elif name in _STRONG_CALLS:
        index = _STRONG_CALLS[name]
    elif name == "connect":
        index = 2
        chain = low[r:a]
        if any(mod in chain for mod in _ORACLE_MODULES):
            index = 1
        else:
            strong = receiver in _DB_MODULES
    elif name.endswith(("auth", "credential", "credentials", "authenticate")):
        index, strong = 1, False
    else:
        return None, paren
    args, stop = _call_args(text, paren)
    if not args:
        return None, stop
    positional = [arg for arg in args if arg[0] != "kw"]
    if any(arg[0] == "star" for arg in positional[: index + 1]):
        return None, stop
    if name == "connect" and index == 2 and len(positional) > 1 and positional[1][0] == "int":
        index = 3  # paramiko: (host, port, user, password)
    if len(positional) <= index or positional[index][0] != "str":
        return None, stop
    _kind, start, end = positional[index]
    value = text[start:end]
    if not _worded(value) or value.lower() in _TRIVIAL or reference(value):
        return None, stop
    if value[:1] == "{" and value[-1:] == "}":
        return None, stop  # an f-string's {field}
    if not strong and (not _generated(value) or " " in value.strip()):
        return None, stop
    return (start, end), stop


# (kind, gate, markers, pattern, replacement): a rule runs when ``gate`` and one of its
# ``markers`` (if any) occur in the lower-cased text. The gate lets one scan rule out a
# family of markers; together they keep the no-secret case to a few dozen substring
# searches. Tokens without a prefix have the gate ``_RUN``: their markers are *shapes*
# (see _shape: "a" a token character, ":" "=" "." themselves, " " anything else), one
# of which must occur in the text's shape, and words (see _run_ready). A file name of
# 30 letters does not start the regex engine for a Discord token.
# Order matters: whole blocks and provider tokens first, so a specific kind wins over
# the generic "credential" of NAME=value; free text and random values last.
_RUN = "\x00run"
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
    (
        # The tail of a block whose head was cut off: its body lines up to the END line
        # (found without a regex: see _key_tails).
        "private-key",
        "private key",
        ("-----end",),
        _KEY_TAILS,
        PREFIX + "private-key]",
    ),
    (
        # A PEM body without its BEGIN line (and often its END one).
        "private-key",
        "\n",
        (),
        _PEM_BODY,
        _pem_body,
    ),
    ("password-hash", "$", _CRYPT_MARKERS, _CRYPT_HASH, PREFIX + "password-hash]"),
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
    (
        "gitlab-token",
        "gl",
        (
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glft-",
            "glimt-",
            "glcbt-",
            "glsoat-",
            "glffct-",
            "gloas-",
            "glagent-",
            "glwt-",
            "glcit-",
        ),
        _LB + r"gl(?:pat|dt|rt|ptt|ft|imt|cbt|soat|ffct|oas|agent|wt|cit)-[A-Za-z0-9_.-]{20,}",
        PREFIX + "gitlab-token]",
    ),
    (
        # A runner registration token: its own gate, it has no "gl" in it.
        "gitlab-token",
        "gr1348941",
        (),
        _LB + r"GR1348941[A-Za-z0-9_.-]{20,}",
        PREFIX + "gitlab-token]",
    ),
    (
        "slack-token",
        "x",
        ("xox", "xapp-"),
        _LB + r"(?:xox[abposrecd](?:\.xox[bp])?|xapp)-[A-Za-z0-9-]{10,}",
        PREFIX + "slack-token]",
    ),
    (
        "slack-webhook",
        "hooks.slack.com/",
        (),
        r"(?i)(hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9_/+-]{8,}",
        r"\1" + PREFIX + "slack-webhook]",
    ),
    (
        "discord-webhook",
        "discord",
        ("/webhooks/",),
        r"(?i)(discord(?:app)?\.com/api/(?:v\d+/)?webhooks/)\d+/[A-Za-z0-9_-]{20,}",
        r"\1" + PREFIX + "discord-webhook]",
    ),
    (
        "aws-access-key-id",
        "ia",
        ("akia", "asia"),
        _LB + r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])",
        PREFIX + "aws-access-key-id]",
    ),
    ("google-api-key", "aiza", (), _LB + r"AIza[0-9A-Za-z_-]{35}", PREFIX + "google-api-key]"),
    (
        "google-oauth",
        "",
        ("ya29.", "gocspx-", "1//0"),
        r"(?:" + _LB + r"ya29\.[0-9A-Za-z_-]{20,}|" + _LB + r"GOCSPX-[A-Za-z0-9_-]{20,}"
        r"|(?:(?<![\w/])|(?<=\\[nrt]))1//0[A-Za-z0-9_-]{30,})",
        PREFIX + "google-oauth]",
    ),
    (
        "stripe-key",
        "k_",
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        _LB + r"[sr]k_(?:live|test)_[0-9A-Za-z]{10,}",
        PREFIX + "stripe-key]",
    ),
    ("stripe-key", "whsec_", (), _LB + r"whsec_[A-Za-z0-9+/=]{20,}", PREFIX + "stripe-key]"),
    ("npm-token", "npm_", (), _LB + r"npm_[A-Za-z0-9]{36}" + _RB, PREFIX + "npm-token]"),
    ("pypi-token", "pypi-ag", (), _LB + r"pypi-Ag[A-Za-z0-9_-]{40,}", PREFIX + "pypi-token]"),
    (
        "huggingface-token",
        "",
        ("hf_", "api_org_"),
        _LB + r"(?:hf|api_org)_[A-Za-z0-9]{30,}" + _RB,
        PREFIX + "huggingface-token]",
    ),
    (
        "sendgrid-key",
        "sg.",
        (),
        _LB + r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
        PREFIX + "sendgrid-key]",
    ),
    (
        "digitalocean-token",
        "_v1_",
        (),
        _LB + r"do[opr]_v1_[a-f0-9]{64}" + _RB,
        PREFIX + "digitalocean-token]",
    ),
    (
        "databricks-token",
        "dapi",
        (),
        _LB + r"dapi[a-f0-9]{32}(?:-\d+)?" + _RB,
        PREFIX + "databricks-token]",
    ),
    (
        "shopify-token",
        "shp",
        ("shpat_", "shpca_", "shppa_", "shpss_"),
        _LB + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + _RB,
        PREFIX + "shopify-token]",
    ),
    ("mailgun-key", "key-", (), _LB + r"key-[0-9a-f]{32}" + _RB, PREFIX + "mailgun-key]"),
    (
        "api-token",
        "",
        (
            "hvs.",
            "hvb.",
            "pmak-",
            "lin_api_",
            "age-secret-key-",
            "glc_",
            "glsa_",
            "sntrys_",
            "sntryu_",
            "nrak-",
            "dp.pt.",
            "dp.st.",
            "ntn_",
            "rubygems_",
            "pscale_",
            "sq0",
            "dckr_pat_",
            "q~",
        ),
        r"(?:" + _LB + r"(?:hv[sb]\.|PMAK-|lin_api_|AGE-SECRET-KEY-1|gl(?:c|sa)_|sntry[su]_"
        r"|NRAK-|dp\.(?:pt|st)\.|ntn_|rubygems_|pscale_(?:tkn|pw)_|sq0(?:atp|csp)-|dckr_pat_)"
        r"[A-Za-z0-9_.+/=-]{16,}"
        r"|" + _LB + r"[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}" + _RB + r")",
        PREFIX + "api-token]",
    ),
    ("api-token", "", _MORE_MARKERS, _MORE_TOKENS, PREFIX + "api-token]"),
    # (Its masks name the provider: "github-token" for ghp_…, and so on.)
    ("github-token", "", _SPLIT_MARKERS, _SPLIT_TOKEN, _split_token),
    # The rest of a provider's token split by spaces, after its head was masked alone.
    ("api-token", "[redacted:", (), _CONTINUED, _continued),
    (
        "twilio-key",
        _RUN,
        ("a" * 34, "SK", "AC"),
        r"(?<![A-Za-z0-9_])(?:SK|AC)[0-9a-fA-F]{32}" + _RB,
        PREFIX + "twilio-key]",
    ),
    (
        "telegram-token",
        _RUN,
        (":" + "a" * 30,),
        r"(?:(?<![\w:])|(?<=bot))\d{6,12}:[A-Za-z0-9_-]{30,40}(?![\w-])",
        PREFIX + "telegram-token]",
    ),
    (
        "discord-token",
        _RUN,
        ("." + "a" * 6 + "." + "a" * 27, "." + "a" * 7 + "." + "a" * 27),
        r"(?<![\w.-])[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![\w-])",
        PREFIX + "discord-token]",
    ),
    (
        "jwt",
        "",
        ("eyj", "eya", "ewo", "e30"),
        _LB + r"(?:eyJ|eyA|ewo|e30)[A-Za-z0-9_-]{8,}\.(?:eyJ|eyA|ewo)?[A-Za-z0-9_-]{8,}"
        r"(?:\.[A-Za-z0-9_-]*){1,3}",
        PREFIX + "jwt]",
    ),
    # Before the header's rule: a Basic header being made ($(echo -n u:p | base64)).
    (
        "credential",
        "",
        ("base64", "b64", "btoa", "xxd", "basenc", "encode"),
        _ENCODER_INPUT,
        _encoder_input,
    ),
    (
        "authorization",
        "authorization",
        (),
        # The whole header value, to the end of its line or quote: an AWS4-HMAC or
        # Digest header carries its secret in a later parameter (Signature=…).
        r"(?i)(?P<head>(?<![A-Za-z0-9-])(?:proxy-)?authorization(?:\\*[\"'])?\s*[:=]\s*"
        + _OPEN_QUOTE
        + r"\s*)"
        r"(?:(?P<scheme>bearer|basic|token|bot|digest|negotiate|ntlm|apikey|sso-key"
        r"|aws4-hmac-sha256|hmac|otp)\s+)?"
        r"(?P<cred>[^\s'\"\\]" + _HEADER_REST + ")",
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
        "cookie",
        "",
        ("cookie", "curl"),
        r"(?i)((?:(?<![\w-])(?:set-)?cookie(?:\\*[\"'])?\s*:\s*|\bcurl\b[^\n]{0,500}?\s--?(?:cookie|b)[\s=]+)"
        + _OPEN_QUOTE
        + r"\s*)(?!\[REDACTED:)([^\s'\"\\]"
        + _HEADER_REST
        + ")",
        r"\1" + PREFIX + "cookie]",
    ),
    (
        "signature",
        "signature",
        (),
        r"(?i)(\bsignature\s*=\s*)(?!\[REDACTED:)[A-Za-z0-9+/_-]{16,}={0,2}",
        r"\1" + PREFIX + "signature]",
    ),
    (
        "url-credentials",
        "://",
        ("@",),
        # user:password@host: the password may hold unencoded @ / : # — the userinfo
        # runs to the last @ of the URL that a host name follows. Without a password (user@host) it
        # stops at the first @, and host:port/path@x is no userinfo at all.
        r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{0,30}://)"
        r"(?:([^\s:/?#@'\"\\<>]*:(?!\d{1,5}(?:[/?#]|$))[^\s'\"\\<>]*)"
        r"@(?=[\w.%\[\]:-]+(?:[/?#\s'\"\\<>]|$))"
        r"|([^\s/?#@'\"\\<>]+)@)",
        _userinfo,
    ),
    (
        "curl-user",
        "curl",
        ("-u", "--user"),
        r"(\bcurl\b[^\n]{0,500}?\s(?:-u[\s=]*|--user[\s=]+)"
        + _OPEN_QUOTE
        # A quote after the colon opens the password, unless it closes a JSON string (`a:"}`).
        + r"[^\s:'\"\\\[]+:(?:\\*['\"](?=[^\s'\"\\,:}\]]))?)([^\s'\"\\]+)",
        r"\1" + PREFIX + "password]",
    ),
    (
        "aws-secret-key",
        "secret",
        ("secret_access", "secretaccess"),
        r"(?i)((?:aws_?)?secret_?access_?key(?:\\*[\"'])?(?:\s*[:=]\s*|[ \t]+)"
        + _OPEN_QUOTE
        + r")([A-Za-z0-9/+=]{20,})",
        r"\1" + PREFIX + "aws-secret-key]",
    ),
    (
        "password",
        "",
        (
            "mysql",
            "mariadb",
            " login ",
            "sshpass",
            "redis-cli",
            "sqlcmd",
            "bcp ",
            "osql",
            "isql",
            "ldap",
            "mongo",
            "ssh-keygen",
            "zip ",
            "7z",
            "-password",
            "htpasswd",
            "password-stdin",
            "smb",
            "rpcclient",
            "secret set",
        ),
        _CMD_PASSWORD,
        _masked_value("password"),
    ),
    ("password", "", ("--value", "--secret-string", "add-mask"), _STORE_VALUE, _keep_password),
    ("password", "", _ADMIN_MARKERS, _ADMIN_PASSWORD, _masked_value("password")),
    ("password", "expect", ("send",), _EXPECT_SEND, _masked_value("password")),
    ("password", "", ("identified", "password"), _SQL_PASSWORD, _sql_value),
    ("password", ":", (), _PGPASS, _masked_value("password")),
    (
        "password",
        " ",
        (
            "config set",
            "configure set",
            "config add",
            "config put",
            "secret set",
            "secrets set",
            "var set",
            "vars set",
            "variable set",
            "variables set",
            "secret create",
            "secrets create",
        ),
        _CONFIG_SET,
        _masked_value("password"),
    ),
    (
        # ?sig=…&X-Amz-Signature=…#access_token=… anywhere in the text (the callback
        # judges the name: see _secret_param).
        "url-param",
        "=",
        ("?", "#"),
        _PARAM_PATTERN,
        _url_param,
    ),
    (
        # .netrc: machine HOST login USER password VALUE (on one line or several).
        "credential",
        "password",
        ("machine", "login"),
        r"(?i)\b(?P<kw>machine|login)\b[^\n]{0,200}?(?:\n[^\n]{0,200}?){0,2}?"
        r"\bpassword(?P<link>(?:[ \t]|\\t|\\n|\n)+)(?P<conn>)(?P<v>(?!\[REDACTED:)[^\s'\"\\]+)",
        _prose,
    ),
    (
        # <password>VALUE</password>, <db:ApiKey attr="x">VALUE</db:ApiKey>
        "credential",
        "</",
        _CRED_MARKERS + _KEY_MARKERS,
        _XML_PATTERN,
        _masked_value("credential"),
    ),
    (
        # <entry key="db.password">VALUE</entry>, <Setting name="ApiKey">VALUE</Setting>
        "credential",
        "</",
        _CRED_MARKERS + _KEY_MARKERS,
        _ENTRY_PATTERN,
        _masked_value("credential"),
    ),
    (
        # <add key="DbPassword" value="VALUE"/> (.NET config), name=… value=…
        "credential",
        "value",
        _CRED_MARKERS + _KEY_MARKERS,
        _KV_PATTERN,
        _masked_value("credential"),
    ),
    (
        # define('DB_PASSWORD', 'VALUE'), setenv("API_TOKEN", "VALUE"): a call's two arguments.
        "credential",
        ",",
        ("')", '")', "' )", '" )'),
        _CALL_PATTERN,
        _masked_value("credential"),
    ),
    ("credential", "\n", (), _BLOCKS, PREFIX + "credential]"),
    ("password", "(", ("auth", "cred", "login", "logon", "bind"), _AUTH_CALL, _keep_password),
    # A password given by its position in a call (connect("db", "u", X), FTP(h, u, X)).
    ("password", "(", _POSITIONAL_MARKERS, _POSITIONAL, PREFIX + "password]"),
    ("credential", "", _CRED_MARKERS, _CRED_PATTERN, _cred_value),
    # The same rule for *_KEY names, behind one gate: "key" alone is too common a word
    # (every error event has a "key" field) to start the regex engine for.
    ("credential", "key", _KEY_MARKERS, _CRED_PATTERN, _cred_value),
    # The rest of an unquoted value split by spaces (PASSWORD=abc def ghi).
    (
        "credential",
        "=[redacted:credential]",
        ("=[redacted:credential]",),
        _SPACED_VALUE,
        _spaced_value,
    ),
    # user/password@connect-identifier with no command before it.
    ("password", "@", ("/", "@tcp", "@unix(", "@udp("), _CONNECT_STRING, _connect_string),
    (
        # Prose: "my password is X", "the db password for staging: X", "use token X".
        "credential",
        "",
        (
            "passw",
            "passph",
            "passco",
            "pass ",
            "pwd",
            "pw ",
            "pw:",
            "pw=",
            "pin ",
            "pin:",
            "pin=",
            "secret",
            "token",
            "key ",
            "key:",
            "key=",
            "key\t",
            "cred",
        ),
        _PROSE_PATTERN,
        _prose,
    ),
    ("credential", "", _FOREIGN_MARKERS, _FOREIGN_PATTERN, _foreign),
    ("credential", "", _SEARCH_MARKERS, _SEARCH_LINE, _search_line),
    ("credential", "value", ("name",), _ENV_ENTRY, _keep_value),
    ("credential", "psk", (), _PSK, _keep_value),
    ("credential", "", (" to", "->", "\u2192"), _SET_TO, _set_to),
    (
        # "X is the new password": the value before its name.
        "credential",
        "",
        ("password", "passphrase", "passcode", "pw", "pin", "secret", "token", "api key"),
        _VALUE_FIRST,
        _value_first,
    ),
    (
        "password",
        "",
        ("pass", "pw", "cred", "login", "log in", "logon", "sign in", "signin"),
        _PW_LINES,
        PREFIX + "password]",
    ),
    # Encoded forms of what the rules above mask.
    ("encoded", "", (), _B64_RUN, _b64_decoded),  # (their prechecks find the runs)
    ("encoded", "", (), _HEX_RUN, _hex_decoded),
    ("encoded", "%", ("%3", "%2", "%40", "%5"), _PCT_RUN, _pct_decoded),
    (
        # NAME=<long random value>: the name says nothing, the value does.
        "secret",
        _RUN,
        tuple(sep + " " * n + "a" * 20 for sep in "=:" for n in range(4)),
        _RANDOM_PATTERN,
        _random_value,
    ),
    # Key material with no name: a long random run.
    ("key-material", "", (), _ENTROPY_RUN, _entropy_run),
)

# Rule pattern → its precheck (see above).
_READY: dict[str, Callable[[str, str], bool]] = {
    _CRED_PATTERN: _cred_ready,
    _PROSE_PATTERN: _prose_ready,
    _CALL_PATTERN: _call_ready,
    _KV_PATTERN: _markup_ready,
    _XML_PATTERN: _markup_ready,
    _ENTRY_PATTERN: _markup_ready,
    _RANDOM_PATTERN: _random_ready,
    _PARAM_PATTERN: _param_ready,
    _PEM_BODY: _pem_ready,
    _PGPASS: _pgpass_ready,
    _BLOCKS: _blocks_ready,
    _VALUE_FIRST: _value_first_ready,
    _ENTROPY_RUN: _entropy_ready,
    _B64_RUN: _b64_ready,
    _HEX_RUN: _hex_ready,
    _PCT_RUN: _pct_ready,
    _SQL_PASSWORD: _sql_ready,
    _ADMIN_PASSWORD: _admin_ready,
    _EXPECT_SEND: _expect_ready,
    _ENCODER_INPUT: _encoder_ready,
    _SEARCH_LINE: _search_ready,
    _FOREIGN_PATTERN: _foreign_ready,
    _SET_TO: _set_ready,
    _CONNECT_STRING: _connect_ready,
}
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


# A text's shape: each token character ([A-Za-z0-9_-]) becomes "a", ":" "=" "." stay,
# every other character becomes " " (one byte per character: bytes.translate, C speed).
_SHAPE = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or chr(b) in "_-")
    else b if chr(b) in ":=." else 0x20
    for b in range(256)
)  # fmt: skip
_SHAPE_CHARS = frozenset("a:=. ")
_RUN_NEEDLE = b"a" * 16


def _shape(text: str) -> bytes:
    return text.encode("ascii", "replace").translate(_SHAPE)


def _split_run_markers(markers: tuple[str, ...]) -> tuple[tuple[bytes, ...], tuple[str, ...]]:
    shapes = tuple(m.encode() for m in markers if set(m) <= _SHAPE_CHARS)
    words = tuple(m for m in markers if not set(m) <= _SHAPE_CHARS)
    return shapes, words


def _hex_after(text: str, prefixes: tuple[str, ...], n: int) -> bool:
    """Whether one of ``prefixes`` occurs followed by ``n`` hex digits (Twilio's SK…)."""
    for prefix in prefixes:
        i = text.find(prefix)
        while i >= 0:
            body = text[i + len(prefix) : i + len(prefix) + n]
            if len(body) == n and not body.strip("0123456789abcdefABCDEF"):
                return True
            i = text.find(prefix, i + 1)
    return False


def _run_ready(text: str, shape: bytes, markers: tuple[str, ...]) -> bool:
    """A ``_RUN`` rule's markers: one of its shapes in ``shape``, and, when it has
    words, one of them followed by 32 hex digits in ``text`` (case-sensitive)."""
    split = _run_markers.get(markers)
    if split is None:
        split = _run_markers[markers] = _split_run_markers(markers)
    shapes, words = split
    for needle in shapes:
        if needle in shape:
            break
    else:
        return False
    if not words:
        return True
    return _hex_after(text, words, 32)


_run_markers: dict[tuple[str, ...], tuple[tuple[bytes, ...], tuple[str, ...]]] = {}


# Rules whose matches lie within one line and contain one of their markers (or, for
# the ``_RUN`` rules, a long token): on a long text they run line by line, on the lines
# that hold a marker only. Their patterns start with a word alternation that the regex
# engine would otherwise try at every position of the text (~1 µs a character).
_BY_LINE = frozenset({_CRED_PATTERN, _CALL_PATTERN, _KV_PATTERN, _PROSE_PATTERN,
                      _RANDOM_PATTERN, _CMD_PASSWORD, _CONFIG_SET, _ADMIN_PASSWORD,
                      _SQL_PASSWORD, _FOREIGN_PATTERN, _VALUE_FIRST, _ENCODER_INPUT,
                      _SPLIT_TOKEN, _MORE_TOKENS,
                      _SEARCH_LINE, _SET_TO, _SPACED_VALUE, _CONNECT_STRING})  # fmt: skip
_LINE_MODE_CHARS = 2048


def _line_of(text: str, i: int) -> tuple[int, int]:
    end = text.find("\n", i)
    return text.rfind("\n", 0, i) + 1, len(text) if end < 0 else end


def _marker_lines(text: str, low: str, markers: tuple[str, ...]) -> list[tuple[int, int]]:
    """The lines of ``text`` holding one of ``markers`` (``low`` is ``text`` lower-cased,
    of the same length), merged, in order."""
    spans: list[tuple[int, int]] = []
    for marker in markers:
        i = low.find(marker)
        while i >= 0:
            start, end = _line_of(text, i)
            spans.append((start, end))
            i = low.find(marker, end)
    return merge_spans(spans)


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``(start, end)`` spans sorted, overlapping or touching ones joined."""
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _run_lines(text: str) -> list[tuple[int, int]]:
    """The lines of ``text`` holding a run of 20 token characters, in order."""
    shape = _shape(text)
    spans: list[tuple[int, int]] = []
    i = shape.find(_RUN_NEEDLE)
    while i >= 0:
        start, end = _line_of(text, i)
        spans.append((start, end))
        i = shape.find(_RUN_NEEDLE, end)
    return spans


def _sub(pattern: Pattern[str], repl: Any, text: str) -> tuple[str, int]:
    """``pattern.subn(repl, text)``, except that a callback may decline a match by
    returning None: the search then resumes after its group ``w``, so that a declined
    match hides nothing it overlapped."""
    if repl is not _cred_value:
        return pattern.subn(repl, text)
    out: list[str] = []
    pos = at = count = 0
    while True:
        m = pattern.search(text, at)
        if m is None:
            break
        new = _cred_value(m)
        if new is None:
            at = m.end("w")
            continue
        out += (text[pos : m.start()], new)
        pos = at = m.end()
        count += 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def _sub_lines(
    pattern: Pattern[str], repl: Any, text: str, spans: list[tuple[int, int]]
) -> tuple[str, int]:
    out: list[str] = []
    pos = total = 0
    for start, end in spans:
        segment, count = _sub(pattern, repl, text[start:end])
        if count:
            out += (text[pos:start], segment)
            pos = end
            total += count
    if not total:
        return text, 0
    out.append(text[pos:])
    return "".join(out), total


def mask(text: str, extra: Iterable[str | Pattern[str]] = ()) -> str:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    ``extra``: more patterns (strings or compiled) to mask as ``[REDACTED:custom]``.
    While :func:`collecting`, the values masked are also noted (see :func:`mask_repeats`).
    """
    ascii_only = text.isascii()
    if not ascii_only:
        text = without_invisible(text)
    original = text
    if extra:
        text = _apply_extra(text, extra)
    if not ascii_only:
        # First what the NFKC form shows (a value half in fullwidth letters is one value
        # there), then what the original shows (its own scripts' rules).
        text = _mask_compatible(text)
    text = _mask(text)
    if _collected is not None and text is not original and text != original:
        _note_masked(original, text, _collected)
    return text


# Characters that show nothing but split a word for a pattern: zero-width spaces and
# joiners, the soft hyphen, word joiners and invisible operators, the byte-order mark,
# the Mongolian vowel separator, the combining grapheme joiner. A secret split by them
# ("ghp_ab\u200bcd") is one word to a reader, so it is one to the masker: inside a word
# (between two visible characters) they are dropped before masking. Elsewhere, and
# direction controls anywhere, they stay as they came (a display shows them escaped).
_WORD_SPLITTERS = "\u00ad\u034f\u180e\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"


def without_invisible(text: str) -> str:
    """``text`` without the invisible characters that split a word (see above)."""
    if not any(c in text for c in _WORD_SPLITTERS):
        return text
    out: list[str] = []
    last = len(text) - 1
    for i, c in enumerate(text):
        if c in _WORD_SPLITTERS and 0 < i < last:
            j = i + 1
            while j < last and text[j] in _WORD_SPLITTERS:
                j += 1
            before = out[-1] if out else ""
            if before and not before.isspace() and not text[j].isspace():
                continue
        out.append(c)
    return "".join(out)


# Compatibility characters (fullwidth letters, mathematical alphanumerics, the no-break
# and ideographic spaces: ｐａｓｓｗｏｒｄ＝X) read as the ASCII character NFKC makes of
# them. Detection runs on that form; the masks land on the original characters, which
# stay elsewhere. Only characters whose NFKC form is one ASCII character are read so:
# the text keeps its length, and an index of one form is an index of the other.
_ascii_of: dict[str, str] = dict.fromkeys(
    # Known to be none, so that a text holding only these (ctxmode's own excerpt marks,
    # common punctuation) costs no import of unicodedata: every excerpt has a "…".
    "…⏎↑↓→←»«·•–—‘’“”✓✗✔✘",
    "",
)  # a character → its one ASCII character under NFKC, or ""


def _compatible_table(text: str) -> dict[int, str]:
    if all(_ascii_of.get(c) == "" for c in set(text) if not c.isascii()):
        return {}
    import unicodedata

    if unicodedata.is_normalized("NFKC", text):
        return {}
    table: dict[int, str] = {}
    for c in set(text):
        if c.isascii():
            continue
        a = _ascii_of.get(c)
        if a is None:
            form = unicodedata.normalize("NFKC", c)
            a = _ascii_of[c] = (
                form if len(form) == 1 and form.isascii() and form.isprintable() else ""
            )
        if a:
            table[ord(c)] = a
    return table


def _mask_compatible(text: str) -> str:
    """``text`` with what its NFKC form (see above) shows to be secret masked."""
    table = _compatible_table(text)
    if not table:
        return text
    norm = text.translate(table)
    masked = _mask(norm)
    if masked == norm:
        return text
    return _masked_in(text, norm, masked)


def _masked_in(original: str, norm: str, masked: str) -> str:
    """``masked`` (``norm`` masked) with the text between its masks taken from
    ``original`` (``norm`` position for position). Masking only replaces spans: each
    text between two runs of masks is found again in ``norm``, in order. Where that
    fails, ``masked`` itself (the normalised text, masked) is the safe answer."""
    out: list[str] = []
    pos_n = pos_m = 0
    while True:
        i = masked.find(PREFIX, pos_m)
        if i < 0:
            if norm[pos_n:] != masked[pos_m:]:
                return masked
            out.append(original[pos_n:])
            return "".join(out)
        literal = masked[pos_m:i]
        if not norm.startswith(literal, pos_n):
            return masked
        out.append(original[pos_n : pos_n + len(literal)])
        start = pos_n + len(literal)
        j = i
        while masked.startswith(PREFIX, j):
            close = masked.find("]", j)
            if close < 0:
                return masked
            j = close + 1
        following = masked.find(PREFIX, j)
        after = masked[j:] if following < 0 else masked[j:following]
        if following < 0:
            end = len(norm) - len(after)
            if end <= start or norm[end:] != after:
                return masked
        else:
            end = norm.find(after, start + 1)
            if end < 0:
                return masked
        out.append(masked[i:j])
        pos_n, pos_m = end, j


def _mask(text: str) -> str:
    low = text.lower()
    shape: bytes | None = None
    by_line = len(text) > _LINE_MODE_CHARS and len(low) == len(text)
    # Long texts: rules share markers, so each marker is searched once (a search of a
    # 30 KB text costs more than the lookup); short ones search directly.
    seen: dict[str, bool] = {}
    for _kind, gate, markers, source, repl in _RULES:
        if gate is _RUN:
            if shape is None:
                shape = _shape(text)
                if _RUN_NEEDLE not in shape:
                    shape = b""  # no run of 20 token characters: no _RUN rule applies
            if not shape or not _run_ready(text, shape, markers):
                continue
        elif gate not in low:
            continue
        elif markers and by_line:
            for marker in markers:
                found = seen.get(marker)
                if found is None:
                    found = seen[marker] = marker in low
                if found:
                    break
            else:
                continue
        elif markers:  # a plain loop: a generator per rule would double the cost of a call
            for marker in markers:
                if marker in low:
                    break
            else:
                continue
        ready = _READY.get(source)
        if ready is not None and not ready(text, low):
            continue
        if source is _KEY_TAILS:
            text, count = _key_tails(text)
        elif source is _BLOCKS:
            text, count = _config_blocks(text)
        elif source is _PW_LINES:
            text, count = _password_lines(text)
        elif source is _POSITIONAL:
            text, count = _positional(text)
        elif by_line and source in _BY_LINE:
            present = tuple(m for m in markers if seen.get(m, True))  # (shapes for _RUN)
            spans = _run_lines(text) if gate is _RUN else _marker_lines(text, low, present)
            text, count = _sub_lines(_pattern(source), repl, text, spans)
        elif by_line and gate is _RUN:
            text, count = _sub_lines(_pattern(source), repl, text, _run_lines(text))
        else:
            text, count = _sub(_pattern(source), repl, text)
        if count:
            low = text.lower()
            shape = None
            seen.clear()
            by_line = len(text) > _LINE_MODE_CHARS and len(low) == len(text)
    return text


# -- a secret repeated ---------------------------------------------------------------------
#
# A value recognised as a secret in one place of a payload (a docker config's "auth", a
# `-p` flag, a header) may come again where nothing marks it (an error quoting it, the
# output echoing the command). The hook masks a payload in two passes
# (extract.masked): the first notes every value masked, the second masks each of them
# wherever else it occurs in the payload. Nothing is noted, and the second pass costs
# nothing, for a payload without secrets.

_collected: dict[str, str] | None = None  # value → its kind, while collecting
# A value is hunted down elsewhere only when it cannot be an ordinary word: at least
# this long, and not a plain word of letters unless it looks generated (looks_random).
_REPEAT_MIN = 8
_REPEAT_MIN_RANDOM = 6
_REPEAT_STRIP = "\"'`.,;:()[]{}<>"


def collecting(on: bool) -> dict[str, str] | None:
    """Start (``on``) or stop noting the values :func:`mask` masks; returns what was noted
    (value → kind) when stopping."""
    global _collected
    found = _collected
    _collected = {} if on else None
    return found


def note_secret(value: str, kind: str = "credential") -> None:
    """Note ``value``, masked by the caller (a value under a secret's name), while collecting."""
    if _collected is not None:
        _note_value(value, kind, _collected)


def _note_value(value: str, kind: str, into: dict[str, str]) -> None:
    for word in value.split():
        word = word.strip(_REPEAT_STRIP)
        if len(word) < _REPEAT_MIN_RANDOM or PREFIX in word or "\\" in word:
            continue
        if code_shaped(word):
            continue  # code punctuation: "torch.Size([4" masked once is no secret to hunt
        if len(word) < _REPEAT_MIN and not looks_random(word):
            continue  # short: hunted down only when it cannot be a word ("hunter2")
        if word.isalpha() and not looks_random(word):
            continue  # a word ("release", "development"): masking it elsewhere wrecks prose
        into.setdefault(word, kind)


def _note_masked(before: str, after: str, into: dict[str, str]) -> None:
    """The spans of ``before`` that ``after`` shows as ``[REDACTED:kind]`` markers.

    Masking only replaces spans: the text between two markers of ``after`` is found
    again in ``before``, in order, and what lies between is what a marker replaced.
    """
    pos_b = pos_a = 0
    while True:
        i = after.find(PREFIX, pos_a)
        if i < 0:
            return
        end = after.find("]", i)
        if end < 0:
            return
        literal = after[pos_a:i]
        if before.startswith(literal, pos_b):
            start = pos_b + len(literal)
        else:
            found = before.find(literal, pos_b)
            if found < 0:
                return
            start = found + len(literal)
        kind = after[i + len(PREFIX) : end]
        pos_a = end + 1
        following = after[pos_a : after.find(PREFIX, pos_a) if PREFIX in after[pos_a:] else None]
        if not following:
            if pos_a == len(after) and not before.startswith(PREFIX, start):
                _note_value(before[start:], kind, into)  # the text ends with the value
                return
            pos_b = start  # two markers in a row: where the first ends is unknown
            continue
        stop = before.find(following[:64], start)
        if stop < 0:
            return
        if before.startswith(PREFIX, start):
            pos_b = stop
            continue  # a marker that was there before
        _note_value(before[start:stop], kind, into)
        pos_b = stop


def mask_repeats(text: str, found: dict[str, str]) -> str:
    """``text`` with every occurrence of a noted value masked (longest values first)."""
    for value in sorted(found, key=len, reverse=True):
        if value in text:
            text = text.replace(value, PREFIX + found[value] + "]")
    return text


# -- what a command generates ----------------------------------------------------------
#
# A command that makes a secret prints it bare: ``openssl rand -hex 32``, ``pwgen 20 1``,
# ``head -c 32 /dev/urandom | base64``, ``python -c "import secrets; print(
# secrets.token_urlsafe())"``, ``wg genkey``. Nothing in the output says what it is; the
# command does. Its output's generated-looking words are noted like masked values (see
# ``extract.masked``), so they are masked there and wherever the session repeats them.

_GENERATORS = (
    "openssl rand", "pwgen", "apg ", "makepasswd", "/dev/urandom", "/dev/random", "token_hex",
    "token_urlsafe", "token_bytes", "get_random_secret_key", "generate_key", "gen-random",
    "genkey", "genpsk", "generatepassword", "generate-password", "pass generate",
    "bw generate", "keepassxc-cli generate", "rails secret", "rake secret", "key:generate",
    "randombytes", "randomnumbergenerator", "getrandomvalues", "secrets.choice",
    "random_password", "randompassword",
)  # fmt: skip


def generated(command: str, outputs: Iterable[str]) -> dict[str, str]:
    """The words of ``outputs`` that ``command`` generated as secrets ({value: kind}):
    none unless the command is one that makes secrets; then every word of 8 or more
    characters that is no plain lower-case word, path, URL or mask."""
    low = command.lower()
    if not any(g in low for g in _GENERATORS):
        return {}
    found: dict[str, str] = {}
    for output in outputs:
        for word in output.split():
            core = word.strip(_STRIP)
            if (
                len(core) >= 8
                and PREFIX[1:] not in core  # (a mask, its bracket stripped)
                and "://" not in core
                and core[0] not in "/~$%"
                and not (core.isalpha() and core.islower())
                and "\\" not in core
            ):
                found[core] = "generated"
    return found


# -- a secret masked in an earlier payload ---------------------------------------------
#
# ctxmode.secret_memory remembers (as keyed digests) the values masked in a project's
# earlier payloads; mask_known finds them again in a later one. Which words of a text
# are worth hashing: those of a remembered length, and, inside a word, each piece that
# starts and ends next to a punctuation mark (``pass=X``, ``user:X@host``, ``"X",``).
# ``-``, ``_`` and ``.`` join the parts of names (``test_invoice_2.py``, ``us-east-1``)
# and of secrets alike: they border a piece only at the end of a word ("… to X.").

# Kinds whose mask covers a structure (a header's parameters, a cookie's names): of the
# words in it only long ones are values worth remembering.
_SPAN_KINDS = frozenset({"authorization", "cookie"})
# What borders a value inside a word (ASCII, and the CJK and fullwidth marks a sentence
# in those scripts puts around one: パスワードは「X」。).
_BORDERS = frozenset(
    "!\"#$%&'()*+,/:;<=>?@[\\]^`{|}~"
    "\u3001\u3002\u300c\u300d\u300e\u300f\u3010\u3011\uff08\uff09\uff0c\uff1a\uff1b"
    "\uff01\uff1f\u201c\u201d\u2018\u2019\u00ab\u00bb"
)
_EDGES = "".join(sorted(_BORDERS)) + "-_."
KNOWN_KIND = "remembered"


def memorable(value: str, kind: str = "credential") -> bool:
    """Whether a value masked once is worth finding again in later payloads: a word that
    can only be a secret (letters and digits, or letters and symbols; a long number),
    never a plain word, a name of code (``DB_PASSWORD``, ``os.environ``), a reference
    (``${X}``, ``%X%``), a path or a URL: masking those everywhere would wreck the text.
    ``value`` as remembered: without punctuation at its ends (see :func:`memory_form`)."""
    n = len(value)
    if n < _REPEAT_MIN_RANDOM or PREFIX in value or "\\" in value or not value.isprintable():
        return False
    if kind in _SPAN_KINDS and n < 16:
        return False
    if value[0] in "/~.$%{<" or "://" in value or "${" in value or " " in value:
        return False
    if code_shaped(value) or camel_name(value):
        return False  # code ("torch.Size([4", "2>/dev/null") or a name: no password
    if key_file(value) or public_key_value(value):
        return False  # id_ed25519_github, SHA256:…, AAAAC3Nz…: public, or a file's name
    alpha = digit = symbol = False
    for c in value:
        if c.isalpha():
            alpha = True
        elif c.isdigit():
            digit = True
        elif c not in "-_.":
            symbol = True
    if alpha and digit:
        return True
    if alpha:  # letters alone: a run that changes case like random bytes ("qXbT-vRmw_KfzLpa")
        return (symbol and n >= 8) or ("." not in value and n >= 12 and _changes(value) >= 0.4 * n)
    return digit and not symbol and n >= 8


def memory_form(value: str) -> str:
    """A masked value as it is remembered: the punctuation at its ends left off (what
    borders it in a later text may be any), unless that leaves a reference (``$X``)."""
    if value[:1] in "$%{<":
        return value
    return value.strip(_EDGES)


def _known_candidates(word: str, lengths: frozenset[int]) -> set[str]:
    """The pieces of ``word`` of a remembered length that start and end at its edges or
    next to a bordering mark, with no punctuation at their own ends."""
    n = len(word)
    found = {word} if n in lengths else set()
    if word.isalnum():
        return found
    starts = {0}
    ends = {n, len(word.rstrip(_EDGES))}
    for i, c in enumerate(word):
        if c in _BORDERS:
            starts.add(i + 1)
            ends.add(i)
    for start in starts:
        for length in lengths:
            if start + length in ends:
                piece = word[start : start + length]
                if piece[0] not in _EDGES and piece[-1] not in _EDGES:
                    found.add(piece)
    return found


def mask_known(text: str, memory: Any) -> str:
    """``text`` with every value ``memory`` remembers masked (``[REDACTED:remembered]``).

    ``memory``: ``lengths`` (the remembered values' lengths) and ``knows(value)``
    (ctxmode.secret_memory.Memory). Only the words of a text that could be one are
    hashed: most texts cost a split and a length test per distinct word."""
    lengths = memory.lengths
    if not lengths or not text:
        return text
    shortest = min(lengths)
    hits: set[str] = set()
    for word in set(text.split()):
        if len(word) < shortest:
            continue
        for candidate in _known_candidates(word, lengths):
            if memory.knows(candidate):
                hits.add(candidate)
    for hit in sorted(hits, key=len, reverse=True):
        text = text.replace(hit, PREFIX + KNOWN_KIND + "]")
    return text


# Query and fragment parameters whose values are secrets in a URL.
# (The names that end like a secret, access_token or X-Amz-Credential, are the endings'.)
_URL_SECRET_NAMES = frozenset(
    {
        "key", "sig", "pwd", "pass", "auth", "code", "session", "sessionid", "sid",
        "credentials", "jwt", "authorization", "passphrase", "otp", "session_id", "hmac",
        "passcode",
    }
)  # fmt: skip
_URL_SECRET_ENDINGS = (
    "token", "_key", "-key", "secret", "signature", "password", "credential", "_pass",
    "-pass", "passwd", "_sig", "-sig", "apikey", "accesskey",
)  # fmt: skip


def _secret_param(name: str) -> bool:
    low = name.lower()
    return low in _URL_SECRET_NAMES or low.endswith(_URL_SECRET_ENDINGS)


def _mask_params(params: str) -> str:
    out: list[str] = []
    for pair in params.split("&"):
        name, eq, value = pair.partition("=")
        if eq and value and _secret_param(name) and not value.startswith(PREFIX):
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


# -- names -------------------------------------------------------------------------------

# What a credential-like name ends with (lower-cased, see _CRED_WORD): for the keys of
# structured values (a JSON object's "api_key", an env list's {"name": "X_TOKEN"}).
_NAME_ENDINGS = (
    "token", "secret", "password", "passwd", "passphrase", "passcode", "pwd", "credential",
    "credentials", "apikey", "accesskey", "privatekey", "clientkey", "secretkey",
    "accountkey", "masterkey", "signingkey", "encryptionkey", "sessionkey", "authkey",
    "authorization", "cookie", "signature",
)  # fmt: skip
# Words that name a credential alone or after a separator (DB_PASS, x-auth, docker's
# "auth"); "key" only after one (API_KEY, not a bare "key").
_NAME_WORDS = ("pass", "auth", "creds", "sig")
_NAME_SUFFIXES = ("_key", "_pass", "_auth", "_creds", "_sig", "_key_data", "_keydata")


def is_secret_name(name: str) -> bool:
    """Whether ``name`` (a key, a variable, a header) names a credential."""
    low = name.strip().strip("\"'$").lower()
    if low.endswith(_NAME_ENDINGS):
        return True
    flat = low.replace("-", "_").replace(".", "_")
    if flat in _NAME_WORDS or flat.endswith(_NAME_SUFFIXES):
        return True
    # camelCase: dbPass, smtpCreds, apiKey (already an ending above), webhookSig
    for word in ("Pass", "Creds", "Auth", "Sig", "Key"):
        if name.endswith(word) and len(name) > len(word) and name[-len(word) - 1].islower():
            return True
    return False


# -- private spans -------------------------------------------------------------------------


def _private_tags(text: str) -> list[tuple[int, int, int]]:
    """``(start, end, step)`` of every ``<private …>`` (step 1), ``</private>`` (step -1)
    and ``<private/>`` (step 0) tag, in order.

    Tags may carry attributes, any letter case and whitespace inside (``< private >``,
    ``</ Private >``, ``<private reason="x">``). A tag left open (no ``>``) runs to the
    end of the text.
    """
    low = text.lower()
    tags: list[tuple[int, int, int]] = []
    pos = low.find("private")
    while pos >= 0:
        after = pos + 7
        if after == len(low) or low[after] in " \t\r\n>/":
            i = pos - 1
            while i >= 0 and low[i] in " \t\r\n":
                i -= 1
            closing = i >= 0 and low[i] == "/"
            if closing:
                i -= 1
                while i >= 0 and low[i] in " \t\r\n":
                    i -= 1
            if i >= 0 and low[i] == "<" and (not tags or i >= tags[-1][1]):
                close = low.find(">", after)
                end = len(text) if close < 0 else close + 1
                if closing:
                    step = -1
                elif close > 0 and low[after:close].rstrip().endswith("/"):
                    step = 0  # <private/>: an empty span
                else:
                    step = 1
                tags.append((i, end, step))
                after = end
        pos = low.find("private", after)
    return tags


def strip_private(text: str) -> str:
    """Replace each ``<private>…</private>`` span (nestable, any case, attributes,
    whitespace inside the tags, across lines) by :data:`PRIVATE_MARK`.

    Nothing of the span is kept, but the sentence around it says that something was
    removed there ("the token is [REDACTED:private].", not "the token is ."). An
    unterminated ``<private>`` hides everything after it: better to lose the end of a
    prompt than to store what the user marked as private. A stray ``</private>`` is
    kept as text; ``<private/>`` hides nothing and leaves no mark.
    """
    if "private" not in text.lower():
        return text
    out: list[str] = []
    pos = 0
    depth = 0
    for start, end, step in _private_tags(text):
        if step == -1 and not depth:
            continue  # a stray closer: plain text
        if depth == 0:
            out.append(text[pos:start])
            if step == 1:
                out.append(PRIVATE_MARK)
        depth += step
        pos = end
    if depth == 0:
        out.append(text[pos:])
    return "".join(out)


# -- cutting and showing -------------------------------------------------------------------------


def _mask_across(text: str, n: int) -> tuple[int, int] | None:
    """(start, index of its ``]``) of the ``[REDACTED:…]`` mask that a cut at ``n`` would
    split, or None. Callers keep ``0 < n < len(text)``."""
    start = text.rfind(PREFIX, 0, n + len(PREFIX) - 1)
    if start < 0 or start >= n:
        return None
    end = text.find("]", start)
    if end < 0 or end < n:
        return None
    return start, end


def cut_at(text: str, n: int) -> int:
    """The largest index ``<= n`` at which ``text`` may be cut: never inside a mask."""
    if n <= 0 or n >= len(text):
        return max(0, min(n, len(text)))
    mask = _mask_across(text, n)
    return n if mask is None else mask[0]


def cut_from(text: str, n: int) -> int:
    """The smallest index ``>= n`` at which the tail of ``text`` may start: never inside
    a mask."""
    if n <= 0 or n >= len(text):
        return max(0, min(n, len(text)))
    mask = _mask_across(text, n)
    return n if mask is None else mask[1] + 1


def safe_head(text: str, n: int) -> str:
    """At least the first ``n`` characters of ``text``, ending where no secret is cut.

    The cut moves on to the end of its line (secrets live within a line; a private-key
    block cut here is masked to its end anyway); a line longer than 4096 characters past
    ``n`` is cut at its last space before ``n`` instead, and the word at the cut dropped.
    """
    if len(text) <= n:
        return text
    newline = text.find("\n", n, n + 4096)
    if newline >= 0:
        return text[:newline]
    space = max(text.rfind(" ", 0, n), text.rfind("\t", 0, n))
    return text[: space if space > 0 else 0]


def safe_tail(text: str, n: int) -> str:
    """At least the last ``n`` characters of ``text``, starting where no secret is cut
    (the mirror image of :func:`safe_head`)."""
    if len(text) <= n:
        return text
    start = len(text) - n
    newline = text.rfind("\n", max(0, start - 4096), start)
    if newline >= 0:
        return text[newline + 1 :]
    space = text.find(" ", start)
    return text[space + 1 :] if space >= 0 else ""


# Invisible and direction-changing characters (and terminal controls) shown as escapes:
# bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069), marks, zero-width
# and other format characters (shorthand format controls too), line/paragraph separators,
# C0/C1 controls but tab and newline, and the tag characters U+E0000-E007F.
_INVISIBLE_RANGES = (
    (0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0xAD, 0xAD), (0x34F, 0x34F),
    (0x61C, 0x61C), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F),
    (0x2028, 0x202E), (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0E),
    (0xFEFF, 0xFEFF), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFFB), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE007F), (0xE0100, 0xE01EF),
)  # fmt: skip
_visible_table: dict[int, str] = {}
_replace_tables: dict[str, dict[int, str]] = {}


def _escape(code: int) -> str:
    if code > 0xFFFF:  # a surrogate pair: valid in JSON text as well
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def visible(text: str, replacement: str | None = None) -> str:
    """``text`` with invisible, direction-changing and control characters shown as
    ``\\uXXXX`` escapes (tab and newline kept), or each replaced by ``replacement``.

    The escapes are also valid inside JSON strings: a serialised JSON document stays
    valid and decodes to the same data.
    """
    if text.isascii() and text.isprintable():
        return text
    if replacement is not None:
        table = _replace_tables.get(replacement)
        if table is None:
            table = _replace_tables[replacement] = {
                code: replacement
                for low, high in _INVISIBLE_RANGES
                for code in range(low, high + 1)
            }
        return text.translate(table)
    if not _visible_table:
        for low, high in _INVISIBLE_RANGES:
            for code in range(low, high + 1):
                _visible_table[code] = _escape(code)
    return text.translate(_visible_table)
