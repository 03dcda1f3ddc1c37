import { describe, expect, test } from "bun:test";
import { REDACTION_KINDS, redactDeep, redactOutcomeReport, redactText, redactTrail, truncateChars } from "./redaction.ts";
import { parseOutcomeReport, parseTrail, type Trail } from "./trail.ts";
import { evalTexts, evalTrails } from "../../test/support/eval-trails.ts";

// Fake credentials of the right shape, assembled at run time so no scanner mistakes this file
// for a leak.
const j = (...parts: string[]) => parts.join("");
const GH = j("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
const GH_PAT = j("github_pat_", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ");
const GL = j("glpat-", "xYz123AbC456dEf789gH");
const SLACK = j("xoxb-", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx");
const SLACK_HOOK = j("https://hooks.slack.com/services/", "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX");
const STRIPE = j("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc");
const STRIPE_WH = j("whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
const OPENAI = j("sk-proj-", "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7CdEf0");
const OPENAI_OLD = j("sk-", "aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4yZ5aB6cD7eF8");
const ANTHROPIC = j("sk-ant-", "api03-Xy9_Zk2LmN8pQrS4tUvW6xYz0aBcDeFgHiJkLmNoP");
const GOOGLE = j("AIza", "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q");
const GOOGLE_SECRET = j("GOCSPX-", "Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9S");
const YA29 = j("ya29.", "a0AfH6SMBx1y2z3A4b5C6d7E8f9G0h1I2j3K4l5M6n7");
const NPM = j("npm_", "aBcDeF1234567890aBcDeF1234567890abcd");
const PYPI = j("pypi-", "AgEIcHlwaS5vcmcCJGE4ZDM0YjRlLTFlZjctNDkzZC1hYWM3LTAxMjM0NTY3ODlhYgACKlszLCJmN");
const HF = j("hf_", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789");
const SENDGRID = j("SG.", "aBcDeFgHiJkLmNoPqRsTuV.", "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFg");
const AWS_ID = j("AKIA", "IOSFODNN7EXAMPL1");
const AWS_SECRET = j("wJalrXUtnFEMI/K7MDENG/", "bPxRfiCYEXAMPLEKEY");
const JWT = j(
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
  ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ",
  ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
);
const PEM = j(
  "-----BEGIN RSA ",
  "PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Bx\nq0Lh2mYqS0B3c9dQ==\n-----END RSA ",
  "PRIVATE KEY-----",
);
const OPENSSH = j(
  "-----BEGIN OPENSSH ",
  "PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\\n-----END OPENSSH ",
  "PRIVATE KEY-----",
);
const AZURE = j(
  "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=",
  "Zm9vYmFyYmF6cXV4Zm9vYmFyYmF6cXV4Zm9vYmFy+/==",
  ";EndpointSuffix=core.windows.net",
);
const BASIC = Buffer.from("alice:s3cretpw").toString("base64");

/** [kind, input, text that must disappear] */
const TRUE_POSITIVES: [string, string, string][] = [
  ["aws_access_key", `aws configure set aws_access_key_id ${AWS_ID}`, AWS_ID],
  ["aws_secret_key", `aws_secret_access_key = ${AWS_SECRET}`, AWS_SECRET],
  ["aws_secret_key", `{"secretAccessKey": "${AWS_SECRET}"}`, AWS_SECRET],
  ["github_token", `git clone https://${GH}@github.com/acme/repo.git`, GH],
  ["github_token", `export GITHUB_TOKEN=${GH_PAT}`, GH_PAT],
  ["gitlab_token", `curl --header "PRIVATE-TOKEN: ${GL}" https://gitlab.com/api/v4/projects`, GL],
  ["slack_token", `SLACK_BOT_TOKEN=${SLACK}`, SLACK],
  ["slack_webhook", `curl -X POST ${SLACK_HOOK} -d '{}'`, SLACK_HOOK],
  ["stripe_key", `stripe.api_key = "${STRIPE}"`, STRIPE],
  ["stripe_key", `STRIPE_WEBHOOK=${STRIPE_WH}`, STRIPE_WH],
  ["openai_key", `OpenAI(api_key="${OPENAI}")`, OPENAI],
  ["openai_key", `Incorrect API key provided: ${OPENAI_OLD}`, OPENAI_OLD],
  ["anthropic_key", `x-api-key: ${ANTHROPIC}`, ANTHROPIC],
  ["google_api_key", `https://maps.googleapis.com/maps/api/geocode/json?key=${GOOGLE}`, GOOGLE],
  ["google_api_key", `client_secret: ${GOOGLE_SECRET}`, GOOGLE_SECRET],
  ["google_oauth_token", `access token ${YA29} expired`, YA29],
  ["npm_token", `//registry.npmjs.org/:_authToken=${NPM}`, NPM],
  ["pypi_token", `twine upload -u __token__ -p ${PYPI} dist/*`, PYPI],
  ["huggingface_token", `huggingface-cli login --token ${HF}`, HF],
  ["sendgrid_key", `SENDGRID_API_KEY=${SENDGRID}`, SENDGRID],
  ["azure_connection_string", AZURE, "Zm9vYmFyYmF6cXV4Zm9vYmFy"],
  ["jwt", `Authorization failed for token ${JWT}`, JWT],
  ["private_key", `${PEM}\nthen restart`, "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Bx"],
  ["private_key", `echo "${OPENSSH}" > key`, "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"],
  [
    "private_key",
    j("-----BEGIN ", "PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n(truncated)"),
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
  ],
  ["bearer_token", `curl -H "Authorization: Bearer abc123def456ghi789jkl" https://api.acme.io/v1`, "abc123def456ghi789jkl"],
  ["basic_auth", `Authorization: Basic ${BASIC}`, BASIC],
  ["auth_header", `curl -H 'Authorization: token 9f8e7d6c5b4a39281706f5e4' https://api.github.com/user`, "9f8e7d6c5b4a39281706f5e4"],
  ["auth_header", `X-Api-Key: Zx81kd02mfqp39XK`, "Zx81kd02mfqp39XK"],
  ["password", "postgres://app:Sup3rS3cret!@db.example.com:5432/app", "Sup3rS3cret!"],
  ["password", "mongodb+srv://admin:hunter2pass@cluster0.mongodb.net/test", "hunter2pass"],
  ["password", "redis://:p4ssw0rd@cache:6379/0", "p4ssw0rd"],
  ["password", "curl -u deploy:Tr0ub4dor https://artifacts.acme.io/upload", "Tr0ub4dor"],
  ["password", "DB_PASSWORD=correcthorse", "correcthorse"],
  ["password", "export PGPASSWORD='x9!kq2'", "x9!kq2"],
  ["password", "mysql --password=Zq8wX2 -u root", "Zq8wX2"],
  ["password", "keytool -list -keystore ks.jks -storepass kSp4ss", "kSp4ss"],
  ["password", `spring.datasource.password: s3cr3t-value`, "s3cr3t-value"],
  ["password", `{"user": "app", "password": "pa55w0rd"}`, "pa55w0rd"],
  ["password", "CREATE USER app WITH PASSWORD 'pgS3cret';", "pgS3cret"],
  ["password", "ALTER USER 'app'@'%' IDENTIFIED BY 'myS3cret';", "myS3cret"],
  ["password", "Server=db1;Database=app;User Id=sa;Password=MyS3cret;", "MyS3cret"],
  ["password", "DRIVER={ODBC Driver 18};UID=sa;PWD=abc123;", "abc123"],
  ["secret", "JWT_SECRET=averylongsecretvalue", "averylongsecretvalue"],
  ["secret", "client_secret = 'q8Wm2Lp0'", "q8Wm2Lp0"],
  ["token", "docker login -u bot --token=abcdef012345", "abcdef012345"],
  ["token", "ACCESS_TOKEN=tok_live_8823", "tok_live_8823"],
  ["api_key", "OPENWEATHER_API_KEY=3f2a1b0c9d8e", "3f2a1b0c9d8e"],
  ["api_key", "apiKey: 'k-12345-abcde'", "k-12345-abcde"],
  ["high_entropy_secret", "session_cookie=Zk9xQ2pL7mN4vB8cR1tY6uI3oP0aS5dF", "Zk9xQ2pL7mN4vB8cR1tY6uI3oP0aS5dF"],
  ["high_entropy_secret", "export SENTRY_KEYBLOB=Qm9vYXJ3aXRoMzJjaGFyc1RoYXRMb29rUmFuZG9tIQ", "Qm9vYXJ3aXRoMzJjaGFyc1RoYXRMb29rUmFuZG9tIQ"],
  ["high_entropy_secret", "https://storage.example.net/f.zip?sig=aB3dE5fG7hJ9kL1mN3pQ5rS7tU9&se=2024", "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9"],
  [
    "password_hash",
    "root:$6$rounds=5000$saltsalt$Yx7Lq1m0Zp9rS8tU7vW6xY5z4A3b2C1d0E9f8G7h6I5j:19000:0:99999:7:::",
    "Yx7Lq1m0Zp9rS8tU7vW6xY5z4A3b2C1d0E9f8G7h6I5j",
  ],
  ["email", "git config user.email jane.doe@acme-corp.io", "jane.doe@acme-corp.io"],
  ["email", "Contact: <bob+ci@mail.company.co.uk>", "bob+ci@mail.company.co.uk"],
  ["ip_address", "connect ECONNREFUSED 10.0.3.17:5432", "10.0.3.17"],
  ["ip_address", "ssh ubuntu@54.201.13.7 -i key.pem", "54.201.13.7"],
  ["ip_address", "listen on 192.168.1.20:8080", "192.168.1.20"],
  ["ip_address", "inet6 2a02:8071:4b1:5c00:1c2d:3e4f:5a6b:7c8d/64", "2a02:8071:4b1:5c00:1c2d:3e4f:5a6b:7c8d"],
  ["ip_address", "fe80::1ff:fe23:4567:890a%eth0", "fe80::1ff:fe23:4567:890a"],
  ["user", 'File "/home/alice/proj/app.py", line 3', "alice"],
  ["user", "/Users/bob.smith/Library/Caches/pip", "bob.smith"],
  ["user", "C:\\Users\\carol\\AppData\\Roaming\\npm", "carol"],
  ["user", "C:\\\\Users\\\\dave\\\\Documents", "dave"],
  ["user", "C:/Users/erin/project/node_modules", "erin"],
  ["user", "C:\\Users\\John Smith\\Desktop\\app", "John Smith"],
  ["host", "curl http://build01.corp.acme.com:8080/job/x", "build01.corp.acme.com"],
  ["host", "git clone https://git.internal/team/repo.git", "git.internal"],
  ["host", "Could not connect to http://api.payments.svc.cluster.local/health", "api.payments.svc.cluster.local"],
  ["host", "jdbc:postgresql://pg-primary.prod.lan:5432/app", "pg-primary.prod.lan"],
];

/** Look-alikes that must come out unchanged. */
const LOOK_ALIKES: string[] = [
  "commit 3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
  "Merge 4b825dc642cb6eb9a060e54bf8d69288fbee4904 into main",
  "request id 123e4567-e89b-12d3-a456-426614174000 failed",
  '"integrity": "sha512-3q2+7wAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="',
  "integrity sha1-2fW0eL5ZCsNQf7G3jeHyh1JDZhg=",
  "echo SGVsbG8sIFdvcmxkIQ== | base64 -d",
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
  "error[E0382]: borrow of moved value: `s1`",
  "npm ERR! code ERESOLVE",
  "Segmentation fault at address 0x7ffd5fbff8a8",
  "panic: runtime error at 0xc000012345",
  "Python 3.10.12 with pip 23.2.1 and numpy 1.24.0",
  "version 1.2.3.4 of the driver; libfoo.so.1.2.3",
  "Windows 10.0.19045.3803",
  "Assembly Version=4.0.0.0, Culture=neutral",
  "connect ECONNREFUSED 127.0.0.1:5432",
  "listening on http://localhost:3000",
  "MongooseServerSelectionError: connect ECONNREFUSED ::1:27017",
  "bind [::1]:8080 and 0.0.0.0:80",
  "see 192.0.2.10, 198.51.100.7 and 203.0.113.254 in the docs",
  "netmask 255.255.255.0 broadcast 255.255.255.255",
  "nameserver 8.8.8.8",
  "fatal: unable to access 'https://github.com/iq9891/menu.git/'",
  "npm http fetch GET 200 https://registry.npmjs.org/react 120ms",
  "pip download from https://files.pythonhosted.org/packages/x.whl",
  "git@github.com:acme/repo.git",
  "user@example.com and admin@example.org",
  "icon@2x.png and logo@3x.webp",
  "npm install @types/node@20.1.0 lodash@4.17.21",
  "go install golang.org/x/tools/gopls@latest",
  "docker pull nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
  "std::vector<int>::iterator and Foo::bar() and a::b",
  "at 12:34:56 on 2024-03-11T09:12:44.123Z",
  "MAC 00:1a:2b:3c:4d:5e",
  "/home/runner/work/repo/repo and /Users/Shared/data and C:\\Users\\Public\\Documents",
  "/home/<user>/project and /home/$USER/x and C:\\Users\\%USERNAME%\\x",
  "http://db:5432 and http://redis:6379 and http://host.docker.internal:8080",
  "Access denied for user 'root'@'localhost' (using password: YES)",
  'password authentication failed for user "postgres"',
  "token = getToken(); password = os.environ['DB_PASSWORD']",
  "const secret = config.secret; api_key=api_key",
  "max_tokens=100 tokenizer: bert-base-uncased token_type=bearer",
  "--password-stdin and --password-file /run/secrets/db",
  "PASSWORD=$DB_PASSWORD TOKEN=${{ secrets.GITHUB_TOKEN }} SECRET=<your-secret>",
  "password: changeme and -keypass changeit",
  "cd $PWD && echo PWD=/tmp/build",
  "export CLASSPATH=/opt/App/lib/Tool-2.3.4/Core9x.jar NODE_OPTIONS=--max-old-space-size=4096",
  "JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 GIT_COMMIT=3f2a1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a",
  "Bearer token required; use Basic authentication",
  "Authorization: Bearer <token>",
  "sk-learn-pipeline-helper-module",
  "AIzaNotAKey",
  "The Stripe key looks like sk_test_... (see docs)",
  "kotlin this@MainActivity.finish()",
  "fetch(url, { credentials: 'include' })",
  "ssl.SSLCertVerificationError: [SSL: CERTIFICATE_VERIFY_FAILED] (_ssl.c:1056)",
  "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
  "ssh-copy-id -i ~/.ssh/id_ed25519.pub deploy@host",
  "HEAD is now at 4f3e2d1",
  "E   ModuleNotFoundError: No module named 'numpy'",
];

describe("redactText: true positives", () => {
  for (const [kind, input, secret] of TRUE_POSITIVES) {
    test(`${kind}: ${input.slice(0, 60)}`, () => {
      const r = redactText(input);
      expect(r.text).not.toContain(secret);
      expect(r.text).toContain(`<redacted:${kind}>`);
      expect(r.counts[kind]).toBeGreaterThanOrEqual(1);
      expect(REDACTION_KINDS).toContain(kind);
    });
  }
});

describe("redactText: look-alikes stay", () => {
  for (const input of LOOK_ALIKES) {
    test(input.slice(0, 70), () => {
      const r = redactText(input);
      expect(r.text).toBe(input);
      expect(r.counts).toEqual({});
    });
  }
});

describe("redactText: shape of the replacement", () => {
  test("home paths keep their shape", () => {
    expect(redactText("/home/alice/x").text).toBe("/home/<redacted:user>/x");
    expect(redactText("C:\\Users\\carol\\x").text).toBe("C:\\Users\\<redacted:user>\\x");
  });
  test("URLs keep scheme, user, host and path around a password", () => {
    expect(redactText("postgres://app:pw12345@db.example.com:5432/app").text).toBe(
      "postgres://app:<redacted:password>@db.example.com:5432/app",
    );
  });
  test("quoted values keep their quotes, so JSON inside a string stays JSON", () => {
    const r = redactText('{"password": "pa55w0rd", "user": "app"}');
    expect(JSON.parse(r.text)).toEqual({ password: "<redacted:password>", user: "app" });
  });
  test("internal hosts keep the port and path", () => {
    expect(redactText("http://ci.corp.acme.com:8080/job/1").text).toBe("http://<redacted:host>:8080/job/1");
  });
  test("counts add up per kind", () => {
    const r = redactText(`a@acme.io b@acme.io ${AWS_ID} 10.1.2.3`);
    expect(r.counts).toEqual({ email: 2, aws_access_key: 1, ip_address: 1 });
  });
  test("every true-positive text is idempotent", () => {
    for (const [, input] of TRUE_POSITIVES) {
      const once = redactText(input).text;
      const twice = redactText(once);
      expect(twice.text).toBe(once);
      expect(twice.counts).toEqual({});
    }
  });
});

describe("redactDeep", () => {
  const input = {
    a: `token ${GH}`,
    nested: { list: ["mail x@acme.io", 42, null, true, { deep: [[`/home/alice/${AWS_ID}`]] }] },
    "key with alice@acme.io": "plain",
  };
  test("every string at any depth, keys too (session 18), shape kept", () => {
    const { value, counts } = redactDeep(input);
    expect(value.a).toBe("token <redacted:github_token>");
    expect(value.nested.list[0]).toBe("mail <redacted:email>");
    expect(value.nested.list.slice(1, 4)).toEqual([42, null, true]);
    expect((value.nested.list[4] as { deep: string[][] }).deep[0]![0]).toBe("/home/<redacted:user>/<redacted:aws_access_key>");
    expect(Object.keys(value)).toEqual(["a", "nested", "key with <redacted:email>"]);
    expect((value as Record<string, unknown>)["key with <redacted:email>"]).toBe("plain");
    expect(counts).toEqual({ github_token: 1, email: 2, user: 1, aws_access_key: 1 });
  });
  test("the input is not mutated", () => {
    const before = JSON.stringify(input);
    redactDeep(input);
    expect(JSON.stringify(input)).toBe(before);
  });
  test("scalars pass through", () => {
    expect(redactDeep(5).value).toBe(5);
    expect(redactDeep(null).value).toBe(null);
    expect(redactDeep("10.9.8.7").value).toBe("<redacted:ip_address>");
  });
});

describe("redactTrail", () => {
  const trail: Trail = {
    protocol_version: "1.0",
    problem: {
      error: `FATAL: password authentication failed for user "app" at 10.0.0.5`,
      root_cause: "wrong password in /home/alice/.env",
    },
    solution: {
      summary: "Set the right DB password",
      commands: [`export DB_PASSWORD=hunter22 && psql postgres://app:hunter22@10.0.0.5/app`],
      code_patches: [{ file_path: "/Users/bob/app/.env", diff: `-DB_PASSWORD=old\n+DB_PASSWORD=hunter22\n+GITHUB_TOKEN=${GH}` }],
    },
    agent_info: { model: "m", framework: "f" },
    environment: { os: "linux", runtime: { name: "node" } },
  };
  test("covers every string field, commands and patches included, and still validates", () => {
    const { value, counts } = redactTrail(trail);
    const json = JSON.stringify(value);
    for (const secret of ["hunter22", "10.0.0.5", "alice", "bob", GH]) expect(json).not.toContain(secret);
    expect(counts.password).toBe(4); // the command twice, the removed and the added patch line
    expect(parseTrail(value).ok).toBe(true);
  });
  test("strings that grow past their limit are cut back without half a placeholder", () => {
    const long = { ...trail, problem: { error: "x ".repeat(990) + "a@acme.io b@acme.io c@acme.io" } };
    const { value } = redactTrail(long);
    expect([...value.problem.error].length).toBeLessThanOrEqual(2000);
    expect(parseTrail(value).ok).toBe(true);
    expect(truncateChars("abc <redacted:email>", 10)).toBe("abc");
  });
});

describe("redactOutcomeReport", () => {
  test("notes and model are redacted and cut back to their limits; the report still validates", () => {
    // A reporter pasting the addresses it saw: 1,994 characters sent, 4,844 once redacted.
    const notes = Array(285).fill("a@b.io").join(" ");
    const report = {
      protocol_version: "1.0",
      outcome: "worked" as const,
      notes,
      agent_info: { model: `${GH} ${Array(22).fill("a@b.io").join(" ")}` },
    };
    const value = redactOutcomeReport(report);
    expect([...value.notes!].length).toBeLessThanOrEqual(2000);
    expect(value.notes).toEndWith("<redacted:email>");
    expect(value.agent_info!.model).toStartWith("<redacted:github_token> <redacted:email>");
    expect([...value.agent_info!.model!].length).toBeLessThanOrEqual(200);
    expect(parseOutcomeReport(value).ok).toBe(true);
    expect(report.notes).toBe(notes); // the input is not changed
  });
});

describe("eval corpus", () => {
  test("every eval trail still validates after redaction, and redaction is idempotent on it", () => {
    for (const { trail } of evalTrails()) {
      const once = redactTrail(trail).value;
      expect(parseTrail(once).ok).toBe(true);
      const twice = redactTrail(once);
      expect(twice.value).toEqual(once);
      expect(twice.counts).toEqual({});
    }
  });
  test("eval texts only lose user names, command-line passwords, private addresses and internal host names (nothing else is a secret there)", () => {
    // The real reports quote cluster-internal hosts (*.svc) and private registry addresses (10.x).
    for (const t of evalTexts()) {
      const kinds = Object.keys(redactText(t.text).counts);
      for (const k of kinds) expect(["user", "password", "ip_address", "host"]).toContain(k);
    }
  });
});
