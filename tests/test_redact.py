"""Secret masking, URL cleaning and <private> stripping (ctxmode.redact)."""

from __future__ import annotations

import base64
import json
import random
import re
import string
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxmode import events, fastjson, payload, redact
from ctxmode.extract import bash
from ctxmode.redact import mask, mask_url, strip_private
from tests.hooktools import FIXTURES

REPO = Path(__file__).resolve().parents[1]

# Fake secrets in the real formats (none of them is live).
ANTHROPIC = "sk-ant-api03-" + "Xy9_aB3-" * 11 + "QQ"
OPENAI = "sk-proj-" + "Ab3dEf6h" * 6
OPENAI_LEGACY = "sk-" + "T3stKey0" * 6
GITHUB = {
    "ghp": "ghp_" + "a1B2c3D4e5" * 3 + "F6g7H8",
    "gho": "gho_" + "Z9y8X7w6v5" * 3 + "U4t3S2",
    "ghu": "ghu_" + "m1N2b3V4c5" * 3 + "X6z7L8",
    "ghs": "ghs_" + "q1W2e3R4t5" * 3 + "Y6u7I8",
    "ghr": "ghr_" + "p0O9i8U7y6" * 3 + "T5r4E3",
    "fine": "github_pat_11ABCDEFG0" + "aB3_" * 15,
}
GITLAB = "glpat-" + "x1Y2z3A4b5C6d7E8f9G0"
SLACK = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
AWS_ID = "AKIAIOSFODNN7EXAMPLE"
AWS_SESSION_ID = "ASIAY34FZKBOKMUTVV7A"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GOOGLE = "AIzaSyD-" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p"  # AIza + 35
STRIPE = {"sk_live": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc", "rk_live": "rk_live_" + "51Hx2Lk3Jd9Qw8Er",
          "sk_test": "sk_test_" + "26PHem9AhJZvU623DfE1x4sd"}  # fmt: skip
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
    ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ"
    ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
PEM_BODY = "MIIEowIBAAKCAQEA7bq98FN3sTxDR0M\nbRPUpX0hNmf4Hdt3wR5oYDu8eQ2IzqK3\n"
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "-----END RSA PRIVATE KEY-----"
OPENSSH = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"

R = "[REDACTED:{}]".format

# Issue 29's shapes, their values generated (seeded: the same cases every run).
_rng = random.Random(29)


def _gen(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isupper() for c in value):
            return value


SHADOW_HASH = f"$6${_gen(8)}${_gen(86, string.ascii_letters + string.digits + './')}"
SPLIT = [_gen(12), _gen(12), _gen(12)]
BASIC_PAIR = base64.b64encode(f"deploy:{_gen(14)}".encode()).decode()
KEY_MATERIAL = _gen(43, string.ascii_letters + string.digits + "+/") + "="

# (input, exact expected output) — one or more rows per secret kind, in the places they
# turn up: commands, file paths, errors, prompts, JSON arguments.
CASES = [
    # provider tokens
    (f"export ANTHROPIC_API_KEY={ANTHROPIC}", f"export ANTHROPIC_API_KEY={R('anthropic-key')}"),
    (f"my key is {ANTHROPIC}, use it", f"my key is {R('anthropic-key')}, use it"),
    (f"OPENAI_API_KEY={OPENAI} python app.py", f"OPENAI_API_KEY={R('openai-key')} python app.py"),
    (f"client = OpenAI(api_key='{OPENAI_LEGACY}')", f"client = OpenAI(api_key='{R('openai-key')}')"),
    *[(f"gh auth login --with-token <<< {tok}", f"gh auth login --with-token <<< {R('github-token')}")
      for tok in GITHUB.values()],
    (f"git clone https://oauth2:{GITLAB}@gitlab.com/g/p.git", f"git clone https://{R('url-credentials')}@gitlab.com/g/p.git"),
    (f"GITLAB={GITLAB}", f"GITLAB={R('gitlab-token')}"),
    (f"curl -d 'token={SLACK}' https://slack.com/api/auth.test",
     f"curl -d 'token={R('slack-token')}' https://slack.com/api/auth.test"),
    (f"aws configure set aws_access_key_id {AWS_ID}", f"aws configure set aws_access_key_id {R('aws-access-key-id')}"),
    (f"creds: {AWS_SESSION_ID}", f"creds: {R('aws-access-key-id')}"),
    (f"aws_secret_access_key = {AWS_SECRET}", f"aws_secret_access_key = {R('aws-secret-key')}"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} aws s3 ls", f"AWS_SECRET_ACCESS_KEY={R('aws-secret-key')} aws s3 ls"),
    (f"https://maps.googleapis.com/api?key={GOOGLE}", f"https://maps.googleapis.com/api?key={R('google-api-key')}"),
    *[(f"stripe {tok} ok", f"stripe {R('stripe-key')} ok") for tok in STRIPE.values()],
    (f"session={JWT}", f"session={R('jwt')}"),
    (f"Cookie: session={JWT}; theme=dark", f"Cookie: {R('cookie')}"),
    # whole private key blocks
    (f"cat id_rsa\n{PEM}\ndone", f"cat id_rsa\n{R('private-key')}\ndone"),
    (f"key:\n{OPENSSH}", f"key:\n{R('private-key')}"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B (trimmed)", R("private-key")),
    # Authorization headers, curl -H and standalone bearer tokens
    ("curl -H 'Authorization: Bearer abcdef0123456789xyz' https://api.x.com",
     f"curl -H 'Authorization: Bearer {R('authorization')}' https://api.x.com"),
    ('curl -H "authorization: Basic dXNlcjpwYXNzd29yZA==" https://x',
     f'curl -H "authorization: Basic {R("authorization")}" https://x'),
    (f"Authorization: Bearer {JWT}", f"Authorization: Bearer {R('jwt')}"),
    ("Authorization: token 0123456789abcdef", f"Authorization: token {R('authorization')}"),
    ('{"Authorization": "Bearer abcdef0123456789xyz"}', f'{{"Authorization": "Bearer {R("authorization")}"}}'),
    ("headers = {'bearer abcdefghijklmnop12'}", f"headers = {{'bearer {R('authorization')}'}}"),
    # URL userinfo
    ("git remote add origin https://dev:hunter2@github.com/o/r.git",
     f"git remote add origin https://{R('url-credentials')}@github.com/o/r.git"),
    ("DATABASE_URL=postgres://app:s3cret@db:5432/app", f"DATABASE_URL=postgres://{R('url-credentials')}@db:5432/app"),
    ("redis://:pw@cache:6379/0", f"redis://{R('url-credentials')}@cache:6379/0"),
    ("curl -u admin:Pa55word https://x", f"curl -u admin:{R('password')} https://x"),
    # credential-named variables, in every form
    ("export DB_PASSWORD=hunter2 && ./run", f"export DB_PASSWORD={R('credential')} && ./run"),
    ("PGPASSWORD='a b c' psql -h db", f"PGPASSWORD='{R('credential')}' psql -h db"),
    ('SLACK_BOT_TOKEN="xyz-123" node bot.js', f'SLACK_BOT_TOKEN="{R("credential")}" node bot.js'),
    ("CLIENT_SECRET=abc123", f"CLIENT_SECRET={R('credential')}"),
    ("SECRET_KEY=django-insecure-x", f"SECRET_KEY={R('credential')}"),
    ("PRIVATE_KEY=0xdeadbeef", f"PRIVATE_KEY={R('credential')}"),
    ("AWS_ACCESS_KEY=zzz", f"AWS_ACCESS_KEY={R('credential')}"),
    ("MYSQL_PWD=root", f"MYSQL_PWD={R('credential')}"),
    ("passwd=letmein", f"passwd={R('credential')}"),
    ("GOOGLE_CREDENTIALS=/tmp/c.json", f"GOOGLE_CREDENTIALS={R('credential')}"),
    ('{"api_key": "abc123", "query": "x"}', f'{{"api_key": "{R("credential")}", "query": "x"}}'),
    ("{'password': 'hunter2'}", f"{{'password': '{R('credential')}'}}"),
    ('{"apiKey":"k-1","accessToken":"t-2"}', f'{{"apiKey":"{R("credential")}","accessToken":"{R("credential")}"}}'),
    ("password: hunter2", f"password: {R('credential')}"),
    ("X-Api-Key: abc123", f"X-Api-Key: {R('credential')}"),
    ("mysql --password hunter2 -u root", f"mysql --password {R('credential')} -u root"),
    ("deploy --token=abc123 --env prod", f"deploy --token={R('credential')} --env prod"),
    ("cli --api-key 'k 1'", f"cli --api-key '{R('credential')}'"),
    ("https://api.x.com/v1?access_token=abc&page=2", f"https://api.x.com/v1?access_token={R('url-param')}&page=2"),
    # Recognised by structure (issue 12): provider formats, URLs in text, command lines,
    # headers, credential-like names in every syntax, prose, random values.
    ('NPM_CONFIG=npm_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQw7e',
     'NPM_CONFIG=[REDACTED:npm-token]'),
    ('twine upload -p pypi-AgEIcHlwaS5vcmcCJGFiY2RlZjAxLTIzNDUtNjc4OS1hYmNkLWVmMDEyMzQ1Njc4OQ dist/*',
     'twine upload -p [REDACTED:pypi-token] dist/*'),
    ('huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567',
     'huggingface-cli login --token [REDACTED:huggingface-token]'),
    ('twilio api key SK0f1e2d3c4b5a69788796a5b4c3d2e1f0 created',
     'twilio api key [REDACTED:twilio-key] created'),
    ('sendgrid: 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',
     'sendgrid: [REDACTED:sendgrid-key]'),
    ('discord bot MTA4NjE3NTcyODk0MjIwNzA0Mg.GhQx3a.Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zQw',
     'discord bot [REDACTED:discord-token]'),
    ('POST https://discord.com/api/webhooks/1086175728942207042/Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z-Qw7e',
     'POST https://discord.com/api/webhooks/[REDACTED:discord-webhook]'),
    ('doctl auth init -t dop_v1_0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0',
     'doctl auth init -t [REDACTED:digitalocean-token]'),
    ('databricks token dapi0f1e2d3c4b5a69788796a5b4c3d2e1f0-2 ok',
     'databricks token [REDACTED:databricks-token] ok'),
    ('shopify 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 ok',
     'shopify [REDACTED:shopify-token] ok'),
    ('telegram https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw/getMe',
     'telegram https://api.telegram.org/bot[REDACTED:telegram-token]/getMe'),
    ('mailgun key-0f1e2d3c4b5a69788796a5b4c3d2e1f0 ok',
     'mailgun [REDACTED:mailgun-key] ok'),
    ('slack xapp-1-A01ABCDEF23-1234567890123-0f1e2d3c4b5a69788796a5b4c3d2e1f0 and xoxe.xoxp-1-Mi0yLTEyMzQ1Njc4OTAxMg',
     'slack [REDACTED:slack-token] and [REDACTED:slack-token]'),
    ('curl -X POST https://hooks.slack.com/services/T01ABCDEF/B01ABCDEF/Ab3dEf6hIj9kLm2nOp5qRs8t',
     'curl -X POST https://hooks.slack.com/services/[REDACTED:slack-webhook]'),
    ('stripe listen secret whsec_Ab3dEf6hIj9kLm2nOp5qRs8tUv1w',
     'stripe listen secret [REDACTED:stripe-key]'),
    ('gitlab-runner register --token glrt-Ab3dEf6hIj9kLm2nOp5qRs and gldt-Ab3dEf6hIj9kLm2nOp5q',
     'gitlab-runner register --token [REDACTED:gitlab-token] and [REDACTED:gitlab-token]'),
    ('gcloud auth print-access-token -> ya29.a0AfB_Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z',
     'gcloud auth print-access-token -> [REDACTED:google-oauth]'),
    ('client secret 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',
     'client secret [REDACTED:google-oauth]'),
    ('vault login hvs.CAESIAb3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z',
     'vault login [REDACTED:api-token]'),
    ('download https://b.s3.amazonaws.com/k?X-Amz-Credential=abc%2F20240101&X-Amz-Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f0 now',
     'download https://b.s3.amazonaws.com/k?X-Amz-Credential=[REDACTED:url-param]&X-Amz-Signature=[REDACTED:signature] now'),
    ('callback https://app.example.com/cb?code=Zx81kPq4Lm&state=xyz',
     'callback https://app.example.com/cb?code=[REDACTED:url-param]&state=xyz'),
    ('https://user:p@ss@db.example.com:5432/app',
     'https://[REDACTED:url-credentials]@db.example.com:5432/app'),
    ('aws configure set aws_secret_access_key Wj4lrXUtnFEMI7K7MDENGbPxRfiCYzQ9KEYabc',
     'aws configure set aws_secret_access_key [REDACTED:aws-secret-key]'),
    ('mysql -u root -pS3cr3tPw mydb',
     'mysql -u root -p[REDACTED:password] mydb'),
    ('docker login -u bob -p Dk9PassWord1 registry.example.com',
     'docker login -u bob -p [REDACTED:password] registry.example.com'),
    ('Authorization: AWS4-HMAC-SHA256 Credential=x/20240101/s3/aws4_request, Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f0',
     'Authorization: AWS4-HMAC-SHA256 [REDACTED:authorization]'),
    ('Set-Cookie: sid=s%3AAb3dEf6h; Path=/; HttpOnly',
     'Set-Cookie: [REDACTED:cookie]'),
    ('X-Amz-Date: 20240101; Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f0',
     'X-Amz-Date: 20240101; Signature=[REDACTED:signature]'),
    ('DB_PASS=Qx7pl2 SMTP_PASS=Zz9kk ADMIN_PASSWD=x1y2 GPG_PASSPHRASE=long-phrase',
     'DB_PASS=[REDACTED:credential] SMTP_PASS=[REDACTED:credential] ADMIN_PASSWD=[REDACTED:credential] GPG_PASSPHRASE=[REDACTED:credential]'),
    ('<password>Xk9mP2q</password>',
     '<password>[REDACTED:credential]</password>'),
    ('<add key="DbPassword" value="Vv8s9x"/>',
     '<add key="DbPassword" value="[REDACTED:credential]"/>'),
    ('machine api.heroku.com login me@x.com password HkP4ss99',
     'machine api.heroku.com login me@x.com password [REDACTED:credential]'),
    ('AccountName=acc;AccountKey=AbCdEf0123456789+/==;EndpointSuffix=core.windows.net',
     'AccountName=acc;AccountKey=[REDACTED:credential];EndpointSuffix=core.windows.net'),
    ("define('DB_PASSWORD', 'S3cretz');",
     "define('DB_PASSWORD', '[REDACTED:credential]');"),
    ('my password is hunter2, use it',
     'my password is [REDACTED:credential], use it'),
    ('use token Tk9zQ8xW7vU6 for the staging API',
     'use token [REDACTED:credential] for the staging API'),
    ('export BUILD_SEED=Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z',
     'export BUILD_SEED=[REDACTED:secret]'),
    # issue 29: by structure, with generated values
    (f"alice:{SHADOW_HASH}:19000:0:99999:7:::",
     f"alice:{R('password-hash')}:19000:0:99999:7:::"),
    # the same hash in a shell or SQL string, its "$"s escaped
    ("INSERT INTO users VALUES ('alice', '" + SHADOW_HASH.replace("$", "\\$") + "');",
     f"INSERT INTO users VALUES ('alice', '\\{R('password-hash')}');"),
    (f"the token is ghp_{SPLIT[0]} {SPLIT[1]} {SPLIT[2]} ok",
     f"the token is {R('github-token')} ok"),
    (f"the value of the header is {BASIC_PAIR}", f"the value of the header is {R('encoded')}"),
    (f"here you go:\n{KEY_MATERIAL}\n", f"here you go:\n{R('key-material')}\n"),
]  # fmt: skip

CLEAN = [
    "ls -la",
    "git commit -m 'Fix the tokenizer for keyword arguments'",
    "max_tokens=4096 temperature=0.2",
    "if token == other: return",
    "def get_secret(name): ...",
    "the task-1234567890abcdefghijkl is done",
    "pip install scikit-learn sk-learn-compatibility-layer",
    "ssh://git@github.com/o/r.git and git@github.com:o/r.git",
    "email me at dev@example.com",
    "https://example.com/path/to/file?page=2&sort=asc",
    "monkey=banana keyboard=us",
    "token: null",
    '"password": ""',
    "The authorization flow is described in docs/auth.md",
    "Bearer of bad news",
    "cd /home/dev/proj && pwd",
    "Asia/Tokyo timezone",
    "C++ uses Token::new and Key::from",
    "password_reset.py --password-file /etc/pw.txt",
    "the token is expired and the key is missing; the password is wrong",
    "pass the tests; bypass=1; compass: north",
    "git log 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    "volta pin node@20 && ssh-add ~/.ssh/key_ed25519",
    "for key, value in items: print(key)",
    "mysql -u root -p mydb",
    "http://localhost:8080/users/me@example.com",
    "commit: 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "uuid=123e4567-e89b-12d3-a456-426614174000",
    "<tokenizer>bert</tokenizer> <author>Ann</author>",
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_each_secret_kind_is_masked(text: str, expected: str) -> None:
    assert mask(text) == expected


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_masking_is_idempotent(text: str, expected: str) -> None:
    assert mask(mask(text)) == expected


def test_every_rule_kind_is_exercised_by_a_case() -> None:
    # A rule runs only when its gate and a marker occur in the text: a wrong gate silently
    # disables it, which only a case of that kind can reveal.
    kinds = {rule[0] for rule in redact._RULES} - {"bearer", "curl-user"}
    shown = {kind for kind in kinds for _, expected in CASES if f"[REDACTED:{kind}]" in expected}
    assert kinds - shown == set()


@pytest.mark.parametrize("text", CLEAN)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert mask(text) == text


ALL_SECRETS = [
    ANTHROPIC, OPENAI, OPENAI_LEGACY, *GITHUB.values(), GITLAB, SLACK, AWS_ID, AWS_SESSION_ID,
    GOOGLE, *STRIPE.values(), JWT,
]  # fmt: skip


@pytest.mark.parametrize("secret", ALL_SECRETS)
@pytest.mark.parametrize(
    "template",
    [
        "{s}",
        "run with {s} now",
        "/home/dev/keys/{s}.txt",
        "C:\\Users\\dev\\{s}\\x",
        "error: invalid credentials '{s}'",
        "line1\n{s}\nline3",
        "(`{s}`)",
    ],
)
def test_a_token_is_masked_wherever_it_stands(secret: str, template: str) -> None:
    text = template.format(s=secret)
    assert secret not in mask(text)
    # and inside JSON-encoded event data, where the newline before it is "\n"
    data = fastjson.dumps({"text": text})
    masked = mask(data)
    assert secret not in masked
    assert "[REDACTED:" in fastjson.loads(masked)["text"]


# -- secrets in events: commands, file paths, errors, prompts, MCP arguments -------------------------


def _bash_events(command: str, stdout: str = "", stderr: str = "") -> list[events.SessionEvent]:
    inp = payload.from_dict(
        {
            "hook_event_name": "PostToolUse",
            "cwd": "/home/dev/proj",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_response": {"stdout": stdout, "stderr": stderr},
        }
    )
    inp.project_dir = "/home/dev/proj"
    return bash.extract(inp)


@pytest.mark.parametrize(
    ("command", "stdout", "stderr", "secret"),
    [
        (f"export GITHUB_TOKEN={GITHUB['ghp']} && gh pr list", "", "", GITHUB["ghp"]),
        (f"git remote add origin https://x-access-token:{GITHUB['ghs']}@github.com/o/r", "", "", GITHUB["ghs"]),
        ("git push https://dev:hunter2-pw@github.com/o/r main", "", "", "hunter2-pw"),
        (f"git commit -m 'rotate {AWS_ID}'", "", "", AWS_ID),
        (f"pip install --index-url https://u:{GITLAB}@gitlab.com/simple pkg", "", "", GITLAB),
        ("source .env && DB_PASSWORD=pw9 python -m pip install x", "", "", "pw9"),
        (f"curl -H 'Authorization: Bearer {OPENAI}' api; python t.py", "",
         f"Traceback (most recent call last):\nValueError: bad key {ANTHROPIC}", OPENAI),
        ("python t.py", f"Traceback (most recent call last):\n  File \"t.py\"\nValueError: bad key {ANTHROPIC}", "", ANTHROPIC),
        (f"npm test -- --token={SLACK}", "Tests: 1 failed, 1 total", "", SLACK),
    ],
)  # fmt: skip
def test_secrets_in_bash_calls_never_reach_event_data(
    command: str, stdout: str, stderr: str, secret: str
) -> None:
    found = _bash_events(command, stdout, stderr)
    assert found, "the call should give at least one event"
    for event in found:
        assert secret not in event.data
        assert secret not in mask(event.data)
        fastjson.loads(mask(event.data))  # still valid JSON


@pytest.mark.parametrize(
    ("type_", "data", "secret"),
    [
        ("file_read", {"path": f"secrets/{GITHUB['ghp']}.json"}, GITHUB["ghp"]),
        ("file_edit", {"path": ".env", "summary": f"OPENAI_API_KEY={OPENAI}"}, OPENAI),
        ("tool_error", {"tool": "Bash", "key": "git push",
                        "error": "fatal: Authentication failed for 'https://dev:pw-42@github.com/o/r'"}, "pw-42"),
        ("tool_error", {"tool": "Read", "key": "id_rsa", "error": f"cannot parse\n{PEM}"}, "MIIEowIBAAKCAQEA"),
        ("user_prompt", {"text": f"deploy with STRIPE_KEY={STRIPE['sk_live']} please"}, STRIPE["sk_live"]),
        ("mcp_call", {"server": "vault", "tool": "get", "args": [f"token={JWT}"]}, JWT),
        ("web_fetch", {"url": f"https://api.x.com/?api_key={GOOGLE}"}, GOOGLE),
    ],
)  # fmt: skip
def test_secrets_in_other_event_data_are_masked(
    type_: str, data: dict[str, Any], secret: str
) -> None:
    event = events.make(type_, data)
    masked = mask(event.data)
    assert secret not in masked
    assert isinstance(fastjson.loads(masked), dict)


def test_mcp_fixture_secret_argument() -> None:
    path = FIXTURES / "more/PostToolUse.mcp__mockdir__lookup.secret_arg.json"
    tool_input = json.loads(path.read_text())["payload"]["tool_input"]
    masked = mask(fastjson.dumps(tool_input))
    assert tool_input["api_key"] not in masked
    assert fastjson.loads(masked) == {
        "query": "billing-service",
        "api_key": "[REDACTED:openai-key]",
    }


def test_prompt_fixture_private_span() -> None:
    path = FIXTURES / "more/UserPromptSubmit.private_multiline.json"
    prompt = json.loads(path.read_text())["payload"]["prompt"]
    assert strip_private(prompt) == (
        "Please review the invoice module.\nIt lives in src/app.py.\n\n"
        "My staging token is [REDACTED:private], do not store it.\nThanks!"
    )


# Pieces of realistic text, JSON structure and half-written secrets, to be shuffled.
PIECES = [
    *"ab \n\"\\'=:/@-_.,{}[]()`;&|", ANTHROPIC[:20], "TOKEN=", "token: ", "https://u:p@h",
    "Bearer ", "Authorization: ", "password=", "--password ", "-----BEGIN RSA PRIVATE KEY-----",
    "curl -u ", "aws_secret_access_key=", "://", '\\"', "api_key", '"api_key": ', "[REDACTED:x]",
]  # fmt: skip
FIELD = st.lists(st.sampled_from(PIECES), max_size=15).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    fields=st.tuples(FIELD, FIELD, FIELD),
    secret=st.sampled_from([*ALL_SECRETS, PEM, OPENSSH]),
    where=st.integers(0, 2),
)
def test_masked_json_stays_valid_and_secret_free(
    fields: tuple[str, str, str], secret: str, where: int
) -> None:
    values = list(fields)
    values[where] += f" {secret} "
    data = fastjson.dumps(dict(zip(("tool", "key", "error"), values, strict=True)))
    masked = mask(data)
    assert set(fastjson.loads(masked)) == {"tool", "key", "error"}  # still valid JSON
    body = secret.splitlines()[1] if secret.startswith("-----") else secret
    assert body not in masked
    assert body not in mask(values[where])  # and as plain text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_mask_never_raises(text: str) -> None:
    assert isinstance(mask(text), str)
    assert isinstance(mask_url(text), str)
    assert isinstance(strip_private(text), str)


# -- extra user patterns -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "text", "expected"),
    [
        ((r"ACME-[0-9]{6}",), "ticket ACME-123456 done", "ticket [REDACTED:custom] done"),
        (
            (re.compile(r"internal\.corp\.example"),),
            "host internal.corp.example",
            "host [REDACTED:custom]",
        ),
        ((r"pin=(?P<secret>\d+)",), "pin=1234 ok", "pin=[REDACTED:custom] ok"),
        ((r"x(?P<secret>y)?z",), "xz xyz", "xz x[REDACTED:custom]z"),
        ((r"ACME-\d+", r"zz\d"), "ACME-1 zz9", "[REDACTED:custom] [REDACTED:custom]"),
    ],
)
def test_extra_patterns(extra: tuple[Any, ...], text: str, expected: str) -> None:
    assert mask(text, extra=extra) == expected


def test_extra_patterns_and_builtin_rules_together() -> None:
    assert mask(f"ACME-000001 {GITLAB}", extra=[r"ACME-\d{6}"]) == (
        "[REDACTED:custom] [REDACTED:gitlab-token]"
    )


# -- URLs ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://user:pass@example.com/a?b=1", "https://example.com/a?b=1"),
        (f"https://{GITHUB['ghp']}@github.com/o/r", "https://github.com/o/r"),
        ("https://example.com/cb?code=abc&state=xyz", "https://example.com/cb?code=[REDACTED:url-param]&state=xyz"),
        ("https://x.io/?token=t&key=k&secret=s&sig=1&signature=2&password=p&auth=a",
         "https://x.io/?token=[REDACTED:url-param]&key=[REDACTED:url-param]&secret=[REDACTED:url-param]"
         "&sig=[REDACTED:url-param]&signature=[REDACTED:url-param]&password=[REDACTED:url-param]"
         "&auth=[REDACTED:url-param]"),
        ("https://s3.amazonaws.com/b/o?X-Amz-Signature=abc&X-Amz-Expires=300",
         "https://s3.amazonaws.com/b/o?X-Amz-Signature=[REDACTED:url-param]&X-Amz-Expires=300"),
        ("https://app.io/#access_token=abc&token_type=bearer", "https://app.io/#access_token=[REDACTED:url-param]&token_type=bearer"),
        ("https://api.io/v1?api_key=&q=1", "https://api.io/v1?api_key=&q=1"),
        ("https://docs.python.org/3/library/re.html#module-re", "https://docs.python.org/3/library/re.html#module-re"),
        ("https://me@example.com", "https://example.com"),
        ("http://example.com/users/me@example.com", "http://example.com/users/me@example.com"),
        (f"https://example.com/{OPENAI}/x", "https://example.com/[REDACTED:openai-key]/x"),
        ("not a url", "not a url"),
    ],
)  # fmt: skip
def test_mask_url(url: str, expected: str) -> None:
    assert mask_url(url) == expected


# -- <private> spans --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # A removed span leaves its mark: the sentence still says something was there.
        ("keep <private>drop</private> keep", "keep [REDACTED:private] keep"),
        ("a <PRIVATE>x\ny\nz</Private> b", "a [REDACTED:private] b"),
        (
            "a <private>one</private> b <private>two</private> c",
            "a [REDACTED:private] b [REDACTED:private] c",
        ),
        ("a <private>outer <private>inner</private> still</private> b", "a [REDACTED:private] b"),
        ("a <private>to the end\nno close", "a [REDACTED:private]"),
        ("stray </private> closer", "stray </private> closer"),
        ("no tags at all", "no tags at all"),
        ("<private></private>", "[REDACTED:private]"),
        ("x<private>", "x[REDACTED:private]"),
        ("self-closed <private/> hides nothing", "self-closed  hides nothing"),
    ],
)
def test_strip_private(text: str, expected: str) -> None:
    assert strip_private(text) == expected


# -- cost on the hook path -------------------------------------------------------------------------------


def _modules_after(code: str) -> set[str]:
    """Modules loaded by a hook-like interpreter (-I -S) after running ``code``."""
    script = f"import sys; sys.path.insert(0, {str(REPO)!r}); {code}; print(' '.join(sys.modules))"
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, check=True
    )
    return set(out.stdout.split())


def test_masking_ordinary_text_never_imports_re() -> None:
    typical = json.dumps(
        {
            "tool": "Bash",
            "key": "pytest -q tests/test_store.py",
            "error": "1 failed, 41 passed in 3.21s",
        }
    )
    loaded = _modules_after(
        f"import ctxmode.redact as r; r.mask('ls -la'); r.mask({typical!r}); r.strip_private('x')"
    )
    assert "re" not in loaded


def test_masking_a_secret_loads_re_lazily() -> None:
    # The check above can fail: a text with a marker does load re.
    assert "re" in _modules_after(f"import ctxmode.redact as r; r.mask('GITLAB={GITLAB}')")


def test_importtime_of_redact_has_no_re() -> None:
    code = f"import sys; sys.path.insert(0, {str(REPO)!r}); import ctxmode.redact; ctxmode.redact.mask('ls -la')"
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in out.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "ctxmode.redact" in loaded
    assert "re" not in loaded


def test_a_curl_user_at_the_end_of_a_json_string_keeps_the_json_whole() -> None:
    """``curl -u a:`` ending a JSON string: the quote after the colon closes the string,
    it does not open a password (found by the property test above, kept as an example)."""
    data = fastjson.dumps({"tool": "Bash", "error": "curl -u a:"})
    assert mask(data) == data
    assert mask('curl -u admin:"S3cr3tPass" https://x') == (
        'curl -u admin:"[REDACTED:password]" https://x'
    )
