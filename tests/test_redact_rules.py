"""Each masking rule of ``ctxmode.redact`` by the structure it recognises, one family of
names or shapes at a time, with generated values.

``tests/test_redact.py`` shows one example per kind; these go through the families the
rules are written for (every credential-name qualifier, every value suffix, every link
word of a sentence, every secret URL parameter...), so that a name dropped from a table
or a boundary moved by one is noticed. The values are generated: consonant runs that no
rule takes for a word or a random token, so that only the rule under test can mask them.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from ctxmode import redact
from ctxmode.redact import cut_at, cut_from, is_secret_name, mask, mask_url, safe_head, visible

MARK = redact.PRIVATE_MARK  # what stands where a <private> span was removed

REPO = Path(__file__).resolve().parents[1]
R = "[REDACTED:{}]".format
CONSONANTS = "bcdfghjklmnpqrstvwxz"
TOKEN_CHARS = string.ascii_letters + string.digits


def plain(seed: object) -> str:
    """A value that reads as neither a word nor a token (a run of consonants): only a
    name or a link can say that it is a secret."""
    rng = random.Random(str(seed))
    return "".join(rng.choice(CONSONANTS) for _ in range(rng.randint(6, 14)))


def token(seed: object, n: int = 28) -> str:
    """A generated token: letters of both cases and digits, as keys and tokens are."""
    rng = random.Random(str(seed))
    return "Qz" + "".join(rng.choice(TOKEN_CHARS) for _ in range(n - 4)) + "7k"


# ---------------------------------------------------------------- credential names

# Names that hold a key: a qualifier before "key", in every casing people write.
KEY_QUALIFIERS = (
    "api", "access", "private", "secret", "client", "account", "master", "signing",
    "encryption", "session", "license", "app", "auth", "service", "subscription", "webhook",
    "consumer", "shared",
)  # fmt: skip
# Words that end a credential name; and what may follow them (SECRET_KEY_BASE, TOKEN_2).
CRED_WORDS = ("token", "secret", "password", "passwd", "passphrase", "passcode", "pwd",
              "credential", "credentials", "auth")  # fmt: skip
VALUE_SUFFIXES = ("base", "value", "data", "b64", "base64", "hex", "raw", "str", "string",
                  "plain", "text", "enc", "encrypted", "2", "12")  # fmt: skip


def _key_names() -> list[str]:
    names = []
    for q in KEY_QUALIFIERS:
        names += [q + "Key", q.upper() + "KEY", q + "key", f"{q}_key", f"X_{q.upper()}_KEY"]
    return names


def _cred_names() -> list[str]:
    names = []
    for w in CRED_WORDS:
        names += [w, w.upper(), f"db_{w}", f"SMTP_{w.upper()}", "app" + w.capitalize()]
        names += [f"{w}_{s}" for s in VALUE_SUFFIXES] + [
            f"DB_{w.upper()}_{s.upper()}" for s in VALUE_SUFFIXES
        ]
    # pass, pw and creds alone or after a separator or a lower-case letter
    names += ["pass", "DB_PASS", "smtpPass", "pw", "db_pw", "creds", "AWS_CREDS", "dbCreds"]
    return names


NAMES = _key_names() + _cred_names()


@pytest.mark.parametrize("name", NAMES)
def test_a_value_under_a_credential_name_is_masked_in_every_syntax(name: str) -> None:
    value = plain(name)
    forms = [
        f"export {name}={value}",  # shell, .env
        f'{{"{name}": "{value}", "n": 1}}',  # JSON: no prose rule can help here
        f"{name}: {value}",  # YAML
        f"config['{name}'] = '{value}'",  # code
        f'{name} = "{value}"',  # TOML
        f"<{name}>{value}</{name}>",  # XML
    ]
    for text in forms:
        assert mask(text) == text.replace(value, R("credential")), text


@pytest.mark.parametrize("name", [n for n in NAMES if n.lower().endswith(("key", *CRED_WORDS))])
def test_a_credential_flag_masks_its_argument(name: str) -> None:
    value = plain(name)
    flag = "--" + name.lower().replace("_", "-")
    for text in (f"deploy {flag} {value} --env prod", f"deploy {flag}={value}",
                 f'["deploy", "{flag}", "{value}"]'):  # fmt: skip
        assert mask(text) == text.replace(value, R("credential")), text


@pytest.mark.parametrize("flag", ["-storepass", "-keypass", "-srcstorepass", "--pass"])
def test_a_flag_ending_in_pass_takes_a_password(flag: str) -> None:
    value = plain(flag)
    assert mask(f"keytool -list {flag} {value} -v") == f"keytool -list {flag} {R('credential')} -v"


# Words that merely hold a credential word: no credential.
NOT_NAMES = ("monkey", "turkey", "keyboard", "tokenizer", "secretary", "bypass", "compass",
             "passenger", "authors", "hotkey", "donkey", "key", "keys", "pin", "sig")  # fmt: skip


@pytest.mark.parametrize("name", NOT_NAMES)
def test_a_word_that_merely_holds_a_credential_word_names_none(name: str) -> None:
    value = plain(name)
    for text in (f"{name}={value}", f'{{"{name}": "{value}"}}', f"{name} {value}"):
        assert mask(text) == text


PLACEHOLDERS = ("", "null", "None", "true", "false", "undefined", "nil", "yes", "no", "''", '""')


@pytest.mark.parametrize("empty", PLACEHOLDERS)
@pytest.mark.parametrize(
    "name", ["DB_PASSWORD", "api_token", "clientSecret", "AccountKey", "password"]
)
def test_an_empty_or_boolean_value_is_no_secret(name: str, empty: str) -> None:
    for text in (f"{name}={empty}", f'{{"{name}": "{empty}"}}', f'{{"{name}": {empty or "null"}}}',
                 f"{name}: {empty}", f"<{name}>{empty}</{name}>"):  # fmt: skip
        assert mask(text) == text


def test_an_already_masked_value_is_left_as_it_is() -> None:
    for text in (f"password={R('x')}", f"<password>{R('x')}</password>",
                 f'<add key="DbPassword" value="{R("x")}"/>', f"define('DB_PASSWORD', '{R('x')}');",
                 f"Authorization: Bearer {R('x')}", f"https://{R('x')}@host/p"):  # fmt: skip
        assert mask(text) == text


# Identifiers and digests: however random their values, never secrets.
DIGEST_NAMES = ("commit_sha", "GIT_SHA", "content_hash", "md5sum", "digest", "integrity",
                "GITHUB_REV", "etag", "build_uuid", "trace_guid", "app_version", "request_id",
                "parent_ids", "ref", "checksum", "fingerprint", "file_path", "cache_dir",
                "out_file", "base_url", "redirect_uri", "bucket_name", "docker_image",
                "image_tag", "branch", "cursor")  # fmt: skip


@pytest.mark.parametrize("name", DIGEST_NAMES)
def test_a_random_value_under_an_identifier_name_is_kept(name: str) -> None:
    value = token(name, 40)
    for text in (f"{name}={value}", f"{name}: {value}", f'"{name}": "{value}"'):
        assert mask(text) == text


@pytest.mark.parametrize("name", ["BUILD_SEED", "x", "value", "nonce_b"])
@pytest.mark.parametrize("n", [20, 21, 32])
def test_a_random_value_under_any_other_name_is_masked(name: str, n: int) -> None:
    value = token(name, n)
    for text in (f"{name}={value}", f"{name}: {value}", f"{name} =  {value}"):
        assert mask(text) == text.replace(value, R("secret")), text


# ---------------------------------------------------------------- prose


@pytest.mark.parametrize(
    "form",
    [
        "my password is {v}", "the password was {v}", "the password is now {v}",
        "the password will be {v}", "the password should be {v}", "password set to {v}",
        "the db password for staging: {v}", "passphrase = {v}", "my pw is {v}",
        "the secret is {v}", "the pwd: {v}", "my passcode is {v}",
    ],
)  # fmt: skip
def test_a_password_word_and_a_link_mask_any_value(form: str) -> None:
    value = plain(form)
    assert mask(form.format(v=value)) == form.format(v=R("credential"))


@pytest.mark.parametrize(
    "form",
    [
        "use token {t} for the API", "the api key is {t}", "the credential is {t}",
        "credentials: {t}", "license_key {t}", "license key {t}", "deploy_token {t}",
        "bot-token {t}", "accesstoken {t}", "the private key is {t}", "auth_token {t}",
        "secret_key {t}", "the key: {t}",
    ],
)  # fmt: skip
def test_a_weak_key_word_masks_a_value_that_looks_generated(form: str) -> None:
    value = token(form, 24)
    assert mask(form.format(t=value)) == form.format(t=R("credential"))


@pytest.mark.parametrize(
    "form",
    ["use token {w} for the API", "the api key is {w}", "the key: {w}", "token {w}"],
)
@pytest.mark.parametrize("word", ["Internationalization", "Authentication", "readme", "main"])
def test_a_weak_key_word_keeps_a_word(form: str, word: str) -> None:
    assert mask(form.format(w=word)) == form.format(w=word)


def test_a_netrc_entry_masks_any_password() -> None:
    for seed in range(5):
        value = plain(seed)
        for text in (f"machine h{seed}.example.com login me password {value}",
                     f"machine h{seed}.example.com\\n  login me\\n  password {value}"):  # fmt: skip
            assert mask(text) == text.replace(value, R("credential")), text


def test_a_verb_next_to_a_key_word_is_no_value() -> None:
    value = plain("pin")
    text = f"volta pin node@20, then the password is {value}"
    assert mask(text) == f"volta pin node@20, then the password is {R('credential')}"
    text = f"ssh key id_ed25519, then the password: {value}"
    assert mask(text) == f"ssh key id_ed25519, then the password: {R('credential')}"


# ---------------------------------------------------------------- URLs

SECRET_PARAMS = (
    "token", "key", "secret", "sig", "signature", "password", "passwd", "pwd", "pass", "auth",
    "access_token", "refresh_token", "id_token", "api_key", "apikey", "api-key", "code",
    "client_secret", "session", "sessionid", "sid", "credential", "credentials",
    "X-Amz-Credential", "X-Goog-Credential", "jwt", "authorization", "passphrase",
    "private_key", "otp", "session_id", "hmac", "passcode", "upload_token", "app_key",
    "x-api-key", "webhook_secret", "X-Goog-Signature", "db_password", "gcp_credential",
    "smtp_pass", "ftp-pass", "adminpasswd", "url_sig", "x-sig", "myapikey", "s3accesskey",
)  # fmt: skip
PLAIN_PARAMS = ("page", "sort", "q", "state", "token_type", "expires", "X-Amz-Expires",
                "keyword", "monkey", "passes", "signed", "codec", "sessions_count")  # fmt: skip


@pytest.mark.parametrize("name", SECRET_PARAMS)
def test_a_secret_url_parameter_is_masked(name: str) -> None:
    value = plain(name)
    for sep in ("?", "#", "?page=2&"):
        url = f"https://api.example.com/v1{sep}{name}={value}&lang=en"
        masked = url.replace(value, R("url-param"))
        assert mask_url(url) == masked
        text = mask(f"GET {url} 200")
        assert value not in text and text.startswith("GET https://api.example.com/v1"), text


@pytest.mark.parametrize("name", PLAIN_PARAMS)
def test_an_ordinary_url_parameter_is_kept(name: str) -> None:
    url = f"https://example.com/search?{name}={plain(name)}&lang=en#{name}={plain(1)}"
    assert mask_url(url) == url
    assert mask(f"GET {url} 200") == f"GET {url} 200"


def test_url_userinfo_is_dropped_whatever_it_holds() -> None:
    for seed in range(4):
        user, password = plain(seed), token(seed, 16)
        url = f"https://{user}:{password}@git.example.com:8443/o/r.git?ref=main"
        assert mask_url(url) == "https://git.example.com:8443/o/r.git?ref=main"
        assert mask(f"git clone {url}") == (
            f"git clone https://{R('url-credentials')}@git.example.com:8443/o/r.git?ref=main"
        )


# ---------------------------------------------------------------- names of structured values

SECRET_KEYS = (
    "DB_PASSWORD", "apiKey", "api_key", "clientkey", "CLIENTKEY", "secretkey", "SECRETKEY",
    "accesskey", "privatekey", "accountkey", "masterkey", "signingkey", "encryptionkey",
    "sessionkey", "authkey", "x-auth", "auth", "pass", "creds", "sig", "DB_PASS", "smtp.pass",
    "x_creds", "url_sig", "private_key_data", "tls_keydata", "dbPass", "smtpCreds",
    "webhookSig", "proxyAuth", "signingKey", "cookie", "Set-Cookie", "$GITHUB_TOKEN",
    "'password'", '"secret"', "Authorization", "X-Signature", "passphrase", "gpg_passcode",
    "MYSQL_PWD", "google_credentials", "aws_credential", " refresh_token ",
)  # fmt: skip
PLAIN_KEYS = ("key", "monkey", "name", "path", "token_count", "passed", "author", "Key",
              "signal", "keyboard", "design", "sigma", "credit")  # fmt: skip


@pytest.mark.parametrize("name", SECRET_KEYS)
def test_a_credential_key_name_is_recognised(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", PLAIN_KEYS)
def test_an_ordinary_key_name_is_not(name: str) -> None:
    assert not is_secret_name(name)


# ---------------------------------------------------------------- private-key blocks


def _pem_body(seed: int, lines: int = 3) -> list[str]:
    rng = random.Random(seed)
    alphabet = string.ascii_letters + string.digits + "+/"
    return ["".join(rng.choice(alphabet) for _ in range(64)) for _ in range(lines)]


@pytest.mark.parametrize("label", ["RSA PRIVATE KEY", "PRIVATE KEY", "OPENSSH PRIVATE KEY",
                                   "ENCRYPTED PRIVATE KEY", "EC PRIVATE KEY"])  # fmt: skip
def test_the_tail_of_a_key_block_whose_head_was_cut_is_masked(label: str) -> None:
    body = _pem_body(len(label))
    end = f"-----END {label}-----"
    raw = "output:\n" + "\n".join(body) + f"\n{end}\nnext line"
    assert mask(raw) == f"output:\n{R('private-key')}\nnext line"
    # JSON-encoded, as an event's data carries it: the line breaks are "\n" escapes
    encoded = "output:\\n" + "\\n".join(body) + f"\\n{end}\\nnext"
    assert mask(encoded) == f"output:{R('private-key')}\\nnext"
    # an escaped backslash before an "n" is no line break: the mask stops there
    escaped = "C:\\\\n" + body[0] + f"\\n{end}"
    assert mask(escaped) == f"C:\\\\n{R('private-key')}"
    # a \t escape before the body is masked whole, never split
    tabbed = "x:\\t" + body[0] + f"\\n{end}"
    assert mask(tabbed) == f"x:{R('private-key')}"


def test_other_pem_blocks_and_stray_end_lines_are_kept() -> None:
    body = "\n".join(_pem_body(7))
    for text in (
        f"{body}\n-----END CERTIFICATE-----\nok",
        f"{body}\n-----END PUBLIC KEY-----",
        f"{body}\n-----END",
        f"{body}\n-----END {'X' * 30} PRIVATE KEY-----",  # no END line is that long
    ):
        assert mask(text) == text


def test_two_cut_key_blocks_are_both_masked() -> None:
    a, b = "\n".join(_pem_body(1)), "\n".join(_pem_body(2))
    end = "-----END PRIVATE KEY-----"
    text = f"one:\n{a}\n{end}\ntwo:\n{b}\n{end}\n"
    assert mask(text) == f"one:\n{R('private-key')}\ntwo:\n{R('private-key')}\n"


# ---------------------------------------------------------------- long texts, line by line


def _filler(n: int) -> str:
    return "\n".join(f"line {i}: compiling module_{i}.py ok" for i in range(n))


@pytest.mark.parametrize(
    ("secret", "kind"),
    [
        ("DB_PASSWORD={p}", "credential"), ("the password is {p}", "credential"),
        ("mysql -u root -p{p} db", "password"), ("define('API_TOKEN', '{p}');", "credential"),
        ('<add key="ApiKey" value="{p}"/>', "credential"), ("SEED={t}", "secret"),
        ("aws configure set aws_session_token {p}", "password"),
        ("bot 123456789:{t}xyzXYZ012", "telegram-token"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("where", ["first", "middle", "last", "twice"])
def test_a_secret_anywhere_in_a_long_text_is_masked(secret: str, kind: str, where: str) -> None:
    """Long texts are masked line by line, on the lines that hold a marker only."""
    p, t = plain(secret), token(secret, 28)
    line = secret.format(p=p, t=t)
    filler = _filler(120)
    assert len(filler) > 4096
    text = {
        "first": f"{line}\n{filler}",
        "middle": f"{filler}\n{line}\n{filler}",
        "last": f"\n{filler}\n{line}",
        "twice": f"{filler}\n{line} {line}\n{filler}\n{line}",
    }[where]
    masked = mask(text)
    assert p not in masked and t not in masked
    assert masked.count(f"[REDACTED:{kind}]") == text.count(line)
    assert (
        masked.replace(f"[REDACTED:{kind}]", "")
        == "".join(text.replace(line, line.replace(p, "").replace(t, "")).split("xyzXYZ012"))
        or kind == "telegram-token"
    )
    assert mask(filler) == filler


# ---------------------------------------------------------------- cuts


def test_no_cut_splits_one_of_two_adjacent_masks() -> None:
    text = f"ab{R('github-token')}{R('jwt')} {R('x')}cd"
    spans = []
    i = text.find("[REDACTED:")
    while i >= 0:
        spans.append((i, text.index("]", i) + 1))
        i = text.find("[REDACTED:", i + 1)
    for n in range(-1, len(text) + 2):
        for cut in (cut_at(text, n), cut_from(text, n)):
            assert 0 <= cut <= len(text)
            assert not any(start < cut < end for start, end in spans), (n, cut)
        assert cut_at(text, n) <= max(n, 0) and cut_from(text, n) >= min(n, len(text))


def test_safe_head_of_one_long_line_without_a_space_is_empty() -> None:
    secret = token("head", 40) * 200
    assert safe_head(secret, 100) == ""
    assert safe_head("ab " + secret, 100) == "ab"
    assert safe_head("a " + secret, 100) == "a"
    line = token("line", 40) * 50
    assert safe_head(line + "\nnext", 100) == line


# ---------------------------------------------------------------- provider tokens

API_TOKEN_PREFIXES = ("hvs.", "hvb.", "PMAK-", "lin_api_", "AGE-SECRET-KEY-1", "glc_", "glsa_",
                      "sntrys_", "sntryu_", "NRAK-", "dp.pt.", "dp.st.", "ntn_", "rubygems_",
                      "pscale_tkn_", "pscale_pw_", "sq0atp-", "sq0csp-", "dckr_pat_")  # fmt: skip
PREFIXED = [
    *[(p, "api-token", 24) for p in API_TOKEN_PREFIXES],
    *[(p, "github-token", 36) for p in ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")],
    *[(p, "gitlab-token", 20) for p in ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-",
                                        "glcbt-", "glsoat-", "glffct-", "gloas-", "glagent-",
                                        "glwt-", "glcit-", "GR1348941")],
    *[(p, "slack-token", 24) for p in ("xoxb-", "xoxp-", "xoxa-", "xoxo-", "xoxs-", "xoxr-",
                                       "xoxe-", "xoxc-", "xoxd-", "xoxe.xoxp-", "xapp-")],
    *[(p, "stripe-key", 24) for p in ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_")],
    *[(p, "google-oauth", 32) for p in ("ya29.", "GOCSPX-", "1//0")],
    ("sk-ant-api03-", "anthropic-key", 40), ("sk-proj-", "openai-key", 40),
    ("npm_", "npm-token", 36), ("hf_", "huggingface-token", 34), ("api_org_", "huggingface-token", 34),
    ("AIza", "google-api-key", 35),
]  # fmt: skip


@pytest.mark.parametrize(("prefix", "kind", "n"), PREFIXED)
def test_a_provider_token_is_masked_by_its_prefix(prefix: str, kind: str, n: int) -> None:
    value = prefix + token(prefix, n)
    for text in (f"use {value} now", f'{{"x": "{value}"}}', f"line\\n{value}"):
        assert mask(text) == text.replace(value, R(kind)), text


def test_a_cookie_given_to_curl_is_masked() -> None:
    for flag in ("-b", "--cookie"):
        value = plain(flag)
        text = f"curl {flag} 'sid={value}' https://example.com/me"
        assert mask(text) == f"curl {flag} '{R('cookie')}' https://example.com/me"


# ---------------------------------------------------------------- what a reader sees


def _invisible(c: str) -> bool:
    """Unicode's own word on a character that hides or reorders text."""
    cat, name = unicodedata.category(c), unicodedata.name(c, "")
    return (
        (cat == "Cc" and c not in "\t\n")
        or cat in ("Zl", "Zp")
        or (cat == "Cf" and unicodedata.bidirectional(c) in
            ("BN", "LRE", "RLE", "PDF", "LRO", "RLO", "LRI", "RLI", "FSI", "PDI"))
        or name in ("LEFT-TO-RIGHT MARK", "RIGHT-TO-LEFT MARK", "ARABIC LETTER MARK")
        or (name.startswith(("INTERLINEAR ANNOTATION", "VARIATION SELECTOR",
                             "MONGOLIAN FREE VARIATION SELECTOR", "KHMER VOWEL INHERENT"))
            and name != "VARIATION SELECTOR-16")  # an emoji's colour form: shown as it is
        or name in ("COMBINING GRAPHEME JOINER", "MONGOLIAN VOWEL SEPARATOR")
        or (name.startswith(("HANGUL", "HALFWIDTH HANGUL")) and name.endswith("FILLER"))
    )  # fmt: skip


def test_every_invisible_character_is_shown_as_an_escape_and_no_other() -> None:
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    hidden = [c for c in chars if _invisible(c)]
    for c in hidden:
        assert visible(c).startswith("\\u"), hex(ord(c))
        assert json.loads(f'"{visible(c)}"') == c, hex(ord(c))  # a JSON escape of c itself
        assert visible(c, "?") == "?", hex(ord(c))
    shown = (
        c for c in chars if unicodedata.category(c)[0] in "LMNPS" or unicodedata.category(c) == "Zs"
    )
    seen = "".join(c for c in shown if not _invisible(c))
    assert visible(seen) == seen
    assert visible(seen, "?") == seen


# ---------------------------------------------------------------- the cost of a near miss

NEAR_MISSES = [
    "the token is expired and the key is missing", "max_tokens=4096 temperature=0.2",
    "def get_secret(name): ...", "3 passed, 1 skipped", "key: value", "token_count: 12",
    "volta pin node@20", "author: Ann", "password_reset.py", "use the key below",
    "the credentials are stored in the vault", "no secret here", "?page=2&sort=asc",
    'print("done")', 'log("done", "ok")', "define('LEVEL', 'debug');",
    "<b>ok</b>" + " ok" * 400 + " the token count", "SKUNKWORKS_PROJECT_ALPHA_BRAVO_CHARLIE",
]  # fmt: skip


def test_text_that_only_looks_close_never_starts_the_regex_engine() -> None:
    """Each of these holds a rule's marker: the rule's precheck, not the regex engine,
    says that nothing in it is a secret (``re`` stays unloaded for the whole process)."""
    code = (
        f"import sys; sys.path.insert(0, {str(REPO)!r}); from ctxmode.redact import mask\n"
        f"for t in {NEAR_MISSES!r}:\n"
        "    assert mask(t) == t, t\n"
        "    assert 're' not in sys.modules, t\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# ---------------------------------------------------------------- <private>


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <  \n private>X</private> b", f"a {MARK} b"),
        ("a <private>X</private><private>Y</private> b", f"a {MARK}{MARK} b"),
        ("a <private>X</  private  > b <private>Y</private>", f"a {MARK} b {MARK}"),
        ("a </private><private>X</private> b", f"a </private>{MARK} b"),
        ("<private>X</private>b", f"{MARK}b"),
        ("a<private>X</private>", f"a{MARK}"),
        ("a <private/>b<private />c", "a bc"),
        ("   private> stays", "   private> stays"),
    ],
)
def test_private_spans_next_to_each_other(text: str, expected: str) -> None:
    assert redact.strip_private(text) == expected


# ---------------------------------------------------------------- boundaries


@pytest.mark.parametrize("scheme", ["http", "https", "ftp", "ftps"])
def test_a_user_name_alone_in_a_web_or_ftp_url_is_masked(scheme: str) -> None:
    user = plain(scheme)
    text = f"fetch {scheme}://{user}@files.example.com/a"
    assert mask(text) == f"fetch {scheme}://{R('url-credentials')}@files.example.com/a"
    for kept in (f"ssh://{user}@host/r.git", f"git+ssh://{user}@host/r.git"):
        assert mask(kept) == kept


def test_a_value_of_letters_alone_looks_generated_from_24_letters() -> None:
    rng = random.Random(24)
    letters = "".join(rng.choice(CONSONANTS) for _ in range(30))
    for n in (24, 30):
        assert mask(f"use token {letters[:n]} now") == f"use token {R('credential')} now"
    assert mask(f"use token {letters[:23]} now") == f"use token {letters[:23]} now"


def test_a_pin_is_four_to_eight_digits() -> None:
    for digits in ("4821", "48213", "48213597"):
        assert mask(f"PIN: {digits}") == f"PIN: {R('credential')}"
        assert mask(f"pin={digits} ok") == f"pin={R('credential')} ok"
    for kept in ("PIN: 482", "PIN: 482135971", "pin = 18", "PIN: abcd"):
        assert mask(kept) == kept


def test_a_one_letter_password_at_the_end_is_masked() -> None:
    for word in ("password", "secret", "pwd"):
        assert mask(f"the {word} is 7") == f"the {word} is {R('credential')}"


@pytest.mark.parametrize(
    "form", ["rpcclient -U admin%{p} 10.0.0.5", "smbclient //srv/share -U admin%{p}"]
)
def test_a_password_in_an_smb_user_argument_is_masked(form: str) -> None:
    p = plain(form)
    assert mask(form.format(p=p)) == form.format(p=R("password"))


def test_an_escaped_backslash_before_a_cut_key_body_is_kept() -> None:
    body = _pem_body(9)[0]
    text = "dir\\\\" + body + "\\n-----END PRIVATE KEY-----"
    assert mask(text) == f"dir\\\\{R('private-key')}"


def test_two_secrets_on_one_line_of_a_long_text_are_both_masked() -> None:
    p, q = plain("p"), plain("q")
    line = f"DB_PASSWORD={p} API_TOKEN={q}"
    filler = "<p>build log</p> value: 3\n" + _filler(120)
    for text in (f"{filler}\n{line}\n{filler}", f"{line}\n{filler}"):
        masked = mask(text)
        assert masked.count(R("credential")) == 2 and p not in masked and q not in masked
    xml = f"{filler}\n<password>{p}</password>\n{filler}"
    assert mask(xml) == xml.replace(p, R("credential"))
    assert mask(filler) == filler


def test_a_cut_key_body_at_the_very_start_of_a_text_is_masked() -> None:
    body = "n" + _pem_body(11)[0]  # starts with an "n", the text ends with a backslash
    text = body + "\\n-----END PRIVATE KEY----- \\"
    assert mask(text) == f"{R('private-key')} \\"
