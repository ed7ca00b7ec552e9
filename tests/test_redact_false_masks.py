"""Ordinary text that the masker took for a secret in imported public transcripts, and
the real secret of the nearby shape that must keep its mask.

Each test pairs a text wrongly masked before (the answer a search must find was lost,
and a remembered false positive spread to every later output of the project) with a
secret written the same way. The texts are realistic, the values generated here.
"""

from __future__ import annotations

from ctxmode import redact
from ctxmode.redact import mask


def R(kind: str) -> str:
    return f"[REDACTED:{kind}]"


def test_a_regex_alternation_of_words_in_a_search_is_no_credential() -> None:
    for line in (
        'python test_eq.py 2>&1 | grep -E "PASSED|FAILED"',
        "grep -n 'PASSWORD_MIN\\|PASSWORD_MAX' src/settings.py",
        "Select-String -Pattern 'MinimumPasswordLength|PasswordHistorySize'",
        "grep -rn 'password' src/settings.py docs/setup.md",
        'grep -rn "tiam\\|GetNewMachineToken\\|machine.token\\|iamToken" services/',
        'grep -rn "!ADMIN\\|!ADMINISTRATION\\|^admin$" --include="*.md" docs/auth/',
    ):
        assert mask(line) == line
    # A generated value searched for keeps its mask, alternation or not.
    secret = "Zq8vN2kLm4Rt7Yw"
    assert secret not in mask(f'grep -rn "password={secret}" .')
    assert secret not in mask(f'grep -E "token|{secret}" app.log')


def test_pass_as_an_english_word_is_no_key_name() -> None:
    for text in (
        "Forward Pass Config - Gain: torch.Size([4, 5]), Freq: torch.Size([4, 5])",
        "**Pass 1: Stale references** done. **Pass 2: Root frontmatter** next.",
        "Pass 2 of 3: checking links",
        "## 2026-07-30 — Quiz copy pass: all eight questions, one at a time",
        "Everything in this pass was reviewed as YAML.",
        "    --- PASS: TestDevMachinesSuite (0.00s)\n        --- PASS: TestAbc (0.01s)",
    ):
        assert mask(text) == text, text
    # "pass" as a key's name, in the same places, keeps the mask.
    assert mask("db pass: hunter2x") == f"db pass: {R('credential')}"
    assert mask("pass: letmein") == f"pass: {R('credential')}"
    assert mask("my pass is Xk9-2aa") == f"my pass is {R('credential')}"
    assert mask("PASS=Qw3rtyUi") == f"PASS={R('credential')}"


def test_a_value_that_is_code_is_no_password() -> None:
    for text in (
        "const token = getToken();",
        "        token = stream.read(1)[0]",
        '  password: process.env.DB_PASSWORD || "fallback",',
        'op item create --category=SSH_KEY "private_key=$PRIVATE_KEY"',
        'curl -s -H "Authorization: Bearer $TOKEN" http://localhost:3001/api/projects',
        "Frequency Response Shape: torch.Size([4, 513])\nsecret shape: torch.Size([4, 513])",
        "node -e \"console.log('DB_PASSWORD:', process.env.DB_PASSWORD ? 'set' : 'unset')\"",
        "      ...(token ? { Authorization: `Bearer ${token}` } : {}),",
        # Left unmasked, the name reached through an object puts the credential word in
        # the line; the header's name beside it is no password either.
        "        if self.credentials.token:\n"
        "            request.headers['X-Amz-Security-Token'] = self.credentials.token",
        "        if self.credentials.token is not None:\n"
        "            fields['X-Amz-S3session-Token'] = self.credentials.token",
    ):
        assert mask(text) == text, text
    # The same names with a value written out keep their masks.
    assert mask('const token = "tk_9fQ2pLm7ZrX4";') == f'const token = "{R("credential")}";'
    assert mask("  password: Hunter2Secret!,").startswith(f"  password: {R('credential')}")
    assert mask('"private_key=Kq8vN2kLm4Rt7Yw"') == f'"private_key={R("credential")}"'
    bearer = mask('curl -H "Authorization: Bearer abcDEF123ghiJKL456" http://x')
    assert "abcDEF123ghiJKL456" not in bearer
    assert "abcDEF123ghiJKL456" not in mask("{ Authorization: `Bearer abcDEF123ghiJKL456` }")
    assert mask("x = {'password':'Hunter2Secret'}") == f"x = {{'password':'{R('credential')}'}}"


def test_a_command_substitution_continued_over_lines_is_no_secret_block() -> None:
    text = (
        "TOKEN=$(curl -s -X POST http://localhost:3001/api/auth/login \\\n"
        '  -H "Content-Type: application/json" \\\n'
        "  | python3 -c 'import sys,json; print(json.load(sys.stdin)[\"token\"])')"
    )
    assert mask(text) == text
    # A value continued with a backslash is still masked, every line of it.
    secret = "TOKEN=Zq8vN2kLm4Rt7Yw\\\n  Pq3xB6nM1sW9eR\n"
    masked = mask(secret)
    assert "Zq8vN2kLm4Rt7Yw" not in masked and "Pq3xB6nM1sW9eR" not in masked


def test_a_small_count_after_a_secret_name_is_no_password() -> None:
    for text in (
        "pass=0\nfail=0",
        "# count each pass and fail\n+ NC='\\033[0m'\n+ pass=0\n+ fail=0\n+ echo ''\n",
        "- Jay's scorer - 6-factor weighted scoring, thresholds: pass=7.5, review=5.0",
        "gpg:       secret keys read: 1\ngpg:   secret keys imported: 1",
    ):
        assert mask(text) == text
    assert mask("the password is 7") == f"the password is {R('credential')}"
    assert mask("PIN=4821") == f"PIN={R('credential')}"


def test_a_path_of_names_and_ids_is_no_key_material() -> None:
    text = (
        "?? CHAT_LOGS/0d98b9aa-bbbc-4221-ad36-d4a3e0e5e710.jsonl\n"
        " create mode 100644 Archives/7c55c8a2-5df4-4bdf-bf23-104315eb04c2.jsonl"
    )
    assert mask(text) == text
    key = "z2Pk0Qlps9Kkhb9EXKRDVqbz2mBXNYLT/RPlYT/ukHw="  # base64 with "/" in it
    assert mask(f"peer {key}") == f"peer {R('key-material')}"


def test_a_name_made_of_capitalised_words_does_not_look_random() -> None:
    assert not redact.looks_random("TestDevMachinesSuite")
    assert not redact.looks_random("getUserAccountName")
    assert redact.looks_random("qXbTvRmwKfzLpaZaPl")  # letters that change case at random
    # Noted once as masked, a name is not hunted down in the rest of the payload.
    found: dict[str, str] = {}
    redact._note_value("TestDevMachinesSuite", "credential", found)
    assert found == {}
    redact._note_value("qXbTvRmwKfzLpaZaPl", "credential", found)
    assert found == {"qXbTvRmwKfzLpaZaPl": "credential"}


def test_the_memory_refuses_a_value_that_is_code() -> None:
    for value in ("torch.Size([4", "stream.read(1)[0]", "2>/dev/null", "getToken()"):
        form = redact.memory_form(value)
        assert not redact.memorable(form), value
        found: dict[str, str] = {}
        redact._note_value(value, "credential", found)
        assert found == {}, value
    for value in ("Hunter2Secret!", "Zq8vN2kLm4Rt7Yw", "tulip-canyon-orbit-42"):
        assert redact.memorable(redact.memory_form(value)), value


def test_a_log_line_with_a_time_of_day_is_no_pgpass_entry() -> None:
    line = (
        "\x1b[0;34m[VERBOSE][2025-08-25 16:41:50.104][build-zfs.sh:2903:setup_repositories]"
        "\x1b[0m Debian Experimental - Cutting edge packages"
    )
    assert mask(line) == line
    # A .pgpass entry keeps its mask, a numeric host and all.
    assert mask("10:5432:appdb:app:Zq8vN2kLm4") == f"10:5432:appdb:app:{R('password')}"
    assert "hunter2x" not in mask("db.internal:5432:*:app:hunter2x")
