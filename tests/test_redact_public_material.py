"""Second round of false masks found in imported public transcripts: words that describe
a secret, public key material (OpenSSH keys, fingerprints, GPG key ids), the names of key
files, docker's secret specs, type annotations and a test runner's status in JSON data.

Each test pairs a realistic text that was masked before with a real secret written the
same way, which keeps its mask. Values are generated here, not taken from transcripts.
"""

from __future__ import annotations

import json

from ctxmode.redact import mask

CRED = "[REDACTED:credential]"


def unmasked(text: str) -> None:
    assert mask(text) == text, mask(text)


def test_a_word_that_describes_the_secret_after_its_name_is_prose() -> None:
    for text in (
        "Do you want custom creds? The password is hardcoded in source so it matters.",
        "Pushed. The credential warning is harmless — it fell back to another method.",
        '0|api | [auth/login] error: password authentication failed for user "app"',
        "Options:\n  --password TEXT  password: required for login\n  --token TOKEN",
        "The deploy token was revoked yesterday; the api key is missing from .env.",
    ):
        unmasked(text)
    # A value that looks generated after the same words keeps its mask.
    for text, secret in (
        ("The password is Hardc0ded-9x in source.", "Hardc0ded-9x"),
        ("The password is hunter42 in source.", "hunter42"),
        ("machine db.example.org login app password Vq7Lm2Rx9T", "Vq7Lm2Rx9T"),
        ("--password Tr0ub4dor&3 --token x", "Tr0ub4dor&3"),
        ("password: required7", "required7"),
    ):
        assert secret not in mask(text), text


def test_a_type_annotation_is_no_value() -> None:
    unmasked(
        "  async signOut(accessToken: string) {\n"
        "    refreshToken: string;\n"
        "  async verifyAppleToken(identityToken: string): Promise<{ id: string }>\n"
    )
    assert "s3cr3tV4lue" not in mask("  password: 's3cr3tV4lue',")
    assert "s3cr3tV4lue" not in mask("refreshToken: s3cr3tV4lue;")


def test_an_openssh_public_key_and_a_fingerprint_are_public() -> None:
    body = "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"
    sk_body = "AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAINDv1ziM65ac/qFtRkLhx3Wq"
    for text in (
        f'PUBLIC_KEY="ssh-ed25519 {body} ops@build"',
        # The key's type may be gone (an export that replaced it): the body names it.
        f'PUB_KEY="[host] {sk_body} ops@build"',
        f"  public key:    <email> {sk_body} <email>",
        "Accepted publickey for root from 10.0.0.7 port 55679 ssh2: ED25519 "
        "SHA256:CKiM8SFPb0uMyj8uTMiI1P5TgpSsZDPiDUxyNrcB5nc",
        "auth succeeded for 'root' with ssh-ed25519 key "
        "SHA256:CKiM8SFPb0uMyj8uTMiI1P5TgpSsZDPiDUxyNrcB5nc from 10.0.0.7",
        "ED25519 key fingerprint is: SHA256:C1R/pha7s+zFzi8JKUaO6DE4AaJclaNv+Y1HxDsRMWI",
        "256 SHA256:oQeDuOeeVJFKeVGFOchNNFTI+whklClSh/vFWUyfa54 work (ED25519)",
        "2048 MD5:12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0 ops@build (RSA)",
        "interface: wg0\n  public key: iDOkPq2eH57bILCMFmfvYtOmZLcetwfAOzm+VEUZlx0=\n",
    ):
        unmasked(text)
    # A private key's body under the same names, or random base64 that is no OpenSSH
    # key, keeps its mask.
    random_b64 = "AAAAxk9Lmq2Zp8Yt7Rw3Vn5Bc1Df4Gh6Jk0sPqR2"
    assert random_b64 not in mask(f"PRIVATE_KEY={random_b64}")
    assert random_b64 not in mask(f"  private key: {random_b64}")
    assert "iDOkPq2eH57bILCMFmfvYtOmZLcetwfAOzm" not in mask(
        "  private key: iDOkPq2eH57bILCMFmfvYtOmZLcetwfAOzm+VEUZlx0="
    )
    assert "Zt7Rw3Vn5Bc1Df4" not in mask("my password is SHA2xZt7Rw3Vn5Bc1Df4")


def test_a_key_files_name_or_path_is_no_key() -> None:
    for text in (
        "Found an SSH key that looks relevant: `id_ed25519_work`. Let me get the public key:",
        "Deleted: id_ed25519_work (duplicate)\n| `id_ed25519_work.pub` | DOCUMENT |",
        "IdentityFile ~/.ssh/id_ed25519_github\nssh-add ~/.ssh/id_rsa",
        "openvpn.sample_server.key='/etc/openvpn/server.key'\n"
        "PRIVATE_KEY_PATH=/etc/ssl/private/server.key",
    ):
        unmasked(text)
    # A password that only ends like a key's file, or is not a path, keeps its mask.
    assert "Xk9#m" not in mask("DB_PASSWORD=/Xk9#m/Q2v.key")
    assert "q7Lm2Rx9T.pem" not in mask("password: q7Lm2Rx9T.pem")


def test_a_gpg_key_id_is_public() -> None:
    for text in (
        "gpg: key 8E1F899571345D06: secret key imported\ngpg: Total number processed: 1",
        "- Key ID: `8E1F899571345D06`\n- Type: RSA 4096",
        "- `user.signingkey = 8E1F899571345D06` (configured key)",
        "signing key: 3AA5C34371567BD2",
    ):
        unmasked(text)
    # The same hex under a credential's name is a secret.
    assert "8E1F899571345D06" not in mask("api_key = 8E1F899571345D06")
    assert "8E1F899571345D06" not in mask("export GITHUB_TOKEN=8E1F899571345D06")


def test_docker_build_secret_spec_names_the_secret() -> None:
    for text in (
        "docker build --secret id=npmrc,src=$HOME/.npmrc -t app .",
        "\tdocker build --progress=plain \\\n\t\t--secret id=gh_auth_token,env=GH_AUTH_TOKEN \\",
    ):
        unmasked(text)
    assert "mysecret123" not in mask("some-tool --secret mysecret123")


def test_a_test_runners_pass_line_in_json_data_is_no_password() -> None:
    out = "=== RUN   TestA\n--- PASS: TestTriggerManager_EmitError (0.05s)\n"
    out += "    --- PASS: TestMaskSecrets/single_secret_masking (0.00s)"
    data = json.dumps({"output": out})  # an event's data: newlines arrive as \n
    unmasked(data)
    assert "Xk9mQ2vLp7" not in mask(json.dumps({"output": "ok\ndb pass: Xk9mQ2vLp7"}))


def test_a_search_line_ends_at_its_command_and_keeps_its_masks_whole() -> None:
    for text in (
        'if echo "$res" | grep -q "^PASS"; then pass=$((pass+1)); else fail=$((fail+1)); fi',
        json.dumps({"command": 'grep -q "^PASS" out.txt; then pass=$((pass+1)); fi'}),
        'git stash && cargo test 2>&1 | grep -E "FAILED|passed; .* failed"',
    ):
        unmasked(text)
    masked = mask('grep -rn "password=Zq8vN2kLm4Rt7Yw" . ; echo done')
    assert "Zq8vN2kLm4Rt7Yw" not in masked
    assert "[[" not in masked  # a mask is not masked again
    assert "Zq8vN2kLm4Rt7Yw" not in mask('grep -E "token|Zq8vN2kLm4Rt7Yw" app.log; echo')


def test_an_identifier_near_a_password_word_is_no_password() -> None:
    unmasked(
        '{"type":"error","error":{"message":"OAuth token has expired. Please obtain a new '
        'token."},"request_id":"req_011CXDHXAXLnvRWsgabwEwpd"} · Please run /login'
    )
    unmasked("- Unit: skip = SystemC link deps.\n- **e2e:** 6/6 pass after rebuilding vsim")
    assert "Xk9#mQ2vLp7" not in mask("login as admin, password Xk9#mQ2vLp7 request_id: 7")
    assert "Xk9#mQ2vLp7" not in mask("- **e2e:** pass **Xk9#mQ2vLp7**")


def test_markdown_emphasis_and_counts_after_a_credential_word_are_prose() -> None:
    for text in (
        "### Results\n\n**Secret Findings**: 16,684 → 392 (97.6% reduction)\n"
        "| **Secret Findings** | 16,684 | 392 |",
        "### 3. **Weak Password Policy**\n- **Current Settings:**",
        "**2. Enable CLI integration in 1Password:**\n   - Open 1Password app",
        "Secret findings: 16,684 (97.6% fewer)",
    ):
        unmasked(text)
    assert "Xk9mQ2vLp7" not in mask("**DB password**: **Xk9mQ2vLp7**")
    assert "Xk9#mQ2vLp7" not in mask("**Password**: Xk9#mQ2vLp7")
    assert "1,2345" not in mask("the secret is 1,2345")


def test_code_that_computes_the_value_is_no_value() -> None:
    unmasked(
        "   const credential = await appleAuth.performRequest({\n"
        "   return {\n        refreshToken: refreshToken,\n        idToken: result.IdToken,\n"
    )
    assert "Xk9mQ2vLp7" not in mask("const credential = 'Xk9mQ2vLp7';")
    assert "myRefresh9" not in mask("        refreshToken: myRefresh9,")


def test_the_memory_never_remembers_a_key_file_or_public_key_material() -> None:
    from ctxmode.redact import memorable

    for value in (
        "id_ed25519_github",
        "id_rsa.pub",
        "SHA256:CKiM8SFPb0uMyj8uTMiI1P5TgpSsZDPiDUxyNrcB5nc",
        "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    ):
        assert not memorable(value), value
    assert memorable("id_Xk9mQ2vLp7")
    assert memorable("AAAAxk9Lmq2Zp8Yt7Rw3Vn5Bc1Df4Gh6Jk0sPqR2")
