"""A seeded corpus of fake secrets, planted the way a coding session carries them (issue 12).

Every class of the red-team report, and every class masked before it, is generated with
random values (``random.Random(seed)``: the same seed gives the same corpus), wrapped in
the text that carries it in real life (a command line, a ``.env`` file, a YAML config, a
header, a URL, a sentence of a prompt…) and planted through a hook payload of the real
shape (tool inputs, tool outputs, failing commands, prompts, long logs). A ``Planted``
records the secret part (what must never be stored, whole or as any 10-character piece):
only the random part, never the fixed text around it.

The values avoid whitespace, quotes, backslashes and the brackets and separators
``,;<>(){}[]`` so that a leak check can cut any stored byte string at those characters
and index its 10-character windows (see ``tests/test_privacy_corpus.py``).
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.helpers import hook_payload

PROJECT = "/home/dev/proj"
ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
# Symbols a generated password may hold (none of them cuts a stored word, see above).
PW_SYMBOLS = "!@#$%^*-_+=.~:/&|?"
PIECE = 10


@dataclass
class Planted:
    """One secret: its class, the secret parts and the text that carries it."""

    cls: str
    parts: list[str]
    text: str


@dataclass
class Call:
    """One hook call: its event, payload and the secrets planted in it."""

    event: str
    payload: dict[str, Any]
    planted: list[Planted] = field(default_factory=list)


def pieces(secret: str, width: int = PIECE) -> Iterator[str]:
    """``secret`` and every ``width``-character piece of it."""
    yield secret
    for i in range(len(secret) - width + 1):
        yield secret[i : i + width]


class Gen:
    """Random values of the shapes secrets have."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def token(self, n: int = 32, alphabet: str = ALNUM) -> str:
        """Random, with letters and at least one digit (as generated tokens have)."""
        while True:
            value = self.s(n, alphabet)
            if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
                return value

    def password(self, lo: int = 12, hi: int = 20) -> str:
        """Letters, digits and symbols; starts and ends with a letter or digit."""
        n = self.rng.randint(lo, hi)
        middle = self.s(n - 2, ALNUM * 3 + PW_SYMBOLS)
        return self.s(1, string.ascii_letters) + middle + self.s(1, string.digits)

    def pick(self, options: list[Any] | tuple[Any, ...]) -> Any:
        return self.rng.choice(options)

    def word(self) -> str:
        return self.pick(WORDS)


WORDS = (
    "invoice", "billing", "staging", "deploy", "worker", "gateway", "payments", "search",
    "reports", "ledger", "orders", "metrics", "mailer", "uploader", "scheduler",
)  # fmt: skip


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


# ---------------------------------------------------------------------------------------
# Classes. Each returns (text, parts): the text as it is written, the secret parts in it.

Maker = Callable[[Gen], tuple[str, list[str]]]


def _known(g: Gen) -> dict[str, Maker]:
    """Classes masked before issue 12: provider tokens, PEM blocks, headers, names."""

    def anthropic(g: Gen) -> tuple[str, list[str]]:
        v = g.token(93, URLSAFE)
        return f"sk-ant-api03-{v}AA", [v]

    def openai(g: Gen) -> tuple[str, list[str]]:
        v = g.token(48, URLSAFE)
        return f"{g.pick(['sk-proj-', 'sk-', 'sk-svcacct-'])}{v}", [v]

    def github(g: Gen) -> tuple[str, list[str]]:
        if g.rng.random() < 0.3:
            v = g.token(22) + "_" + g.token(59)
            return f"github_pat_{v}", [v]
        v = g.token(36)
        return f"{g.pick(['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'])}{v}", [v]

    def gitlab(g: Gen) -> tuple[str, list[str]]:
        v = g.token(20, URLSAFE)
        return f"glpat-{v}", [v]

    def slack_bot(g: Gen) -> tuple[str, list[str]]:
        v = g.token(24)
        return (
            f"{g.pick(['xoxb-', 'xoxp-'])}{g.s(12, string.digits)}-{g.s(13, string.digits)}-{v}",
            [v],
        )

    def aws_key_id(g: Gen) -> tuple[str, list[str]]:
        v = g.token(16, UPPER_DIGITS)
        return f"{g.pick(['AKIA', 'ASIA'])}{v}", [v]

    def aws_secret(g: Gen) -> tuple[str, list[str]]:
        v = g.token(40, ALNUM + "/+")
        form = g.pick(["aws_secret_access_key = {v}", "AWS_SECRET_ACCESS_KEY={v}",
                       '"SecretAccessKey": "{v}"', "secretAccessKey: {v}"])  # fmt: skip
        return form.format(v=v), [v]

    def google_api(g: Gen) -> tuple[str, list[str]]:
        v = g.token(35, URLSAFE)
        return f"AIza{v}", [v]

    def stripe(g: Gen) -> tuple[str, list[str]]:
        v = g.token(g.rng.randint(24, 60))
        return f"{g.pick(['sk_live_', 'rk_live_', 'sk_test_'])}{v}", [v]

    def jwt(g: Gen) -> tuple[str, list[str]]:
        head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        body = _b64url(
            json.dumps({"sub": g.token(12), "exp": g.rng.randint(10**9, 2 * 10**9)}).encode()
        )
        sig = g.token(43, URLSAFE)
        return f"{head}.{body}.{sig}", [body, sig]

    def pem(g: Gen) -> tuple[str, list[str]]:
        kind = g.pick(["RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
                       "ENCRYPTED PRIVATE KEY"])  # fmt: skip
        lines = [g.token(64, B64) for _ in range(g.rng.randint(3, 8))]
        body = "\n".join(lines)
        return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", lines

    def bearer(g: Gen) -> tuple[str, list[str]]:
        v = g.token(40, ALNUM + "._-~+/")
        return f"Authorization: Bearer {v}", [v]

    def basic(g: Gen) -> tuple[str, list[str]]:
        v = base64.b64encode(f"{g.word()}:{g.password()}".encode()).decode()
        return f"Authorization: Basic {v}", [v.rstrip("=")]

    def userinfo(g: Gen) -> tuple[str, list[str]]:
        v = g.token(16)
        scheme = g.pick(["https", "postgres", "mysql", "redis", "amqp", "mongodb+srv"])
        return f"{scheme}://{g.word()}:{v}@db.example.com:5432/{g.word()}", [v]

    def curl_user(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        return f"curl -u {g.word()}:{v} https://api.example.com/v1/{g.word()}", [v]

    def env_name(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["DB_PASSWORD", "API_TOKEN", "CLIENT_SECRET", "STRIPE_SECRET_KEY",
                       "SECRET_KEY", "PRIVATE_KEY", "AWS_ACCESS_KEY", "MYSQL_PWD", "PGPASSWORD",
                       "SLACK_BOT_TOKEN", "GOOGLE_CREDENTIALS", "JWT_SECRET", "SESSION_SECRET"])  # fmt: skip
        return g.pick(["export {n}={v}", "{n}={v}", '{n}="{v}"', "{n}='{v}'"]).format(
            n=name, v=v
        ), [v]

    def json_name(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["password", "api_key", "apiKey", "accessToken", "client_secret", "token"])
        return f'{{"{name}": "{v}", "user": "{g.word()}"}}', [v]

    def flag(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        form = g.pick(["deploy --token={v} --env prod", "cli --api-key {v} run",
                       "tool --secret {v}", "app --password={v}"])  # fmt: skip
        return form.format(v=v), [v]

    return {
        "known:anthropic": anthropic, "known:openai": openai, "known:github": github,
        "known:gitlab-pat": gitlab, "known:slack-bot": slack_bot, "known:aws-key-id": aws_key_id,
        "known:aws-secret": aws_secret, "known:google-api-key": google_api,
        "known:stripe": stripe, "known:jwt": jwt, "known:pem": pem, "known:bearer": bearer,
        "known:basic-auth": basic, "known:url-userinfo": userinfo, "known:curl-user": curl_user,
        "known:env-name": env_name, "known:json-name": json_name, "known:flag": flag,
    }  # fmt: skip


def _new(g: Gen) -> dict[str, Maker]:
    """The classes the red team found leaking (issue 12)."""
    H = HEX

    # -- URLs in free text -----------------------------------------------------------
    def url_param(g: Gen) -> tuple[str, list[str]]:
        v = g.token(g.rng.randint(16, 40), URLSAFE)
        name = g.pick(["sig", "signature", "X-Amz-Signature", "X-Amz-Credential", "token",
                       "access_token", "key", "api_key", "code", "secret", "password",
                       "client_secret", "refresh_token", "X-Amz-Security-Token", "apikey"])  # fmt: skip
        base = f"https://{g.word()}.example.com/{g.word()}"
        if g.rng.random() < 0.15:  # a token inside an encoded redirect URL
            tok = g.token(36)
            return f"{base}?next=%2Fcb%3Fx%3D1%26token%3Dghp_{tok}", [tok]
        if g.rng.random() < 0.5:
            return f"{base}?page=2&{name}={v}&lang=en", [v]
        return f"{base}?{name}={v}", [v]

    def userinfo_unencoded(g: Gen) -> tuple[str, list[str]]:
        left, right = g.token(10), g.token(10)
        v = left + g.pick(["@", ":", "@@", "!@", ":@", "/", "#"]) + right
        return f"https://{g.word()}:{v}@{g.word()}.example.com/{g.word()}", [left, right, v]

    # -- command lines and headers ------------------------------------------------------
    def cmd(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        form = g.pick([
            "aws configure set aws_secret_access_key {v}",
            "mysql -h db -u root -p{v} {w}",
            "mysqldump --password {v} -u admin {w}",
            "psql --password={v} -U admin",
            "mysql --password={v} {w}",
            "curl -u {w}:{v} https://api.example.com/{w}",
            "curl --user {w}:{v} https://api.example.com/{w}",
            "docker login -u {w} -p {v} registry.example.com",
            "podman login --username {w} --password {v} quay.io",
            "sshpass -p {v} ssh deploy@{w}.example.com",
            "redis-cli -h cache -a {v} ping",
            "echo {v} | docker login --password-stdin -u {w} ghcr.io",
            "docker login --username {w} --password-stdin <<< {v}",
            "curl -u{w}:{v} https://api.example.com/",
            "keytool -importkeystore -srcstorepass {v} -deststorepass {v}",
            'docker run {w} ["mysqld", "--password", "{v}"]',
            "smbclient //files/{w} -U admin%{v}",
            "ldapsearch -x -D cn=admin -w {v} -b dc={w}",
            "az login -u {w}@example.com -p {v}",
        ])  # fmt: skip
        return form.format(v=v, w=g.word()), [v]

    def aws4(g: Gen) -> tuple[str, list[str]]:
        sig = g.s(64, H)
        kid = g.token(16, UPPER_DIGITS)
        return (
            f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{kid}/20250101/us-east-1/s3/aws4_request, "
            f"SignedHeaders=host;x-amz-date, Signature={sig}",
            [sig, kid],
        )

    def cookie(g: Gen) -> tuple[str, list[str]]:
        v, w = g.token(32, URLSAFE), g.token(24, URLSAFE)
        form = g.pick(["Cookie: sessionid={v}; csrftoken={w}",
                       "Set-Cookie: session={v}; Path=/; HttpOnly; Secure",
                       "set-cookie: {n}_sid={v}; Max-Age=3600",
                       "curl -b 'sid={v}' https://app.example.com/"])  # fmt: skip
        parts = [v, w] if "{w}" in form else [v]
        return form.format(v=v, w=w, n=g.word()), parts

    # -- assignments with credential-like names ---------------------------------------------
    def env_file(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["DB_PASS", "SMTP_PASS", "REDIS_PASSWD", "ADMIN_PASSWD", "GPG_PASSPHRASE",
                       "SSH_KEY_PASSPHRASE", "MAIL_PASS", "LDAP_BIND_PASSWORD", "APP_SECRET",
                       "WEBHOOK_SECRET", "OAUTH_CLIENT_SECRET", "SIGNING_KEY", "ENCRYPTION_KEY",
                       "db_pass", "smtpPass", "SECRET_KEY_BASE", "API_TOKEN_2", "DB_PW",
                       "dbPassword", "AUTH"])  # fmt: skip
        return g.pick(["{n}={v}", "export {n}={v}", '{n}="{v}"']).format(n=name, v=v), [v]

    def yaml(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["password", "db_password", "secret", "api_key", "token", "passphrase",
                       "client_secret", "auth_token", "private_key"])  # fmt: skip
        form = g.pick(["{n}: {v}", "{w}:\n  host: db\n  {n}: {v}\n  port: 5432", '{n}: "{v}"',
                       "  {n}: '{v}'"])  # fmt: skip
        return form.format(n=name, v=v, w=g.word()), [v]

    def toml(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["password", "token", "secret_key", "api_key"])
        return f'[{g.word()}]\nhost = "db"\n{name} = "{v}"', [v]

    def json_cfg(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        name = g.pick(["password", "dbPassword", "secret", "apiKey", "authToken", "passphrase"])
        return f'{{"{g.word()}": {{"host": "db", "{name}": "{v}"}}}}', [v]

    def xml(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        form = g.pick(["<password>{v}</password>", "<apiKey>{v}</apiKey>",
                       '<add key="DbPassword" value="{v}"/>',
                       "<db:Password>{v}</db:Password>", '<secret id="1">{v}</secret>',
                       '<entry key="db.password">{v}</entry>',
                       '<Setting Name="ApiKey" Type="string">{v}</Setting>'])  # fmt: skip
        return form.format(v=v), [v]

    def netrc(g: Gen) -> tuple[str, list[str]]:
        v = g.password()
        form = g.pick(["machine api.{w}.com login me@example.com password {v}",
                       "machine git.{w}.org\n  login deploy\n  password {v}\n",
                       "default login anonymous password {v}"])  # fmt: skip
        return form.format(v=v, w=g.word()), [v]

    def conn_string(g: Gen) -> tuple[str, list[str]]:
        v = g.token(44, B64)
        w = g.password()
        form = g.pick([
            "DefaultEndpointsProtocol=https;AccountName={n};AccountKey={v};EndpointSuffix=core.windows.net",
            "Endpoint=sb://{n}.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={v}",
            "Server=tcp:db,1433;Database={n};User ID=sa;Password={w};Encrypt=true",
            "Host=db;Username={n};Password={w};Database=app",
        ])  # fmt: skip
        return form.format(v=v, w=w, n=g.word()), [v] if "{v}" in form else [w]

    def docker_auth(g: Gen) -> tuple[str, list[str]]:
        v = base64.b64encode(f"{g.word()}:{g.token(20)}".encode()).decode()
        return f'{{"auths": {{"ghcr.io": {{"auth": "{v}"}}}}}}', [v.rstrip("=")]

    # -- provider formats -------------------------------------------------------------------
    def npm(g: Gen) -> tuple[str, list[str]]:
        v = g.token(36)
        return g.pick(["npm_{v}", "//registry.npmjs.org/:_authToken=npm_{v}"]).format(v=v), [v]

    def pypi(g: Gen) -> tuple[str, list[str]]:
        v = g.token(g.rng.randint(60, 120), URLSAFE)
        return f"pypi-AgEIcHlwaS5vcmc{v}", [v]

    def huggingface(g: Gen) -> tuple[str, list[str]]:
        v = g.token(34)
        return f"hf_{v}", [v]

    def twilio(g: Gen) -> tuple[str, list[str]]:
        v = g.s(32, H)
        return f"SK{v}", [v]

    def sendgrid(g: Gen) -> tuple[str, list[str]]:
        a, b = g.token(22, URLSAFE), g.token(43, URLSAFE)
        return f"SG.{a}.{b}", [a, b]

    def discord_bot(g: Gen) -> tuple[str, list[str]]:
        a = base64.b64encode(str(g.rng.randint(10**17, 10**18)).encode()).decode().rstrip("=")
        b, c = g.token(6, URLSAFE), g.token(38, URLSAFE)
        return f"{a}.{b}.{c}", [a, c]

    def discord_webhook(g: Gen) -> tuple[str, list[str]]:
        v = g.token(68, URLSAFE)
        return f"https://discord.com/api/webhooks/{g.s(18, string.digits)}/{v}", [v]

    def digitalocean(g: Gen) -> tuple[str, list[str]]:
        v = g.s(64, H)
        return f"{g.pick(['dop_v1_', 'doo_v1_', 'dor_v1_'])}{v}", [v]

    def databricks(g: Gen) -> tuple[str, list[str]]:
        v = g.s(32, H)
        return f"dapi{v}", [v]

    def shopify(g: Gen) -> tuple[str, list[str]]:
        v = g.s(32, H)
        return f"{g.pick(['shpat_', 'shpca_', 'shppa_', 'shpss_'])}{v}", [v]

    def telegram(g: Gen) -> tuple[str, list[str]]:
        v = "AA" + g.token(33, URLSAFE)
        bot = g.s(10, string.digits)
        return g.pick(["{b}:{v}", "https://api.telegram.org/bot{b}:{v}/sendMessage"]).format(
            b=bot, v=v
        ), [v]

    def mailgun(g: Gen) -> tuple[str, list[str]]:
        v = g.s(32, H)
        return f"key-{v}", [v]

    def slack_more(g: Gen) -> tuple[str, list[str]]:
        v = g.token(40)
        form = g.pick(["xapp-1-A{a}-{d}-{v}", "xoxe.xoxp-1-{v}", "xoxe-1-{v}",
                       "https://hooks.slack.com/services/T{a}/B{a}/{v}"])  # fmt: skip
        return form.format(a=g.s(10, UPPER_DIGITS), d=g.s(13, string.digits), v=v), [v]

    def stripe_webhook(g: Gen) -> tuple[str, list[str]]:
        v = g.token(32)
        return f"whsec_{v}", [v]

    def gitlab_more(g: Gen) -> tuple[str, list[str]]:
        v = g.token(20, URLSAFE)
        return f"{g.pick(['glrt-', 'gldt-', 'glptt-', 'glft-'])}{v}", [v]

    def google_oauth(g: Gen) -> tuple[str, list[str]]:
        v = g.token(g.rng.randint(60, 150), URLSAFE)
        w = g.token(28, URLSAFE)
        return g.pick([(f"ya29.{v}", [v]), (f"GOCSPX-{w}", [w]), (f"1//0{v}", [v])])  # type: ignore[no-any-return]

    # -- natural language -------------------------------------------------------------------------
    def prose(g: Gen) -> tuple[str, list[str]]:
        v = g.password(10, 16)
        t = g.token(24)
        d = g.s(9, string.digits)
        form, value = g.pick([
            ("my password is {v}", v), ("the db password: {v}", v),
            ("use token {t} for the staging API", t), ("the api key is {t}", t),
            ("here is my secret: {v}", v), ("the password for prod is {v}.", v),
            ("log in with password {v} please", v), ("my github token is {t}, thanks", t),
            ("Password: {v}", v), ("use the access key {t} for S3", t),
            ("the password for admin@example.com is {v}", v), ("my pw is {v}", v),
            ("the password to log in is {v}", v), ("PIN is 4{d}", "4" + d),
            ("deploy token: {t}", t), ("my passphrase is {v}, keep it", v),
        ])  # fmt: skip
        return form.format(v=v, t=t, d=d), [value]

    return {
        "url:query-param": url_param, "url:userinfo-unencoded": userinfo_unencoded,
        "cmd:password": cmd, "header:aws4-hmac": aws4, "header:cookie": cookie,
        "assign:env": env_file, "assign:yaml": yaml, "assign:toml": toml, "assign:json": json_cfg,
        "assign:xml": xml, "assign:netrc": netrc, "assign:connection-string": conn_string,
        "assign:docker-auth": docker_auth, "provider:npm": npm, "provider:pypi": pypi,
        "provider:huggingface": huggingface, "provider:twilio": twilio,
        "provider:sendgrid": sendgrid, "provider:discord-bot": discord_bot,
        "provider:discord-webhook": discord_webhook, "provider:digitalocean": digitalocean,
        "provider:databricks": databricks, "provider:shopify": shopify,
        "provider:telegram": telegram, "provider:mailgun": mailgun,
        "provider:slack-app-webhook": slack_more, "provider:stripe-webhook": stripe_webhook,
        "provider:gitlab-runner-deploy": gitlab_more, "provider:google-oauth": google_oauth,
        "prose": prose,
    }  # fmt: skip


# ---------------------------------------------------------------------------------------
# Payloads of the real shapes (tests/fixtures/claude-code-2.1.197).


def _base(session: str, event: str) -> dict[str, Any]:
    return hook_payload(event, session_id=session, cwd=PROJECT)


class Builder:
    """Turns planted texts into hook calls, rotating through the ways a session carries them."""

    def __init__(self, session: str, g: Gen) -> None:
        self.session = session
        self.g = g
        self.n = 0

    def _tool(self, tool: str, tool_input: dict[str, Any], response: Any) -> dict[str, Any]:
        self.n += 1
        return {**_base(self.session, "PostToolUse"), "tool_name": tool, "tool_input": tool_input,
                "tool_response": response, "tool_use_id": f"toolu_{self.n:05d}"}  # fmt: skip

    def _failure(self, tool: str, tool_input: dict[str, Any], error: str) -> dict[str, Any]:
        self.n += 1
        return {**_base(self.session, "PostToolUseFailure"), "tool_name": tool,
                "tool_input": tool_input, "tool_use_id": f"toolu_{self.n:05d}",
                "error": error, "is_interrupt": False}  # fmt: skip

    def prompt(self, text: str) -> Call:
        return Call("UserPromptSubmit", {**_base(self.session, "UserPromptSubmit"), "prompt": text})

    def bash(self, command: str, stdout: str = "", stderr: str = "") -> Call:
        response = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
        return Call(
            "PostToolUse",
            self._tool("Bash", {"command": command, "description": "Run it"}, response),
        )

    def bash_failure(self, command: str, error: str) -> Call:
        return Call("PostToolUseFailure", self._failure("Bash", {"command": command}, error))

    def write(self, name: str, content: str) -> Call:
        path = f"{PROJECT}/{name}"
        response = {"type": "create", "filePath": path, "content": content, "structuredPatch": []}
        return Call(
            "PostToolUse", self._tool("Write", {"file_path": path, "content": content}, response)
        )

    def edit(self, name: str, old: str, new: str) -> Call:
        path = f"{PROJECT}/{name}"
        lines = [f"-{line}" for line in old.splitlines()] + [
            f"+{line}" for line in new.splitlines()
        ]
        response = {"filePath": path, "oldString": old, "newString": new, "originalFile": old,
                    "structuredPatch": [{"oldStart": 1, "oldLines": 1, "newStart": 1,
                                         "newLines": 1, "lines": lines}]}  # fmt: skip
        return Call("PostToolUse", self._tool("Edit", {"file_path": path, "old_string": old,
                                                       "new_string": new}, response))  # fmt: skip

    def read(self, name: str, content: str) -> Call:
        path = f"{PROJECT}/{name}"
        response = {"type": "text", "file": {"filePath": path, "content": content,
                                             "numLines": content.count("\n") + 1}}  # fmt: skip
        return Call("PostToolUse", self._tool("Read", {"file_path": path}, response))

    def mcp(self, text: str) -> Call:
        tool_input = {"query": text, "api_key": text.split()[0] if text.split() else text}
        return Call("PostToolUse", self._tool("mcp__vault__lookup", tool_input,
                                              [{"type": "text", "text": text}]))  # fmt: skip

    def web_fetch(self, url: str, prompt: str) -> Call:
        response = {"bytes": 1200, "code": 200, "codeText": "OK", "result": prompt, "url": url}
        return Call("PostToolUse", self._tool("WebFetch", {"url": url, "prompt": prompt}, response))

    def web_fetch_failure(self, url: str, error: str) -> Call:
        return Call("PostToolUseFailure", self._failure("WebFetch", {"url": url}, error))

    def web_search(self, query: str) -> Call:
        return Call("PostToolUse", self._tool("WebSearch", {"query": query},
                                              {"query": query, "results": [query]}))  # fmt: skip

    def task(self, subject: str, description: str) -> Call:
        response = {"task": {"id": str(self.n), "subject": subject}}
        return Call("PostToolUse", self._tool("TaskCreate", {"subject": subject,
                                                             "description": description}, response))  # fmt: skip

    def agent(self, description: str, prompt: str, reply: str) -> Call:
        response = {"status": "completed", "prompt": prompt, "agentType": "general-purpose",
                    "content": [{"type": "text", "text": reply}]}  # fmt: skip
        return Call("PostToolUse", self._tool("Agent", {"description": description, "prompt": prompt,
                                                        "subagent_type": "general-purpose"}, response))  # fmt: skip

    def plan(self, plan: str) -> Call:
        return Call("PostToolUse", self._tool("ExitPlanMode", {"plan": plan}, {"plan": plan}))


# Which carriers suit which text (a URL is fetched, a command run, a config file read …).
def _carriers(b: Builder, family: str, texts: list[str]) -> Call:
    g = b.g
    joined = "\n".join(texts)
    w = g.word()
    if family == "url":
        choice = g.rng.randrange(5)
        if choice == 0:
            return b.web_fetch(texts[0], f"Summarise it. Also fetched: {' '.join(texts[1:])}")
        if choice == 1:
            return b.web_fetch_failure(texts[0], f"Request failed with status 403: {joined}")
        if choice == 2:
            return b.bash(" && ".join(f"curl -s '{t}'" for t in texts), stdout=joined)
        if choice == 3:
            return b.prompt(f"Please check these links:\n{joined}")
        return b.bash(f"./fetch.sh {w}", stdout=f"fetched:\n{joined}", stderr=f"error: {texts[0]}")
    if family == "cmd":
        choice = g.rng.randrange(4)
        if choice == 0:
            return b.bash(" && ".join(texts), stdout="done")
        if choice == 1:
            return b.bash_failure(
                " && ".join(texts), f"Exit code 1\n+ {texts[0]}\nerror: access denied"
            )
        if choice == 2:
            return b.prompt(f"Run this for me:\n{joined}")
        return b.bash(f"bash -x ./{w}.sh", stderr="\n".join(f"+ {t}" for t in texts))
    if family == "file":
        choice = g.rng.randrange(6)
        if choice == 0:
            return b.bash(f"cat config/{w}.env", stdout=joined)
        if choice == 1:
            return b.write(f"config/{w}.yaml", joined)
        if choice == 2:
            return b.edit(f"config/{w}.env", "# placeholder", joined)
        if choice == 3:
            return b.read(f"config/{w}.conf", joined)
        if choice == 4:
            return b.bash_failure(
                f"./load-config config/{w}", f"Exit code 2\nparse error near:\n{joined}"
            )
        return b.prompt(f"Here is my config, why does it fail?\n\n{joined}\n")
    if family == "prose":
        return b.prompt(" ".join(t if t.endswith((".", ",")) else t + "." for t in texts))
    # "any": a token can turn up anywhere.
    choice = g.rng.randrange(14)
    if choice == 12:  # a log read: kept like a command's output, its middle's error lines
        filler = "\n".join(f"GET /api/{w}?page={n} 200" for n in range(60))
        return b.read(f"logs/{w}.log", f"{filler}\nerror: auth failed for {joined}\n{filler}")
    if choice == 13:  # a background agent's report, in the client's notice that it ended
        return b.prompt(
            f"<task-notification>\n<task-id>a{w}</task-id>\n<status>completed</status>\n"
            f'<summary>Agent "Audit {w}" completed</summary>\n<result>Found these:\n{joined}\n'
            "</result>\n</task-notification>"
        )
    if choice == 0:
        return b.bash(f"echo {texts[0]}", stdout=joined)
    if choice == 1:
        return b.bash(f"./{w}.sh", stdout="starting\n" + joined, stderr=f"warning: {texts[-1]}")
    if choice == 2:
        return b.bash_failure(
            f"deploy {texts[0]}", f"Exit code 1\nerror: invalid credentials {joined}"
        )
    if choice == 3:
        return b.prompt(f"The service rejects these, can you check why?\n{joined}")
    if choice == 4:
        return b.mcp(joined)
    if choice == 5:
        return b.task(f"Rotate {texts[0]}", joined)
    if choice == 6:
        return b.agent(
            f"Check {texts[0]}", f"Find where these are used: {joined}", f"Found {joined}"
        )
    if choice == 7:
        return b.web_search(f"{texts[0]} leaked")
    if choice == 8:
        return b.edit(
            f"src/{w}.py", "KEY = None", "\n".join(f"KEY_{i} = '{t}'" for i, t in enumerate(texts))
        )
    if choice == 9:
        return b.plan("## Plan\n" + "\n".join(f"- revoke {t}" for t in texts))
    if choice == 10:
        return b.read(f"notes/{w}.txt", joined)
    return b.write(f"notes/{w}.txt", joined)


FAMILY = {
    "url:": "url", "cmd:": "cmd", "header:": "cmd", "assign:": "file", "prose": "prose",
    "known:env-name": "file", "known:json-name": "file", "known:aws-secret": "file",
    "known:flag": "cmd", "known:curl-user": "cmd", "known:bearer": "cmd",
    "known:basic-auth": "cmd", "known:url-userinfo": "url",
}  # fmt: skip


def _family(cls: str) -> str:
    for prefix, family in FAMILY.items():
        if cls.startswith(prefix):
            return family
    return "any"


# ---------------------------------------------------------------------------------------
# Cuts: a secret placed exactly where an extractor cuts (issue 12, "cut before mask").


def _cut_calls(b: Builder, g: Gen, makers: dict[str, Maker]) -> list[Call]:
    calls: list[Call] = []

    def token() -> tuple[str, list[str]]:
        cls = g.pick(sorted(k for k in makers if k.startswith(("known:", "provider:"))
                            and k not in ("known:pem",)))  # fmt: skip
        return makers[cls](g)

    def assignment() -> tuple[str, list[str]]:
        return makers[g.pick(["assign:env", "known:env-name", "cmd:password", "url:query-param"])](
            g
        )

    def around(at: int, text: str, filler_word: str = "lorem") -> str:
        """Filler so that ``text`` starts a few characters before position ``at``."""
        start = max(0, at - g.rng.randint(3, 12))
        filler = (filler_word + " ") * (start // (len(filler_word) + 1) + 1)
        return filler[: start - 1] + " " + text

    def add(cls: str, call: Call, text: str, parts: list[str]) -> None:
        call.planted.append(Planted(cls, parts, text))
        calls.append(call)

    for at in (200, 400):  # error lines (bash output) and failure errors are clipped here
        text, parts = token()
        line = around(at, text, "error:")
        add("cut:error-line", b.bash("make test", stdout=f"error: {line}\n1 failed"), text, parts)
        text, parts = assignment()
        add(
            "cut:failure-error",
            b.bash_failure("make deploy", "Exit code 1\n" + around(at, text)),
            text,
            parts,
        )
    for at in (200, 300):  # the command as an error key
        text, parts = assignment()
        add(
            "cut:command-key", b.bash_failure(around(at, text, "true;"), "Exit code 1"), text, parts
        )
    # decisions / intents: sentences clipped at 300, prompts at 1000, analysis at 3000
    for at, lead in ((300, "No, use the new client instead and"), (1000, "Please fix the build"),
                     (3000, "Actually, always run the linter")):  # fmt: skip
        text, parts = g.pick([token, assignment, lambda: makers["prose"](g)])()
        add(
            "cut:prompt-sentence",
            b.prompt(lead + " " + around(at - len(lead) - 1, text, "then")),
            text,
            parts,
        )
    for at in (200, 300):  # subagent description, task subject, web search query
        text, parts = token()
        add("cut:description", b.agent(around(at, text, "review"), "check it", "ok"), text, parts)
        text, parts = token()
        add("cut:task-subject", b.task(around(at, text, "rotate"), "x"), text, parts)
        text, parts = token()
        add("cut:search-query", b.web_search(around(at, text, "why")), text, parts)
    for at in (1500, 900):  # the plan: clipped at 1500, then fitted to its budget
        text, parts = token()
        add("cut:plan", b.plan("## Plan\n" + around(at, text, "step")), text, parts)
    # long logs: at the 8 KB scan window of both ends, and across the 64 KB halves that a
    # string over 128 KB is reduced to before masking
    for at in (8192, 8192 * 2 + 100):
        text, parts = token()
        log = "\n".join(f"[{i:05d}] INFO ok step {i}" for i in range(1200))
        log = log[:at] + f"\nerror: upload failed for {text}\n" + log[at:]
        add("cut:long-log", b.bash("./run-all.sh", stdout=log), text, parts)
    for where in ("head", "tail"):
        # A key block across the line where the head (64 KB) or the tail (the last 64 KB)
        # of a 140 KB output is cut.
        pem, lines = makers["known:pem"](g)
        big = "x" * 70 + "\n"
        half = (65_536 - len(pem) // 2) // len(big)
        if where == "head":
            body = big * half + pem + "\n" + big * 1000
        else:
            body = big * 1000 + pem + "\n" + big * half
        add("cut:huge-output", b.bash("cat dump.log", stdout=body), pem, lines)
        text, parts = token()
        line = "A" * 65_530 + " " + text + " " + "B" * 70_000  # one 135 KB line, no newline
        add(
            "cut:huge-line",
            b.bash("cat blob.txt", stdout=line, stderr=f"error: {text}"),
            text,
            parts,
        )
    return calls


# ---------------------------------------------------------------------------------------
# <private> spans


def _private_calls(b: Builder, g: Gen, count: int) -> list[Call]:
    calls: list[Call] = []
    forms = [
        "keep this <private>{s}</private> and this",
        "a <PRIVATE>{s}</Private> b",
        'note <private reason="credentials">{s}</private> done',
        "x < private >{s}</ private > y",
        "x <private\n>{s}\n</private\n> y",
        "start\n<private>\nline one {s}\nline two\n</private>\nend",
        "outer <private>a <private>{s}</private> b</private> tail",
        "Use the staging box. <private>{s} and everything after, never closed",
        "before <Private Class='x'>{s}",
    ]
    for i in range(count):
        secret = "PRIV" + g.token(16)
        text = forms[i % len(forms)].format(s=secret)
        where = i % 4
        if where == 0 or "never closed" in text or i % len(forms) == 8:
            call = b.prompt(text)
        elif where == 1:
            call = b.bash_failure("make", f"Exit code 1\n{text}")
        elif where == 2:
            call = b.task(text, f"details {text}")
        else:
            call = b.bash(f"echo '{text}'", stdout=text)
        call.planted.append(Planted("private", [secret], text))
        calls.append(call)
    return calls


# ---------------------------------------------------------------------------------------


# Classes with many forms get more samples.
WEIGHT = {"prose": 3, "cmd:password": 2, "url:query-param": 2, "assign:env": 2, "assign:xml": 2}


def corpus(
    seed: int = 12, per_class: int = 8, batch: int = 5, session: str = "corpus-1"
) -> list[Call]:
    """The hook calls of one session planting ``per_class`` secrets of every class (several
    per call, ``batch`` at most), then the cuts and the private spans, in a seeded order."""
    g = Gen(seed)
    makers = {**_known(g), **_new(g)}
    b = Builder(session, g)
    pending: dict[str, list[Planted]] = {}
    for cls in sorted(makers):
        for _ in range(per_class * WEIGHT.get(cls, 1)):
            text, parts = makers[cls](g)
            assert all(len(p) >= PIECE for p in parts), (cls, parts)
            pending.setdefault(_family(cls), []).append(Planted(cls, parts, text))
    calls: list[Call] = []
    for family in sorted(pending):
        items = pending[family]
        g.rng.shuffle(items)
        size = 1 if family == "prose" and g.rng.random() < 0.3 else batch
        for start in range(0, len(items), size):
            group = items[start : start + size]
            call = _carriers(b, family, [p.text for p in group])
            call.planted.extend(group)
            calls.append(call)
    calls += _cut_calls(b, g, makers)
    calls += _private_calls(b, g, max(per_class * 2, 9))
    g.rng.shuffle(calls)
    return calls


def classes(calls: list[Call]) -> dict[str, int]:
    """How many secrets of each class ``calls`` plant."""
    counts: dict[str, int] = {}
    for call in calls:
        for planted in call.planted:
            counts[planted.cls] = counts.get(planted.cls, 0) + 1
    return dict(sorted(counts.items()))
