"""The 99 secret formats of the adversarial secrets corpus (issues #15 and #23), built at run time.

Every fake credential is assembled from fragments and pseudo-random characters
when the tests run, so no committed file holds a contiguous, real-format
secret (push-protection scanners would block the repository otherwise). Each
format names the file it is planted in (code, comments, config and dotfiles),
the file's text, and the secret that must never reach the store.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

LOWER = "abcdefghijklmnopqrstuvwxyz"
UPPER = LOWER.upper()
DIGITS = "0123456789"
ALNUM = LOWER + UPPER + DIGITS
HEX = DIGITS + "abcdef"
B64 = ALNUM + "+/"


def rand(seed: str, n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet``, deterministic in ``seed``, with a digit and a letter mixed in."""
    out: list[str] = []
    counter = 0
    while len(out) < n:
        block = hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        out.extend(alphabet[b % len(alphabet)] for b in block)
        counter += 1
    return "".join(out[:n])


def tail(secret: str, n: int = 10) -> str:
    """The last ``n`` characters: what a partial leak would still show."""
    return secret[-n:]


@dataclass(frozen=True)
class SecretFormat:
    name: str
    path: str
    text: str
    secret: str


def j(*parts: str) -> str:
    return "".join(parts)


def _formats() -> list[SecretFormat]:
    r = rand
    f: list[SecretFormat] = []

    def add(name: str, path: str, template: str, secret: str) -> None:
        f.append(SecretFormat(name, path, template.replace("@S@", secret), secret))

    pk_end = j("-----END ", "{kind}PRIVATE ", "KEY-----")
    pk_begin = j("-----BEGIN ", "{kind}PRIVATE ", "KEY-----")

    add("aws access key id (ini)", "config/aws.ini", "[default]\naws_access_key_id = @S@\n",
        j("AK", "IA", r("aws1", 16, UPPER + DIGITS)))
    add("aws secret access key (ini)", "config/aws.ini.sample",
        "[prod]\naws_secret_access_key = @S@\nregion = eu-west-1\n", r("aws2", 40, B64) + "Zq9")
    add("aws session key id (code)", "src/sts.py", "CREDS = {'key': '@S@'}\n",
        j("AS", "IA", r("aws3", 16, UPPER + DIGITS)))
    add("github fine-grained pat", "src/gh.ts", "const client = new Octokit({ auth: \"@S@\" });\n",
        j("github", "_pat_", r("gh1", 22), "_", r("gh2", 59)))
    add("github classic pat (yaml)", "ci/github-ci.yml", "env:\n  GH_TOKEN: @S@\n",
        j("gh", "p_", r("gh3", 36)))
    add("github oauth token (json)", "config/oauth.json", '{"github": {"oauth": "@S@"}}\n', j("gh", "o_", r("gh4", 36)))
    add("gitlab glpat", ".gitlab-ci.yml", "variables:\n  GITLAB_TOKEN: @S@\n", j("gl", "pat-", r("gl1", 20)))
    add("gitlab runner token", "runner/config.toml", '[[runners]]\n  token = "@S@"\n', j("gl", "rt-", r("gl2", 24)))
    add("slack webhook", "src/notify.js", "fetch('@S@', { method: 'POST' });\n",
        j("https://hooks.", "slack.com/services/", "T", r("sl1", 8, UPPER + DIGITS), "/B", r("sl2", 8, UPPER + DIGITS),
          "/", r("sl3", 24)))
    add("slack bot token", "bot/app.py", "client = WebClient(token=\"@S@\")\n",
        j("xo", "xb-", r("sl4", 12, DIGITS), "-", r("sl5", 13, DIGITS), "-", r("sl6", 24)))
    add("slack app token", "bot/socket.py", "# app-level token: @S@\n",
        j("xa", "pp-1-", r("sl7", 11, UPPER + DIGITS), "-", r("sl8", 13, DIGITS), "-", r("sl9", 64, HEX)))
    add("stripe live secret", "app/billing.rb", "Stripe.api_key = '@S@'\n", j("sk", "_live_", r("st1", 24)))
    add("stripe restricted key", "app/payments.go", "var stripeKey = \"@S@\"\n", j("rk", "_live_", r("st2", 24)))
    add("stripe webhook secret", "app/hooks.py", "# verify with @S@\nHANDLER = None\n", j("wh", "sec_", r("st3", 32)))
    add("stripe test secret", "spec/billing_spec.rb", "  let(:key) { \"@S@\" }\n", j("sk", "_test_", r("st4", 24)))
    add("openai project key", "ml/client.py", "openai.api_key = \"@S@\"\n",
        j("sk", "-proj-", r("oa1", 48, ALNUM + "_-"), r("oa1b", 12)))
    add("openai service account key", "ml/agent.ts", "const key = '@S@';\n",
        j("sk", "-svcacct-", r("oa2", 40, ALNUM + "_-"), r("oa2b", 12)))
    add("openai legacy key (markdown)", "docs/setup.md", "Run with `OPENAI=@S@ make run`.\n",
        j("sk", "-", r("oa3", 48)))
    add("anthropic key", "ml/claude.py", "CLIENT = Anthropic(api_key=\"@S@\")\n",
        j("sk", "-ant-api03-", r("an1", 80, ALNUM + "_-"), r("an1b", 10)))
    pgp_body = r("pgp", 64, B64)
    add("pgp private key block", "keys/backup.txt",
        j("-----BEGIN PGP PRIVATE ", "KEY BLOCK-----\nVersion: GnuPG v2\n\n", "@S@", "\n=", r("pgp2", 4, B64),
          "\n-----END PGP PRIVATE ", "KEY BLOCK-----\n"), pgp_body)
    rsa_body = r("rsa", 64, B64)
    add("rsa private key in code", "src/sign.py",
        j('KEY = """', pk_begin.format(kind="RSA "), "\n@S@\n", pk_end.format(kind="RSA "), '"""\n'), rsa_body)
    ssh_body = r("ssh", 70, B64)
    add("openssh key in readme", "README.md",
        j("Example:\n\n```\n", pk_begin.format(kind="OPENSSH "), "\n@S@\n", pk_end.format(kind="OPENSSH "), "\n```\n"),
        ssh_body)
    gcp_body = r("gcp", 64, B64)
    add("service account private key (json \\n)", "deploy/service-account.json",
        j('{"type": "service_account", "private_key": "', pk_begin.format(kind=""), "\\n@S@\\n",
          pk_end.format(kind=""), '\\n"}\n'), gcp_body)
    add("password in json", "config/app.json", '{"db": {"user": "app", "password": "@S@"}}\n', r("pw1", 14) + "!x9")
    add("DB_PASSWORD in envrc", ".envrc", "export DB_PASSWORD=@S@\n", r("pw2", 18))
    add("ENV DB_PASSWORD in Dockerfile", "Dockerfile", "FROM postgres:16\nENV DB_PASSWORD=@S@\n", r("pw3", 16))
    add("password with spaces (yaml)", "config/database.yml", "production:\n  password: @S@\n",
        j("correct horse ", r("pw4", 6, LOWER), " staple ", r("pw4b", 8)))
    add("password starting with test", "settings.py", 'DATABASES = {"default": {"PASSWORD": "@S@"}}\n',
        j("test", r("pw5", 12)))
    add("php define DB_PASSWORD", "wp-config.php", "<?php\ndefine('DB_PASSWORD', '@S@');\n", r("pw6", 20))
    add("postgres url", "config/db.rb", "DATABASE_URL = \"postgres://app:@S@@db.internal:5432/app\"\n", r("pw7", 16))
    add("mongodb+srv url", "src/db.js", "const uri = 'mongodb+srv://admin:@S@@cluster0.ab1cd.mongodb.net/prod';\n",
        r("pw8", 16))
    add("redis url", "prod.env", "REDIS_URL=redis://:@S@@cache.internal:6379/0\n", r("pw9", 20))
    add("mysql url", "app/settings.py", "SQLALCHEMY_DATABASE_URI = 'mysql://root:@S@@10.0.0.5/shop'\n", r("pw10", 16))
    add("prod.env secret key", "deploy/prod.env", "SECRET_KEY=@S@\nDEBUG=false\n", r("tk2", 50))
    add(".env.example with a real value", ".env.example", "MAILGUN_SIGNING_KEY=@S@\nAPP_NAME=shop\n", r("tk3", 32, HEX))
    add("npmrc _authToken npm_", ".npmrc", "//registry.npmjs.org/:_authToken=@S@\n", j("np", "m_", r("npm1", 36)))
    add("npmrc _authToken uuid", "packages/web/.npmrc",
        "//npm.pkg.github.com/:_authToken=@S@\n",
        j(r("u1", 8, HEX), "-", r("u2", 4, HEX), "-", r("u3", 4, HEX), "-", r("u4", 4, HEX), "-", r("u5", 12, HEX)))
    add("azure storage account key", "appsettings.json",
        '{"Storage": "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey=@S@;'
        'EndpointSuffix=core.windows.net"}\n',
        r("az1", 86, B64) + "==")
    add("azure client secret", "src/Auth.cs", "var secret = \"@S@\";\n",
        j(r("az2", 3), "8Q", "~", r("az3", 31, ALNUM + "_~."), r("az3b", 3)))
    add("azure sas sig", "src/blob.py",
        "URL = 'https://shop.blob.core.windows.net/c/f?sv=2022-11-02&ss=b&srt=o&sp=r&sig=@S@'\n",
        r("az4", 40, ALNUM) + "%3D")
    add("twilio api key", "src/sms.js", "const apiKey = '@S@';\n", j("S", "K", r("tw1", 32, HEX)))
    add("twilio auth token", "scripts/sms.sh", "TWILIO_AUTH_TOKEN=@S@ ./send\n", r("tw2", 32, HEX))
    add("sendgrid key", "src/mail.py", "sg = SendGridAPIClient('@S@')\n",
        j("S", "G.", r("sg1", 22, ALNUM + "_-"), ".", r("sg2", 43, ALNUM + "_-"), r("sg3", 3)))
    add("mailgun key", "app/mailer.rb", "# mailgun: @S@\n", j("ke", "y-", r("mg1", 32)))
    add("hugging face token", "ml/hub.py", "login(\"@S@\")\n", j("h", "f_", r("hf1", 34, LOWER + UPPER)))
    add("shopify access token", "shop/theme.js", "const token = `@S@`;\n", j("shp", "at_", r("sh1", 32, HEX)))
    add("authorization basic (http file)", "api/requests.http",
        "GET https://api.internal/v1/me\nAuthorization: Basic @S@\n", r("ab1", 28, B64) + "Xy1=")
    add("authorization bearer (curl in docs)", "docs/api.md",
        "curl -H \"Authorization: Bearer @S@\" https://api.internal\n", r("ab2", 40, ALNUM + "-_."))
    add("docker config.json auths", "docker/config.json",
        '{"auths": {"https://index.docker.io/v1/": {"auth": "@S@"}}}\n', r("dk1", 32, B64) + "=")
    add("generic token single-quoted", "lua/init.lua", "local token = '@S@'\n", r("gt1", 24))
    add("client_secret in json", "config/client_secret.json",
        '{"installed": {"client_id": "123.apps", "client_secret": "@S@"}}\n', r("cs1", 24, ALNUM + "_-"))
    add("terraform.tfvars password", "infra/terraform.tfvars", 'db_password = "@S@"\nregion = "eu"\n', r("tf1", 20))
    add("google api key", "android/Maps.kt", "val key = \"@S@\"\n", j("AI", "za", r("gg1", 35, ALNUM + "_-")))
    add("google oauth client secret", "config/google.json", '{"web": {"secret": "@S@"}}\n',
        j("GOC", "SPX-", r("gg2", 28, ALNUM + "_-")))
    add("jwt in test fixture", "test/auth.test.ts",
        "const jwt = '@S@';\n",
        j("ey", "J", r("jw1", 30, ALNUM), ".", "ey", "J", r("jw2", 40, ALNUM), ".", r("jw3", 43, ALNUM + "_-")))
    add("npm token in ci env", "ci/circleci.yml", "environment:\n  NODE_AUTH: @S@\n", j("np", "m_", r("npm2", 36)))
    add("pypi token", ".pypirc", "[pypi]\nusername = __token__\npassword = @S@\n",
        j("py", "pi-AgEIcHlwaS5vcmc", r("py1", 70, ALNUM + "_-"), r("py1b", 10)))
    add("digitalocean token", "infra/do.tf", "provider \"digitalocean\" {\n  token = \"@S@\"\n}\n",
        j("do", "p_v1_", r("do1", 64, HEX)))
    add("vault token", "infra/vault.hcl", "# VAULT_ADDR with @S@\n", j("hv", "s.", r("hv1", 90, ALNUM + "_-"), "Ab9"))
    add("docker hub pat", "ci/release.yml", "  DOCKERHUB: @S@\n", j("dckr", "_pat_", r("dh1", 27, ALNUM + "_-"), "x9"))
    add("databricks token", "jobs/run.py", "HOST_AUTH = {'t': '@S@'}\n", j("da", "pi", r("db1", 32, HEX)))
    add("grafana service account token", "monitoring/grafana.ini", "[auth]\nsa = @S@\n",
        j("gl", "sa_", r("gf1", 32), "_", r("gf2", 8, HEX)))
    add("sentry token (properties)", "sentry.properties", "auth.token=@S@\n",
        j("sntr", "ys_", r("se1", 60, ALNUM), r("se2", 10)))
    add("telegram bot token", "bot/main.go", "bot, _ := tgbotapi.NewBotAPI(\"@S@\")\n",
        j(r("tg1", 9, DIGITS), ":A", "A", r("tg2", 33, ALNUM + "_-")))
    add("square secret", "src/Pay.java", "String sq = \"@S@\";\n", j("sq0", "csp-", r("sq1", 43, ALNUM + "_-")))
    add("spring datasource password", "src/main/resources/application.properties",
        "spring.datasource.url=jdbc:postgresql://db/app\nspring.datasource.password=@S@\n", r("sp1", 18))
    add("rails secret_key_base", "config/master.yml", "production:\n  secret_key_base: @S@\n", r("rb1", 128, HEX))
    add("kubernetes secret data", "k8s/secret.yaml",
        "apiVersion: v1\nkind: Secret\ndata:\n  password: @S@\n", r("k81", 24, B64) + "Zz0=")
    add(".NET connection string password", "Web.config",
        '<add name="db" connectionString="Server=db;User Id=sa;Password=@S@;" />\n', r("cn1", 16))
    add("django secret via setdefault", "manage.py",
        "os.environ.setdefault(\"DJANGO_SECRET_KEY\", \"@S@\")\n", r("dj1", 50, ALNUM + "!@#%^&*(-_=+)"))

    # Issue #23: formats that still leaked through the strict profile (where a credential sits, not its shape).
    add("yaml block scalar after password: |", "config/vault.yml",
        "database:\n  user: app\n  password: |\n    @S@\n  host: db.internal\n", r("yb1", 24))
    add("yaml folded scalar after api_token: >-", "k8s/configmap.yaml",
        "data:\n  api_token: >-\n    @S@\n  region: eu\n", r("yb2", 40, ALNUM + "_-"))
    add("dockerfile ENV space form", "docker/Dockerfile.api",
        "FROM python:3.12-slim\nENV DB_PASSWORD @S@\nCMD [\"gunicorn\"]\n", r("dk2", 20))
    add("dockerfile ENV space form token", "docker/Dockerfile.worker",
        "FROM node:20\nENV NPM_AUTH_TOKEN @S@\nRUN npm ci\n", r("dk3", 36))
    add("maven settings.xml password element", "maven/settings.xml",
        "<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n      <username>deploy</username>\n"
        "      <password>@S@</password>\n    </server>\n  </servers>\n</settings>\n", r("mv1", 18))
    add("xml password attribute", "webapp/META-INF/context.xml",
        '<Context>\n  <Resource name="jdbc/app" username="app" password="@S@" url="jdbc:mysql://db/app"/>\n'
        "</Context>\n", r("xa1", 16))
    add("hibernate connection password property", "src/main/resources/hibernate.cfg.xml",
        '<hibernate-configuration><session-factory>\n'
        '  <property name="hibernate.connection.password">@S@</property>\n'
        "</session-factory></hibernate-configuration>\n", r("hb1", 16))
    add("spring bean password property value", "src/main/webapp/WEB-INF/beans.xml",
        '<bean id="ds" class="org.apache.commons.dbcp2.BasicDataSource">\n'
        '  <property name="password" value="@S@"/>\n</bean>\n', r("sb1", 16))
    add("android string resource api key", "android/app/src/main/res/values/keys.xml",
        '<resources>\n  <string name="server_api_key">@S@</string>\n</resources>\n', r("an2", 32))
    add(".NET appSettings key/value password", "App.config",
        '<configuration><appSettings>\n  <add key="SmtpPassword" value="@S@" />\n'
        "</appSettings></configuration>\n", r("ns1", 16))
    add("curl -u user:password", "scripts/deploy.sh",
        "#!/bin/sh\ncurl -fsS -u admin:@S@ https://ci.internal/api/deploy\n", r("cu1", 16))
    add("curl --user user:password (docs)", "docs/upload.md",
        "Upload with:\n\n    curl --user uploader:@S@ -T build.zip https://files.internal/\n", r("cu2", 18))
    add("mysql -pPASSWORD", "scripts/backup.sh",
        "mysqldump -u root -p@S@ shop > shop.sql\n", r("my1", 14))
    add("mysql -p'PASSWORD' quoted", "ops/restore.sh",
        "mysql -h db.internal -uapp -p'@S@' app < dump.sql\n", r("my2", 16))
    add("sqlplus user/password@host", "db/migrate.sh",
        "sqlplus -s scott/@S@@orcl.internal:1521/ORCLPDB1 @migrate.sql\n", r("sq2", 12))
    add("netrc lines in another file", "ci/netrc.txt",
        "machine github.com login ci-bot password @S@\n", r("nr1", 20))
    add("netrc block in a heredoc", "scripts/setup_netrc.sh",
        "cat > ~/.netrc <<EOF\nmachine registry.internal\n  login deploy\n  password @S@\nEOF\n", r("nr2", 22))
    add("htpasswd apr1 line", "deploy/users.txt", "admin:@S@\n",
        j("$ap", "r1$", r("ht1", 8, ALNUM + "./"), "$", r("ht2", 22, ALNUM + "./")))
    add("htpasswd bcrypt line", "nginx/auth.conf", "editor:@S@\n",
        j("$2", "y$10$", r("ht3", 53, ALNUM + "./")))
    add("htpasswd sha line", "deploy/htusers", "viewer:@S@\n", j("{SH", "A}", r("ht4", 27, B64), "="))
    add("pgpass line", "scripts/pgpass.conf", "db.internal:5432:app:app_user:@S@\n", r("pg1", 18))
    add("pgpass wildcard line", "docker/pgpass", "*:*:*:postgres:@S@\n", r("pg2", 16))
    add("requests auth tuple", "client/api.py",
        "resp = requests.get(URL, auth=('admin', \"@S@\"))\n", r("rq1", 16))
    add("HTTPBasicAuth literals", "client/basic.py",
        "session.auth = HTTPBasicAuth('svc-reports', '@S@')\n", r("rq2", 16))
    add("twilio client positional token", "sms/send.py",
        j('client = Client("A', 'C', r("tw3", 32, HEX), '", "@S@")\n'), r("tw4", 32, HEX))
    add("discord client.login token", "bot/index.js",
        "client.login('@S@');\n",
        j("MT", r("dc1", 24), ".", r("dc2", 6, ALNUM + "_-"), ".", r("dc3", 27, ALNUM + "_-")))
    add("gcp private_key_id", "deploy/gcp-sa.json",
        '{"type": "service_account", "project_id": "shop", "private_key_id": "@S@",\n'
        ' "client_email": "ci@shop.iam.gserviceaccount.com"}\n', r("gk1", 40, HEX))
    add("sentry dsn key (js)", "web/sentry.ts",
        j('Sentry.init({ dsn: "https://', "@S@", '@o4504.ingest.sentry.io/4505" });\n'), r("sd1", 32, HEX))
    add("sentry dsn key (python, self-hosted)", "app/monitoring.py",
        j('sentry_sdk.init("https://', "@S@", '@sentry.internal.example/12")\n'), r("sd2", 32, HEX))
    return f


FORMATS: list[SecretFormat] = _formats()
# The 70 of issue #15, then the 29 of issue #23.
ISSUE_23_FIRST = 70
assert len(FORMATS) == 99, len(FORMATS)
assert len({fmt.path for fmt in FORMATS}) == len(FORMATS), "one format per file"
