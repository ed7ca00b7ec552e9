"""The four masking holes 0.5.0 left open, each by its structure, with generated values.

1. An unquoted value split by plain spaces (``PASSWORD=abc def ghi`` in an env file or at
   the start of a shell statement): masked to the end of the statement, never past
   ``&&``, ``;``, ``|``, a comment or the next ``KEY=``; a command that the assignment
   only prefixes (``PGPASSWORD=x psql -h db``) keeps its words.
2. A bare ``user/password@connect-identifier`` (Oracle's ``scott/X@db:1521/ORCL``) with
   no command before it.
3. Fullwidth (and other compatibility) letters: detected on the NFKC form, masked in
   the original characters.
4. Positional credentials: the argument position of a call that *is* the password
   (``pymysql.connect("db", "u", X)``, ``ftplib.FTP(h, u, X)``, paramiko's
   ``connect(h, 22, u, X)``, ``cx_Oracle.connect(u, X, dsn)``, ``login(user, X)``,
   ``auth=(user, X)``).

Every value is random (``tests.helpers.generation_seed``); only the text around it is
fixed. The last tests hold what is no secret.
"""

from __future__ import annotations

import json
import random
import string

import pytest

from ctxmode import redact
from ctxmode.extract import masked
from ctxmode.payload import from_dict
from tests.helpers import generation_seed

SEED = generation_seed()
PIECE = 6  # a value's words are short: any run of this many characters must be gone
SYMBOLS = "!#%^*-_+=.~"
WORDS = ("tulip", "canyon", "orbit", "maple", "violet", "harbor", "copper", "falcon",
         "lantern", "meadow", "quartz", "river", "saddle", "timber", "walnut", "ember")  # fmt: skip


def _rng(salt: str) -> random.Random:
    return random.Random(f"{SEED}-{salt}")


def _password(rng: random.Random, symbols: str = SYMBOLS) -> str:
    body = "".join(rng.choice(string.ascii_letters + string.digits + symbols) for _ in range(12))
    return rng.choice(string.ascii_letters) + body + rng.choice(string.digits)


def _leaks(text: str, value: str) -> bool:
    """Whether any run of :data:`PIECE` characters of ``value`` (or all of it) is in ``text``."""
    if len(value) <= PIECE:
        return value in text
    return any(value[i : i + PIECE] in text for i in range(len(value) - PIECE + 1))


def _through_a_hook(text: str) -> str:
    """``text`` as a shell command, its output and a prompt, masked at the choke point."""
    out = []
    for raw in (
        {"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": text}, "tool_response": {"stdout": f"ok\n{text}\n"}},
        {"session_id": "s", "cwd": "/p", "hook_event_name": "UserPromptSubmit",
         "prompt": f"look at this:\n{text}"},
        # A long output is masked line by line, where the rules' markers are.
        {"session_id": "s", "cwd": "/p", "hook_event_name": "PostToolUse", "tool_name": "Bash",
         "tool_input": {"command": "make"},
         "tool_response": {"stdout": "compiling module\n" * 300 + text + "\ndone\n"}},
    ):  # fmt: skip
        inp = masked(from_dict(raw, str(raw["hook_event_name"])))
        out.append(json.dumps(inp.raw, default=str, ensure_ascii=False))
    return "\n".join(out)


# ------------------------------------------------------------ 1. a value split by spaces


def _spaced(rng: random.Random) -> tuple[str, str]:
    """A value of two to four words: a passphrase, or a password cut by spaces."""
    if rng.random() < 0.5:
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 4))]
        words[rng.randrange(len(words))] += str(rng.randint(10, 99))
        return " ".join(words), words[-1]
    p = _password(rng, "!#%^*_+.~")
    cut = [0, 0]
    while cut[1] - cut[0] < 4:  # three pieces of four characters or more
        cut = sorted(rng.sample(range(4, len(p) - 3), 2))
    return f"{p[: cut[0]]} {p[cut[0] : cut[1]]} {p[cut[1] :]}", p[cut[1] :]


SPACED_FORMS = [
    "PASSWORD={v}",
    "export DB_PASSWORD={v}",
    "DB_PASSWORD={v}\nDB_NAME=app",
    "API_TOKEN={v} && make deploy",
    "SECRET_KEY={v}; echo done",
    "ADMIN_PASS={v} | tee log",
    "MYSQL_ROOT_PASSWORD={v} MYSQL_DATABASE=app",
    "  - POSTGRES_PASSWORD={v}",
    "set SMTP_PASSWORD={v}",
    "REDIS_PASSWORD={v}  # rotated",
    "+DB_PASSWORD={v}",  # a line of a diff
    "-set SA_PASSWORD={v}",
    'echo "DB_PASSWORD={v}" >> .env',  # a string holding the statement
]


@pytest.mark.parametrize("form", SPACED_FORMS)
def test_an_unquoted_value_split_by_spaces_is_masked_to_the_end_of_its_statement(
    form: str,
) -> None:
    rng = _rng(form)
    for _ in range(12):
        value, last = _spaced(rng)
        text = form.format(v=value)
        out = _through_a_hook(text)
        assert not _leaks(out, last), (SEED, text, redact.mask(text))
        for word in value.split():  # (each word of four characters or more)
            assert not _leaks(redact.mask(text), word), (SEED, text, redact.mask(text))


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("API_TOKEN={v} && make deploy", " && make deploy"),
        ("SECRET_KEY={v}; echo done", "; echo done"),
        ("ADMIN_PASS={v} | tee log", " | tee log"),
        ("MYSQL_ROOT_PASSWORD={v} MYSQL_DATABASE=app", " MYSQL_DATABASE=app"),
        ("REDIS_PASSWORD={v}  # rotated", "  # rotated"),
        ("DB_PASSWORD={v}\nDB_NAME=app", "\nDB_NAME=app"),
        ('echo "DB_PASSWORD={v}" >> .env', '" >> .env'),
    ],
)
def test_what_ends_a_statement_is_kept(text: str, kept: str) -> None:
    value, _last = _spaced(_rng(text))
    out = redact.mask(text.format(v=value))
    assert out.endswith("=[REDACTED:credential]" + kept), out
    encoded = json.dumps(text.format(v=value))  # JSON-encoded text, as an event's data
    assert redact.mask(encoded) == json.dumps(out)


@pytest.mark.parametrize(
    "text",
    [
        "PGPASSWORD={p} psql -h db -U app app",
        "PGPASSWORD={p} psql app",
        "DB_PASSWORD={p} ./bin/migrate up",
        "GIT_PASSWORD={p} git push origin main",
        "API_TOKEN={p} python3 scripts/sync.py",
        "docker run -e POSTGRES_PASSWORD={p} postgres:16",
        "mysql --password={p} app",
    ],
)
def test_a_command_the_assignment_prefixes_keeps_its_words(text: str) -> None:
    p = _password(_rng(text), "")
    full = text.format(p=p)
    out = redact.mask(full)
    assert p not in out
    assert out == full.replace(p, "[REDACTED:credential]") or out == full.replace(
        p, "[REDACTED:password]"
    ), out


# ------------------------------------------------------------ 2. user/password@host


def _user(rng: random.Random) -> str:
    return rng.choice(["scott", "system", "app_user", "hr", "c##admin", "svc$batch", "ops"])


CONNECT_FORMS = [
    "{u}/{p}@db.internal:1521/ORCLPDB1",
    "{u}/{p}@//db.example.com:1521/orcl",
    "{u}/{p}@orcl",
    "ORACLE_DSN={u}/{p}@db:1521/XE",
    'dsn = "{u}/{p}@prod-db/service"',
    'cx_Oracle.connect("{u}/{p}@db:1521/xe")',
    "exp {u}/{p}@orcl file=full.dmp",
    "impdp {u}/{p}@pdb1 directory=DP",
    "connect {u}/{p}@orcl",
    "DB_CONNECT={u}/{p}@(DESCRIPTION=(ADDRESS=(HOST=db)(PORT=1521)))",
    'sql.Open("mysql", "{u}:{p}@tcp(db.internal:3306)/app")',  # Go's DSN
    "DSN={u}:{p}@unix(/run/mysqld/mysqld.sock)/app",
]


@pytest.mark.parametrize("form", CONNECT_FORMS)
def test_a_bare_user_slash_password_at_a_connect_identifier_is_masked(form: str) -> None:
    rng = _rng(form)
    for _ in range(12):
        u, p = _user(rng), _password(rng, "!#%^*-_+.~@")
        text = form.format(u=u, p=p)
        out = _through_a_hook(text)
        assert not _leaks(out, p), (SEED, text, redact.mask(text))
        assert f"{u}/" in redact.mask(text) or f"{u}:" in redact.mask(text)  # the user stays


@pytest.mark.parametrize(
    "text",
    [
        "connect scott/tiger@orcl",
        "sqlplus -s scott/tiger@orcl",
        "scott/tiger@db.internal:1521/ORCL",
        "scott/tiger@//db:1521/xe",
    ],
)
def test_a_password_of_letters_is_masked_where_the_structure_says_connect(text: str) -> None:
    assert "tiger" not in redact.mask(text)


# ------------------------------------------------------------ 3. fullwidth letters

_FULLWIDTH = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits + "=:_"}


def _wide(text: str) -> str:
    return "".join(_FULLWIDTH.get(c, c) for c in text)


WIDE_FORMS = [
    ("{w:password}={p}", False),
    ("{w:password}{w:=}{p}", False),
    ("{w:DB_PASSWORD}={p}", False),
    ("{w:api_token}: {p}", False),
    ("the {w:password} is {p}", False),
    ("{w:password}={w_p}", True),
    ("export {w:SECRET}={w_p}", True),
    ("mysql -u root -p{w_p}", True),
]


def _fill(form: str, p: str) -> str:
    out = form.replace("{p}", p).replace("{w_p}", _wide(p))
    while "{w:" in out:
        a = out.index("{w:")
        b = out.index("}", a)
        out = out[:a] + _wide(out[a + 3 : b]) + out[b + 1 :]
    return out


@pytest.mark.parametrize(("form", "wide_value"), WIDE_FORMS)
def test_fullwidth_letters_are_read_as_their_ascii_and_masked_where_they_stand(
    form: str, wide_value: bool
) -> None:
    rng = _rng(form)
    for _ in range(12):
        p = _password(rng, "!#%^*-_+")
        text = _fill(form, p)
        value = _wide(p) if wide_value else p
        out = _through_a_hook(text)
        assert not _leaks(out, value), (SEED, text, redact.mask(text))
        m = redact.mask(text)
        assert "[REDACTED:" in m
        # The text around the mask keeps its own characters (detection only is NFKC).
        head = text[: text.index(value)]
        assert m.startswith(head), (text, m)


def test_several_masks_in_fullwidth_text_keep_the_text_between_them_as_it_was() -> None:
    rng = _rng("several")
    p, t = _password(rng, "!#%^*-_+"), _password(rng, "")
    text = f"[REDACTED:private] {_wide('password')}={p} ａｎｄ {_wide('API_TOKEN')}={_wide(t)} ｏｋ"
    out = redact.mask(text)
    assert out == (
        f"[REDACTED:private] {_wide('password')}=[REDACTED:credential] ａｎｄ "
        f"{_wide('API_TOKEN')}=[REDACTED:credential] ｏｋ"
    )


def test_text_without_compatibility_characters_is_not_normalised() -> None:
    text = "the ｐａｓｓｗｏｒｄ field is required; パスワード：なし"
    assert redact.mask(text) == text
    assert redact.mask("…and ﬁnally ① café") == "…and ﬁnally ① café"


# ------------------------------------------------------------ 4. positional credentials

POSITIONAL_FORMS = [
    'conn = pymysql.connect("db", "{u}", "{p}", "app")',
    "conn = MySQLdb.connect('db.internal', '{u}', '{p}')",
    'cnx = mysql.connector.connect("db", "{u}", "{p}")',
    'conn = psycopg2.connect(host, "{u}", "{p}")',
    'conn = pymssql.connect(server, user, "{p}", "app")',
    'ftp = ftplib.FTP("ftp.example.com", "{u}", "{p}")',
    'ftp = FTP_TLS(host, user, "{p}")',
    'client.connect("bastion", 22, "{u}", "{p}")',
    'ssh.connect(hostname, 2222, username, "{p}")',
    'con = cx_Oracle.connect("{u}", "{p}", "db:1521/orcl")',
    'con = oracledb.connect(user, "{p}", dsn)',
    'server.login(sender, "{p}")',
    'imap.login(os.environ["IMAP_USER"], "{p}")',
    'r = requests.get(url, auth=(user, "{p}"))',
    'auth = HTTPBasicAuth(cfg.user, "{p}")',
    'Connection conn = DriverManager.getConnection(url, "{u}", "{p}");',
    '$db = new mysqli("localhost", "{u}", "{p}", "app");',
    '$pdo = new PDO($dsn, "{u}", "{p}");',
    "$link = mysqli_connect('db', '{u}', '{p}');",
    'conn = pymysql.connect(\n    "db",\n    "{u}",\n    "{p}",\n)',
]


@pytest.mark.parametrize("form", POSITIONAL_FORMS)
def test_a_password_given_by_its_position_in_a_known_call_is_masked(form: str) -> None:
    rng = _rng(form)
    for _ in range(12):
        u, p = _user(rng), _password(rng, "!#%^*-_+.~")
        text = form.replace("{u}", u).replace("{p}", p)
        out = _through_a_hook(text)
        assert not _leaks(out, p), (SEED, text, redact.mask(text))
        assert "[REDACTED:password]" in redact.mask(text), redact.mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "sqlite3.connect('app.db')",
        "sock.connect(('127.0.0.1', 8080))",
        "conn = pymysql.connect(host, user, password, db)",
        'client.connect("bastion", 22, username, password)',
        "self.button.clicked.connect(self.on_click)",
        'signal.connect(handler, sender, "weak")',
        "login(request, user)",
        'ftp = ftplib.FTP("ftp.example.com")',
        'ftp.login("anonymous", "")',
        "actions/checkout@v4",
        "uses: actions/setup-python@v5.1.0",
        "npm i @scope/pkg@1.2.3 lodash/fp@4",
        "docker pull library/nginx@sha256:" + "ab12" * 16,
        "git show stash@{0} refs/heads/main@{1}",
        "see images/icon@2x.png and owner/repo@main",
        "team/Service2@prod and docs/alice@example.com",
        "ssh alice:staging@host",
        "go install golang.org/x/tools/cmd/stringer@latest",
        'b"""(B+<_pR,UFcb-n-Vr/1iJ-0JP==1c70M3&s#]4?Ykm5X@_(6q"""',  # base85 data
        "PASSWORD_FILE=/run/secrets/db make deploy",
        "TOKEN_URL=https://auth.example.com/token curl -s x",
    ],
)
def test_what_only_resembles_these_shapes_is_kept(text: str) -> None:
    assert redact.mask(text) == text


@pytest.mark.parametrize(
    ("text", "tail"),
    [
        ("            is_first_token=self.x == 0,", " == 0,"),
        (
            "    sort_key=lambda arg: default_sort_key(arg.subs(c))",
            " arg: default_sort_key(arg.subs(c))",
        ),
        ("            auth=merge_setting(request.auth, self.auth),", ", self.auth),"),
        ("PASSWORD=abc def)", " def)"),
    ],
)
def test_a_keyword_argument_of_code_is_no_statement_of_an_unquoted_value(
    text: str, tail: str
) -> None:
    """(Its first word is the credential rule's, as before: the words after it stay.)"""
    assert redact.mask(text).endswith("]" + tail)
