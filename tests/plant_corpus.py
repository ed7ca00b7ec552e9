"""A second, independent generator of fake secrets, for the adversarial audit (issue 29).

Written apart from ``tests/secret_corpus.py`` and ``tests/shape_corpus.py`` (which the
masking was tuned on): other carriers of the same families, as a held-out corpus would
bring them. Every value is random (``random.Random(seed)``: a seed gives the same corpus);
only the text around it is fixed. A case is ``(family, text, parts)``: ``parts`` are
what must never be found raw where ctxmode keeps or shows data, whole or as any
:data:`PIECE`-character piece, and never in a decodable form (base64, hex, %-encoded).

Families: ``admin`` (account and database tools that take a password as an argument or
on stdin, Linux and Windows), ``encoded``, ``split``, ``raw`` (key material, provider
tokens, high-entropy values after ``=`` or ``:``), ``config`` (multi-line values of
configuration formats and credential files), ``foreign`` (prose in other languages),
``setting`` (commits, todos, searches, edits that name or set a password) and
``passphrase`` (passwords made of words, in strong contexts); since 0.5.0's holes were
closed also ``spaced`` (an unquoted value with spaces in an env or shell statement),
``connect_string`` (a bare ``user/password@host``), ``fullwidth`` (ｐａｓｓｗｏｒｄ＝X) and
``positional`` (a password by its place in a call: ``connect("db", "u", X)``).
``repeat`` (a secret given once with a label, then used bare) is built by :func:`sessions`.
"""

from __future__ import annotations

import base64
import random
import string
import urllib.parse
from collections.abc import Callable, Iterator

PIECE = 10
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
# Symbols a generated password holds here: none needs quoting for a shell inside '…'.
SYMBOLS = "!@#%^*-_+=.~"
WORDS = [
    "tulip",
    "canyon",
    "orbit",
    "maple",
    "violet",
    "harbor",
    "copper",
    "falcon",
    "lantern",
    "meadow",
    "quartz",
    "river",
    "saddle",
    "timber",
    "walnut",
    "ember",
    "glacier",
    "hollow",
    "juniper",
    "kestrel",
    "marble",
    "nectar",
    "osprey",
    "pebble",
]
Case = tuple[str, str, list[str]]


class Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, n: int, alphabet: str = ALNUM) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return options[self.rng.randrange(len(options))]

    def token(self, n: int, alphabet: str = ALNUM) -> str:
        while True:
            v = self.s(n, alphabet)
            if any(c.isdigit() for c in v) and any(c.isalpha() for c in v):
                return v

    def password(self) -> str:
        """12-20 characters: letters, digits and symbols, as a password manager makes them;
        a third start with a symbol (``-`` included: mysql's ``-p-x`` is a password)."""
        n = self.rng.randint(12, 20)
        body = self.token(n - 2, ALNUM * 3 + SYMBOLS)
        head = (
            self.pick(list(SYMBOLS))
            if self.rng.random() < 0.33
            else self.s(1, string.ascii_letters)
        )
        return head + body + self.s(1, string.digits)

    def human(self) -> str:
        """A password a person picks: a capitalised word, digits, a symbol."""
        return (
            self.pick(WORDS).capitalize()
            + self.s(self.rng.randint(3, 5), string.digits)
            + self.pick(list("!#%*?"))
        )

    def phrase(self) -> str:
        """Words joined by a separator, with a number (a passphrase)."""
        sep = self.pick(["-", ".", "_"])
        words = [self.pick(WORDS) for _ in range(self.rng.randint(3, 4))]
        return sep.join(words) + sep + self.s(2, string.digits)

    def user(self) -> str:
        return self.pick(["alice", "deploy", "svc_app", "backup", "jdoe", "ci-bot", "ops"])


def pieces(secret: str, width: int = PIECE) -> Iterator[str]:
    yield secret
    for i in range(len(secret) - width + 1):
        yield secret[i : i + width]


def decodable(secret: str) -> list[str]:
    """Forms that decode to ``secret``: base64 (standard and URL-safe, unpadded), hex, %."""
    raw = secret.encode()
    out = [base64.b64encode(raw).decode().rstrip("="), base64.urlsafe_b64encode(raw).decode().rstrip("="),
           raw.hex(), urllib.parse.quote(secret, safe="")]  # fmt: skip
    return [o for o in out if o != secret and len(o) >= PIECE]


def admin(g: Gen) -> list[Case]:
    p, u, w = g.password(), g.user(), g.pick(WORDS)
    forms = [
        f"mysql -u{u} -p'{p}' -h db.internal {w}", f"mysqldump -u root --password='{p}' {w} > dump.sql",
        f"MYSQL_PWD='{p}' mysql -u {u} {w}", f"psql 'postgresql://{u}:{p}@db.internal:5432/{w}'",
        f"PGPASSWORD='{p}' psql -h db -U {u} {w}", f"sqlcmd -S tcp:db,1433 -U sa -P '{p}' -Q 'SELECT 1'",
        f"bcp {w}.dbo.t out t.dat -S db -U sa -P '{p}' -c", f"docker login registry.example.com -u {u} -p '{p}'",
        f"echo '{p}' | docker login -u {u} --password-stdin", f"curl -sS -u '{u}:{p}' https://api.example.com/v1/{w}",
        f"curl --user {u}:'{p}' -X POST https://ci.example.com/job/{w}/build",
        f"wget --user={u} --password='{p}' https://files.example.com/{w}.tgz",
        f"sshpass -p '{p}' scp build.tgz {u}@host:/srv", f"smbclient -U '{u}%{p}' //files/{w}",
        f"mount -t cifs //nas/{w} /mnt -o username={u},password='{p}'",
        f"net user {u} '{p}' /add /domain", f"net use \\\\nas\\{w} /user:CORP\\{u} '{p}'",
        f"cmdkey /add:nas.corp /user:{u} /pass:'{p}'",
        f"New-LocalUser -Name {u} -Password (ConvertTo-SecureString '{p}' -AsPlainText -Force)",
        f"$pw = ConvertTo-SecureString -String '{p}' -AsPlainText -Force; New-LocalUser {u} -Password $pw",
        f"$cred = New-Object System.Management.Automation.PSCredential('{u}', (ConvertTo-SecureString '{p}' -AsPlainText -Force))",
        f"Set-LocalUser -Name {u} -Password (ConvertTo-SecureString '{p}' -AsPlainText -Force)",
        f"echo '{u}:{p}' | chpasswd", f"printf '%s\\n' '{p}' '{p}' | passwd {u}",
        f"echo '{p}' | passwd --stdin {u}", f"useradd -m -p \"$(openssl passwd -1 '{p}')\" {u}",
        f"htpasswd -b -c /etc/nginx/htpasswd {u} '{p}'", f"redis-cli -h cache -a '{p}' --no-auth-warning INFO",
        f"mongosh 'mongodb://{u}:{p}@mongo:27017/{w}?authSource=admin'",
        f"mongodump --username {u} --password '{p}' --db {w}",
        f"zip -r -P '{p}' backup.zip data/", f"7z a -p'{p}' backup.7z data/", f"unzip -P '{p}' backup.zip",
        f"gpg --batch --passphrase '{p}' -d secrets.gpg", f"openssl rsa -in k.pem -passin pass:'{p}' -out k.key",
        f"ssh-keygen -t ed25519 -N '{p}' -f ~/.ssh/id_deploy", f"keytool -genkey -alias app -storepass '{p}' -keypass '{p}'",
        f"kubectl create secret generic db --from-literal=password='{p}'",
        f"kubectl create secret docker-registry reg --docker-username={u} --docker-password='{p}'",
        f"helm upgrade --install app ./chart --set postgresql.auth.password='{p}'",
        f"terraform apply -var 'db_password={p}'", f"docker run -e POSTGRES_PASSWORD='{p}' -d postgres:16",
        f"ansible-playbook site.yml -e 'ansible_become_pass={p}'", f"az login -u {u}@corp.example -p '{p}'",
        f"rabbitmqctl add_user {u} '{p}'", f"ldappasswd -x -D cn=admin,dc=corp -w '{p}' uid={u}",
        f"sqlplus system/'{p}'@//db:1521/ORCL", f"echo '{p}' | sudo -S apt-get install -y nginx",
        f"dsadd user cn={u},dc=corp -pwd '{p}'", f"sc.exe config {w} obj= CORP\\{u} password= '{p}'",
        f"git clone https://{u}:{p}@git.example.com/team/{w}.git",
        f"pip install --index-url 'https://{u}:{p}@pypi.corp.example/simple' {w}",
        f"lftp -u {u},'{p}' sftp://files.example.com", f"rclone config create nas webdav user {u} pass '{p}'",
        f"influx auth create --org corp --password '{p}'", f"mysql -h db -u {u} -p{p} {w}",
        f"echo -n '{p}' | gcloud secrets create {w} --data-file=-",
        f"printf '{p}' | docker secret create {w}_pw -", f"echo '::add-mask::{p}'",
        f"az keyvault secret set --vault-name kv --name {w} --value '{p}'",
        f"aws secretsmanager create-secret --name {w} --secret-string '{p}'",
        f"SQLCMDPASSWORD='{p}' sqlcmd -S db -U sa", f"Invoke-Sqlcmd -ServerInstance db -Username sa -Password '{p}'",
    ]  # fmt: skip
    return [("admin", g.pick(forms), [p])]


def encoded(g: Gen) -> list[Case]:
    p, u = g.password(), g.user()
    tok = "ghp_" + g.token(36)
    b64p = base64.b64encode(p.encode()).decode()
    pair = base64.b64encode(f"{u}:{p}".encode()).decode()
    forms: list[tuple[str, list[str]]] = [
        (f"apiVersion: v1\nkind: Secret\ndata:\n  username: {base64.b64encode(u.encode()).decode()}\n  password: {b64p}\n", [p]),
        (f"echo {b64p} | base64 -d", [p]),
        (f"the password, base64-encoded: {b64p}", [p]),
        (f"Proxy-Authorization: Basic {pair}", [p]),
        (f"export AUTH_HEADER='Basic {pair}'", [p]),
        (f"token hex {tok.encode().hex()}", [tok[4:]]),
        (f"postgres://{u}:{urllib.parse.quote(p, safe='')}@db.internal/app", [p]),
        (f"https://api.example.com/login?user={u}&password={urllib.parse.quote(p, safe='')}", [p]),
        (f"{base64.b64encode(tok.encode()).decode()}", [tok[4:]]),
        (f"data = base64.b64decode('{base64.b64encode(('password=' + p).encode()).decode()}')", [p]),
    ]  # fmt: skip
    text, parts = forms[g.rng.randrange(len(forms))]
    return [("encoded", text, parts)]


INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u2063", "\u180e"]


def split(g: Gen) -> list[Case]:
    tok = g.token(36)
    inv = g.pick(INVISIBLE)
    p = g.password()
    every = inv.join(tok)
    forms: list[tuple[str, list[str]]] = [
        (f"GITHUB_TOKEN=ghp_{every}", [tok]),
        (f"token: xoxb-{tok[:10]}{inv}-{tok[10:22]}{inv}-{tok[22:]}", [tok[10:22]]),
        (f"my key is sk-proj-{tok[:18]} {tok[18:]}", [tok[:18], tok[18:]]),
        (f"password = {p[:6]}{inv}{p[6:]}", [p[6:]]),
        (f"the password is {inv.join(p)}", [p]),
        (f"api key: ghp_{tok[:9]} {tok[9:18]} {tok[18:27]} {tok[27:]}", [tok[:9] + tok[9:18]]),
    ]  # fmt: skip
    text, parts = forms[g.rng.randrange(len(forms))]
    return [("split", text, parts)]


def _pem_body(g: Gen, lines: int) -> list[str]:
    return [g.token(64, B64) for _ in range(lines)] + [g.token(g.rng.randint(8, 40), B64) + "=="]


def raw(g: Gen) -> list[Case]:
    t = g.token
    body = _pem_body(g, g.rng.randint(4, 8))
    kind = g.pick(
        [
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
        ]
    )
    pem = f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----\n"
    hexkey = g.s(64, HEX)
    jwt_sig = t(43, URLSAFE)
    jwt = (
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
        + base64.urlsafe_b64encode(f'{{"sub":"{t(10)}"}}'.encode()).decode().rstrip("=")
        + "."
        + jwt_sig
    )
    forms: list[tuple[str, list[str]]] = [
        (pem, [body[0], body[-2]]),
        (pem.replace("\n", "\r\n"), [body[1]]),
        ('{"type": "service_account", "private_key_id": "' + g.s(40, HEX) + '", "private_key": "' + pem.replace("\n", "\\n") + '"}', [body[0], body[2]]),
        ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n" + t(44, B64) + "\nPrivate-MAC: " + g.s(64, HEX), []),
        (f"AKIA{t(16, string.ascii_uppercase + string.digits)} {t(40, B64)}", []),
        (f"aws_secret_access_key: {(s := t(40, B64))}", [s]),
        (f"DefaultEndpointsProtocol=https;AccountName=corp{g.s(4, HEX)};AccountKey={(k := t(86, B64))}==;EndpointSuffix=core.windows.net", [k]),
        (f"https://corp.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig={(k2 := t(43, B64).replace('+', '%2B').replace('/', '%2F'))}%3D", [k2[:20]]),
        (f"github_pat_{(gp := t(22))}_{t(59)}", [gp]),
        (f"ghs_{(gs := t(36))}", [gs]), (f"glpat-{(gl := t(20, URLSAFE))}", [gl]),
        (f"xoxp-{g.s(12, string.digits)}-{g.s(12, string.digits)}-{(sl := t(32, HEX))}", [sl]),
        (f"https://hooks.slack.com/services/T{t(10, string.ascii_uppercase + string.digits)}/B{t(10, string.ascii_uppercase + string.digits)}/{(sh := t(24))}", [sh]),
        (f"sk_live_{(st := t(48))}", [st]), (f"whsec_{(ws := t(32))}", [ws]), (f"rk_live_{(rk := t(40))}", [rk]),
        (f"sk-proj-{(op := t(48, URLSAFE))}", [op]), (f"sk-ant-api03-{(an := t(93, URLSAFE))}AA", [an]),
        (f"AIza{(gk := t(35, URLSAFE))}", [gk]), (f"ya29.{(ya := t(60, URLSAFE))}", [ya]),
        (f"npm_{(nt := t(36))}", [nt]), (f"pypi-AgEIcHlwaS5vcmc{(py := t(60, URLSAFE))}", [py]),
        (f"hf_{(hf := t(34))}", [hf]), (f"dop_v1_{(do := g.s(64, HEX))}", [do]), (f"shpat_{(sp := g.s(32, HEX))}", [sp]),
        (f"SG.{t(22, URLSAFE)}.{(sg := t(43, URLSAFE))}", [sg]),
        (f"{g.s(9, string.digits)}:AA{(tg := t(33, URLSAFE))}", [tg]),
        (f"AGE-SECRET-KEY-1{(ag := t(58, string.ascii_uppercase + string.digits))}", [ag]),
        (f"0x{hexkey}", []),  # a transaction hash has this shape too: nothing says secret
        (f"PRIVATE_KEY=0x{hexkey}", [hexkey]), (f"wallet private key: 0x{hexkey}", [hexkey]),
        (jwt, [jwt_sig]),
        (f"session_secret: {hexkey}", [hexkey]),
        (f"signing = {(sb := t(44, B64))}", [sb]),
        (f"cookie_secret={hexkey}", [hexkey]),
        (f"\"hmac\": \"{(hm := t(40, B64))}\"", [hm]),
        (f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{t(43, B64)} {g.user()}@laptop", []),  # a public key: not a secret
    ]  # fmt: skip
    text, parts = forms[g.rng.randrange(len(forms))]
    return [("raw", text, parts)]


def config(g: Gen) -> list[Case]:
    p, u, w = g.password(), g.user(), g.pick(WORDS)
    tk = g.token(40, URLSAFE)
    b64 = base64.b64encode(f"{u}:{p}".encode()).decode()
    forms: list[tuple[str, list[str]]] = [
        (f"DB_HOST=db\nDB_USER={u}\nDB_PASSWORD='{p}'\nDB_NAME={w}\n", [p]),
        (f'TLS_KEY="-----BEGIN PRIVATE KEY-----\n{(l1 := g.token(64, B64))}\n{g.token(40, B64)}==\n-----END PRIVATE KEY-----"\n', [l1]),
        (f"spec:\n  containers:\n    - name: app\n      env:\n        - name: DB_PASSWORD\n          value: '{p}'\n        - name: PORT\n          value: '8080'\n", [p]),
        (f"services:\n  db:\n    image: mysql:8\n    environment:\n      - MYSQL_ROOT_PASSWORD={p}\n      - MYSQL_DATABASE={w}\n", [p]),
        (f"services:\n  db:\n    environment:\n      MYSQL_PASSWORD: \"{p}\"\n", [p]),
        (f"[database]\nhost = \"db\"\nuser = \"{u}\"\npassword = '{p}'\n", [p]),
        (f"[client]\nuser={u}\npassword=\"{p}\"\nhost=db\n", [p]),
        (f"machine git.example.com login {u} password {p}\n", [p]),
        (f"db.internal:5432:*:{u}:{p}\n", [p]),
        (f"[default]\naws_access_key_id = AKIA{g.token(16, string.ascii_uppercase + string.digits)}\naws_secret_access_key = {(a := g.token(40, B64))}\naws_session_token = {(st := g.token(120, B64))}\n", [a, st[:40]]),
        ('{\n  "auths": {\n    "ghcr.io": {\n      "auth": "' + b64 + '"\n    }\n  }\n}\n', [p]),
        (f"users:\n- name: admin\n  user:\n    token: {tk}\n", [tk]),
        (f"users:\n- name: admin\n  user:\n    username: {u}\n    password: {p}\n", [p]),
        (f"users:\n- name: a\n  user:\n    client-key-data: {(ck := g.token(120, B64))}\n", [ck[:40]]),
        (f"//registry.npmjs.org/:_authToken={tk}\n", [tk]),
        (f"[pypi]\nusername = __token__\npassword = pypi-{tk}\n", [tk]),
        (f"<server>\n  <id>corp</id>\n  <username>{u}</username>\n  <password>{p}</password>\n</server>\n", [p]),
        (f"https://{u}:{p}@github.com\n", [p]),
        (f"spring.datasource.password={p}\nspring.datasource.username={u}\n", [p]),
        (f"define( 'DB_PASSWORD', '{p}' );\n", [p]),
        (f"$db_pass = \"{p}\";\n", [p]),
        (f'conn = psycopg2.connect(host="db", user="{u}", password="{p}")\n', [p]),
        (f'<add name="Main" connectionString="Server=db;Database={w};User Id={u};Password={p};" />\n', [p]),
        (f'variable "db" {{}}\nresource "aws_db_instance" "x" {{\n  username = "{u}"\n  password = "{p}"\n}}\n', [p]),
        (f"network={{\n    ssid=\"{w}\"\n    psk=\"{p}\"\n}}\n", [p]),
        (f"requirepass {p}\n", [p]),
        (f"[s3]\naccess_key = AKIA{g.token(16, string.ascii_uppercase + string.digits)}\nsecret_key = {(s3 := g.token(40, B64))}\n", [s3]),
        (f"password: >\n  {p}\n", [p]),
        (f"db:\n  password: |-\n    {p}\n", [p]),
        (f"private_key = '''\n{(pk := g.token(64, B64))}\n{g.token(64, B64)}\n'''\n", [pk]),
        (f"PASSWORD=\"{p[:7]}\\\n{p[7:]}\"\n", []),
        (f"{u}:{p}\n", []),  # an htpasswd-looking plain pair: nothing says what it is
        (f'r = requests.get(url, auth=("{u}", "{p}"))\n', [p]),
        (f'auth = HTTPBasicAuth("{u}", "{p}")\n', [p]),
        (f'$c = [System.Net.NetworkCredential]::new("{u}", "{p}")\n', [p]),
        (f'conn.simple_bind_s("cn={u},dc=corp", "{p}")\n', [p]),
    ]  # fmt: skip
    text, parts = forms[g.rng.randrange(len(forms))]
    return [("config", text, parts)]


FOREIGN = [
    "Passwort: {p}",
    "das Passwort lautet {p}",
    "Kennwort={p}",
    "das neue Passwort ist {p}",
    "le mot de passe du serveur est {p}",
    "mot de passe={p}",
    "nouveau mot de passe : {p}",
    "la contraseña del servidor es {p}",
    "contraseña nueva: {p}",
    "clave: {p}",
    "a senha do banco é {p}",
    "senha: {p}",
    "la password del db è {p}",
    "parola d'ordine: {p}",
    "wachtwoord: {p}",
    "lösenord: {p}",
    "kodeord: {p}",
    "passord: {p}",
    "salasana: {p}",
    "hasło do bazy: {p}",
    "heslo: {p}",
    "jelszó: {p}",
    "parolă: {p}",
    "lozinka: {p}",
    "geslo: {p}",
    "parool: {p}",
    "slaptažodis: {p}",
    "şifre: {p}",
    "parola: {p}",
    "пароль от базы: {p}",
    "новый пароль {p}",
    "пароль — {p}",
    "пароль: {p}",
    "密码为{p}",
    "密碼是{p}",
    "口令：{p}",
    "数据库密码：{p}",
    "パスワード: {p}",
    "パスワードは {p} です",
    "暗証番号は{p}",
    "암호: {p}",
    "비밀번호: {p}",
    "비밀번호는 {p}입니다",
    "كلمة السر: {p}",
    "رمز عبور: {p}",
    "סיסמה: {p}",
    "पासवर्ड: {p}",
    "पासवर्ड है {p}",
    "รหัสผ่าน: {p}",
    "mật khẩu: {p}",
    "kata laluan: {p}",
    "kata sandi: {p}",
    "κωδικός: {p}",
    "le jeton est {t}",
    "der Token lautet {t}",
    "токен: {t}",
    "令牌：{t}",
    "トークン: {t}",
    "la clave API es {t}",
    "API密钥：{t}",
    "APIキー: {t}",
]


def foreign(g: Gen) -> list[Case]:
    p, t = g.password(), g.token(32)
    form = g.pick(FOREIGN)
    return [("foreign", form.format(p=p, t=t), [p] if "{p}" in form else [t])]


def setting(g: Gen) -> list[Case]:
    p, u = g.password(), g.user()
    forms = [
        f'git commit -am "chore: rotate admin password ({p})"', f"git commit -m 'temp pw {p} for the demo'",
        f"Change the staging password to {p}", f"- [ ] set the admin pass to {p} on prod",
        f"grep -rn '{p}' src/ config/  # where the old db password is still used",
        f"rg -F '{p}' --hidden  # the leaked password", f"git log -S'{p}' --oneline  # when the pw landed",
        f"git grep -n '{p}'  # old password", f"sed -i 's/^password=.*/password={p}/' app.ini",
        f"sed -i \"s/CHANGEME/{p}/\" .env  # the db password", f"pass is now {p}", f"new pw: {p}",
        f"password -> {p}", f"login with {u} / {p}", f"creds: {u}/{p}", f"user {u} pass {p}",
        f"username: {u} password: {p}", f"log in as {u}:{p} on the staging box",
        f"I rotated it, the new one is {p} (the db password)", f"pw for {u}@staging: {p}",
        f"fix: use {p} instead of the old root password", f"echo \"password={p}\" >> .env",
    ]  # fmt: skip
    return [("setting", g.pick(forms), [p])]


def passphrase(g: Gen) -> list[Case]:
    """Passwords made of words or a person's pattern, in a context that says so."""
    p = g.phrase() if g.rng.random() < 0.5 else g.human()
    forms = [
        f"the wifi password is {p}", f"DB_PASSWORD={p}", f"password: {p}", f"mysql -u root -p'{p}'",
        f"echo '{p}' | sudo -S whoami", f"my passphrase is {p}", f"--password {p}",
        f"das Passwort ist {p}", f'"password": "{p}"', f"net user admin {p} /add",
    ]  # fmt: skip
    return [("passphrase", g.pick(forms), [p])]


# A command that makes a secret and what it printed, apart: "COMMAND" SEP "OUTPUT".
SEP = "\x00"


def generated(g: Gen) -> list[Case]:
    """Secrets a command generates and prints bare: only the command says what they are."""
    hexed, b64, tok = g.s(64, HEX), g.token(44, B64), g.token(g.rng.randint(16, 24))
    forms = [
        ("openssl rand -hex 32", hexed), ("openssl rand -base64 32", b64),
        ("head -c 32 /dev/urandom | base64", b64), (f"pwgen -s {len(tok)} 1", tok),
        ('python3 -c "import secrets; print(secrets.token_urlsafe(32))"', tok),
        ("wg genkey", b64), ("bundle exec rails secret", hexed),
        ('python -c "from django.core.management.utils import get_random_secret_key as g; print(g())"', tok),
    ]  # fmt: skip
    command, value = forms[g.rng.randrange(len(forms))]
    return [("generated", f"{command}{SEP}{value}\n", [value])]


def spaced(g: Gen) -> list[Case]:
    """An unquoted value with plain spaces in it, at the start of an env or shell statement
    (a passphrase, or a password cut by spaces; no piece reads as a ``NAME=`` assignment,
    which the shell's grammar would make one)."""
    if g.rng.random() < 0.5:
        # Each word with digits: a 10-character piece of the value is no piece of the
        # other families' texts, which draw on the same words.
        words = [g.pick(WORDS) + g.s(2, string.digits) for _ in range(g.rng.randint(3, 4))]
        value = " ".join(words)
    else:
        p = g.password().replace("=", "+")
        a = g.rng.randint(4, len(p) - 8)
        b = g.rng.randint(a + 4, len(p) - 4)
        value = f"{p[:a]} {p[a:b]} {p[b:]}"
    u, w = g.user(), g.pick(WORDS)
    forms = [
        "DB_PASSWORD={v}", "export ADMIN_PASSWORD={v}", "SMTP_PASS={v}\nSMTP_USER=" + u,
        "API_TOKEN={v} && ./deploy.sh " + w, "SECRET_KEY={v}; echo ok", "  - POSTGRES_PASSWORD={v}",
        "REDIS_PASSWORD={v}  # rotated", "set SA_PASSWORD={v}", "LDAP_BIND_PASSWORD={v} LDAP_USER=" + u,
    ]  # fmt: skip
    return [("spaced", g.pick(forms).format(v=value), [value])]


def connect_string(g: Gen) -> list[Case]:
    """A bare ``user/password@connect-identifier``, with no command that names it."""
    p, u, w = g.password(), g.pick(["scott", "system", "app_owner", "c##ops", "hr"]), g.pick(WORDS)
    forms = [
        f"{u}/{p}@db.internal:1521/ORCLPDB1", f"{u}/{p}@//{w}-db.example.com:1521/{w}",
        f"ORACLE_DSN={u}/{p}@{w}db", f'dsn = "{u}/{p}@{w}-db/svc"',
        f'cx_Oracle.connect("{u}/{p}@db:1521/xe")', f"exp {u}/{p}@{w} file={w}.dmp",
        f"impdp {u}/{p}@pdb1 directory=DP dumpfile={w}.dmp", f"connect {u}/{p}@{w}",
        f"DB_URL={u}/{p}@(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=db)(PORT=1521)))",
        f"the nightly job logs in as {u}/{p}@{w}prod",
        f'sql.Open("mysql", "{u}:{p}@tcp({w}-db:3306)/{w}")',
    ]  # fmt: skip
    return [("connect_string", g.pick(forms), [p])]


def _wide(text: str) -> str:
    """``text`` in fullwidth forms (letters, digits and ASCII punctuation)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def fullwidth(g: Gen) -> list[Case]:
    """Key words (and sometimes the value) in fullwidth letters: ｐａｓｓｗｏｒｄ＝X."""
    p, t = g.password(), g.token(32)
    forms: list[tuple[str, list[str]]] = [
        (f"{_wide('password')}={p}", [p]), (f"{_wide('password=')}{p}", [p]),
        (f"{_wide('DB_PASSWORD')}={p}", [p]), (f"{_wide('api_token')}: {t}", [t]),
        (f"the {_wide('password')} is {p}", [p]), (f"{_wide('password')}={_wide(p)}", [_wide(p)]),
        (f"export {_wide('SECRET_KEY')}={_wide(p)}", [_wide(p)]),
        (f"{_wide('mysql -u root -p')}{_wide(p)}", [_wide(p)]),
        (f"{_wide('Authorization: Bearer ')}{_wide(t)}", [_wide(t)]),
    ]  # fmt: skip
    text, parts = forms[g.rng.randrange(len(forms))]
    return [("fullwidth", text, parts)]


def positional(g: Gen) -> list[Case]:
    """A password given by its position in a call whose API fixes that position."""
    p, u, w = g.password(), g.user(), g.pick(WORDS)
    q = g.pick(["'", '"'])
    p = p.replace(q, "")
    forms = [
        f"conn = pymysql.connect({q}db{q}, {q}{u}{q}, {q}{p}{q}, {q}{w}{q})",
        f"db = MySQLdb.connect(host, {q}{u}{q}, {q}{p}{q})",
        f"cnx = mysql.connector.connect({q}db.internal{q}, user, {q}{p}{q})",
        f"conn = psycopg2.connect(host, {q}{u}{q}, {q}{p}{q})",
        f"conn = pymssql.connect(server, {q}{u}{q}, {q}{p}{q}, {q}{w}{q})",
        f"ftp = ftplib.FTP({q}ftp.example.com{q}, {q}{u}{q}, {q}{p}{q})",
        f"ftps = FTP_TLS(host, user, {q}{p}{q})",
        f"ssh.connect({q}bastion{q}, 22, {q}{u}{q}, {q}{p}{q})",
        f"con = oracledb.connect({q}{u}{q}, {q}{p}{q}, {q}db:1521/{w}{q})",
        f"smtp.login(sender, {q}{p}{q})", f"imap.login(cfg.user, {q}{p}{q})",
        f"requests.post(url, auth=(user, {q}{p}{q}), json=body)",
        f"auth = HTTPDigestAuth(settings.USER, {q}{p}{q})",
        f"Connection c = DriverManager.getConnection(url, {q}{u}{q}, {q}{p}{q});",
        f"$db = new mysqli({q}localhost{q}, {q}{u}{q}, {q}{p}{q}, {q}{w}{q});",
        f"$pdo = new PDO($dsn, {q}{u}{q}, {q}{p}{q});",
        f"conn = pymysql.connect(\n    {q}db{q},\n    {q}{u}{q},\n    {q}{p}{q},\n)",
    ]  # fmt: skip
    return [("positional", g.pick(forms), [p])]


FAMILIES: dict[str, Callable[[Gen], list[Case]]] = {
    "admin": admin, "encoded": encoded, "split": split, "raw": raw, "config": config,
    "foreign": foreign, "setting": setting, "passphrase": passphrase, "generated": generated,
    # The holes 0.5.0 left open (drawn after the others: their values stay as they were).
    "spaced": spaced, "connect_string": connect_string, "fullwidth": fullwidth,
    "positional": positional,
}  # fmt: skip


def cases(seed: int, per_family: int) -> list[Case]:
    g = Gen(seed)
    out: list[Case] = []
    for make in FAMILIES.values():
        for _ in range(per_family):
            out.extend(make(g))
    return out


def repeats(seed: int, n: int) -> list[tuple[str, str, list[str]]]:
    """``(first, later, secret)``: a secret given once where it is masked, then used bare."""
    g = Gen(seed + 7)
    out = []
    for _ in range(n):
        p = g.password().lstrip(SYMBOLS) + g.s(2)
        first = g.pick([f"the staging db password is {p}", f"DB_PASSWORD={p}", f"mysql -u root -p'{p}' app",
                        f"export API_TOKEN={p}"])  # fmt: skip
        later = g.pick([f"./bin/login admin {p}", f"git commit -m 'reset db pass to {p}'",
                        f"grep -r {p} .", f"curl https://app.example.com/health -H 'X-Key: {p}'",
                        f"it failed with {p} again", f"echo {p} > /tmp/x"])  # fmt: skip
        out.append((first, later, p))
    return out
