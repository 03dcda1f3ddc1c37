// Normalizer version 5 (error-normalizer.ts): each rule, with real reports from public issue threads
// (none of them taken from the retrieval dev set). Every pair below is one error as two reports
// show it; version 4 kept them apart, version 5 joins them. The pairs after it are different
// errors that the new rules could wrongly join: they must stay apart.
import { describe, expect, test } from "bun:test";
import { normalizeError } from "./fingerprint.ts";

/** [rule, a, b, sources]: the same error in two reports. */
const V5_SAME: [string, string, string, string][] = [
  [
    "integrity digests: base64 after the algorithm, whatever the algorithm and the package",
    "npm ERR! code EINTEGRITY\nnpm ERR! sha1-Sqvzm8zti4rZLQB6BKJr5tqEd8k= integrity checksum failed when using sha1: wanted sha1-Sqvzm8zti4rZLQB6BKJr5tqEd8k= but got sha1-c+vhx0GvE4Ju9Bb0cV4uiAB7u8M=. (1436215 bytes)",
    "npm ERR! sha1-1VDFEavOMP7ublkUKRVxRFgcCRw= integrity checksum failed when using sha1: wanted sha1-1VDFEavOMP7ublkUKRVxRFgcCRw= but got sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg== sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=. (0 bytes)",
    "https://github.com/tea3/hexo-related-popular-posts/issues/5 https://github.com/nodejs/node/issues/40376",
  ],
  [
    "a C++ standard's draft name is the standard's (c++1z is c++17)",
    "error: ISO C++1z does not allow 'register' storage class specifier [-Werror=register]",
    "./darts.h:408:5: error: ISO C++17 does not allow 'register' storage class specifier [-Wregister]",
    "https://github.com/prusa3d/Prusa-Firmware/pull/3528 https://github.com/naemon/naemon-livestatus/pull/119 (clang's words there, gcc's here)",
  ],
  [
    "the user's own modules in Python's circular import",
    "ImportError: cannot import name 'JPAKE' from partially initialized module 'jpake' (most likely due to a circular import)",
    "ImportError: cannot import name 'ProxyChecker' from partially initialized module 'proxy_checker' (most likely due to a circular import)",
    "https://github.com/warner/python-jpake/issues/2 https://github.com/ricerati/proxy-checker-python/issues/3",
  ],
  [
    "the user's main class the JVM could not load",
    "Error: Could not find or load main class vm.Main",
    "Error:  Could not find or load main class ar.edu.frba.dds.gesoc.Main",
    "https://github.com/IgorTimofeev/OpenComputersVM/issues/7 https://github.com/dds-jv/foro/issues/43",
  ],
  [
    "where in the user's script, at the end of a browser's message",
    "Uncaught ReferenceError: $ is not defined at index.js:262",
    "Uncaught ReferenceError: $ is not defined",
    "https://github.com/akshayravikumar/TeXnique/issues/31 https://github.com/thoughtbot/refills/issues/289",
  ],
  [
    "prose in another script in front of the error and after it",
    "解决 github 报错 Failed to connect to github.com port 443:connection timed out_吴名氏.的博客-CSDN博客",
    "Failed to connect to github.com port 443:connection timed out",
    "https://github.com/xiaodongxier/iWebs/issues/179 (its title, and the error as its text quotes it)",
  ],
  [
    "prose in another script around the error, without a space",
    "出现Failed to connect to github.com port 443:connection timed out报错",
    "Failed to connect to github.com port 443:connection timed out",
    "https://github.com/xiaodongxier/iWebs/issues/179 (its text, and the error it quotes)",
  ],
  [
    "go.sum digests (h1:) are digests",
    "verifying github.com/projectdiscovery/chaos-client@v0.1.7: checksum mismatch\n        downloaded: h1:NSC/rjZVfg1gowKBadpjtxDpMhmgnzXGQ7iDstaFvGI=\n        go.sum:     h1:8M1LazT+lD3qJP1ERWXiVzQn9lPMO3p6v3qsiGNKUlQ=\n\nSECURITY ERROR",
    "verifying github.com/ozontech/allure-go/pkg/framework@v0.6.21: checksum mismatch\n    downloaded: h1:FVHaO6tkZl1RulL35HZ+M9NlkCtlKpVOR1TSgdEokF4=\n    go.sum:     h1:gSqCHeysGi2+05aeYf02JouLroAB4fQhVkwLTtq1yCY=\nSECURITY ERROR",
    "https://github.com/projectdiscovery/chaos-client/issues/48 https://github.com/ozontech/allure-go/issues/76",
  ],
  [
    "a data error's value and the user's key",
    "SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry '1' for key 'PRIMARY'",
    "SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry '0-media-content' for key 'PRIMARY'",
    "https://github.com/goodby/csv/issues/4 https://github.com/unl/UNL_MediaHub/issues/206",
  ],
  [
    "the Docker network the user named",
    "Error response from daemon: network wplocaldocker not found",
    "docker: Error response from daemon: network phpapp_appnet not found.",
    "https://github.com/10up/wp-local-docker-v2/issues/354 https://github.com/shipping-docker/php-app/issues/37",
  ],
  [
    "punctuation between words: a client's JSON error object and the driver's class, with and without the colon",
    'Error Message: {"name":"cluster0-shard-00-01-psdsj.mongodb.net:27017","err":{"name":"MongoError","message":"bad auth Authentication failed.","ok":0,"errmsg":"bad auth Authentication failed.","code":8000,"codeName":"AtlasError"}}',
    "MongoError: bad auth : Authentication failed.",
    "https://github.com/microsoft/vscode-cosmosdb/issues/1003 https://github.com/perak/extract-mongo-schema/issues/33",
  ],
  [
    "an error object printed without its quotes: its message field",
    "{ok: 0, errmsg: 'bad auth : Authentication failed.', code: 8000, codeName: 'AtlasError'}",
    "MongoError: bad auth : Authentication failed.",
    "https://github.com/ThomasAurelius/volunteer_planner/issues/32 (its errorResponse object, as node prints it) https://github.com/perak/extract-mongo-schema/issues/33",
  ],
  [
    "the user's packages in Go's import cycle",
    "import cycle not allowed\npackage github.com/abc/abc/a\n  imports github.com/abc/abc/b\n  imports github.com/abc/abc/a",
    "import cycle not allowed\npackage github.com/kongyixueyuan.com/education\n\timports github.com/kongyixueyuan.com/education/sdkInit\n\timports github.com/hyperledger/fabric-sdk-go/pkg/client/channel\n\timports net/http\n\timports runtime/cgo",
    "https://github.com/golang/go/issues/28845 https://github.com/kevin-hf/education/issues/9",
  ],
  [
    "an Oracle error number names its message, in whatever words a client prints it",
    "ora-12154 tns could not resolve service name",
    "oci_connect(): ORA-12154: TNS:could not resolve the connect identifier specified",
    "https://github.com/joeferner/node-oracle/issues/266 https://github.com/jfelder/Laravel-OracleDB/issues/34",
  ],
  [
    "the SQLSTATE a client appends to PostgreSQL's message",
    'ERROR: column "owner" of relation "users" does not exist (SQLSTATE 42703)',
    'ERROR:  column "owner" of relation "users" does not exist',
    "https://github.com/jackc/pgx/issues/1063 (pgx's words); the second is PostgreSQL's own, as psql prints it",
  ],
];

/** [rule, a, b, sources]: different errors that a version-5 rule could join. */
const V5_DIFFERENT: [string, string, string, string][] = [
  [
    "make's own errors for two targets stay apart, and apart from an empty report",
    "make: *** No rule to make target 'install'.  Stop.",
    "make: *** No rule to make target 'all'.  Stop.",
    "https://github.com/synthetos/PiOCD/issues/2; 'all' in make's same words",
  ],
  [
    "a library's main class (a missing wrapper jar) and the user's own",
    "Error: Could not find or load main class org.gradle.wrapper.GradleWrapperMain",
    "Error: Could not find or load main class vm.Main",
    "https://github.com/alexeymatveevp/wsdldoc/issues/1 https://github.com/IgorTimofeev/OpenComputersVM/issues/7",
  ],
  [
    "a circular import and an import of a name a library no longer has",
    "ImportError: cannot import name 'JPAKE' from partially initialized module 'jpake' (most likely due to a circular import)",
    "ImportError: cannot import name 'JPAKE' from 'jpake'",
    "https://github.com/warner/python-jpake/issues/2; the second in Python's words for a missing name",
  ],
  [
    "two C++ standards stay apart (a draft name maps to its own standard only)",
    "error: ISO C++1z does not allow 'register' storage class specifier [-Werror=register]",
    "error: ISO C++1y does not allow 'register' storage class specifier [-Werror=register]",
    "https://github.com/prusa3d/Prusa-Firmware/pull/3528; C++14's draft name in gcc's same words",
  ],
  [
    "a list of versions (no range operator) stays a list",
    "candidate versions found which didn't match: 3.2.25, 3.2.24, 3.2.23",
    "candidate versions found which didn't match: 3.2.25",
    "cargo's words (the candidates cargo lists when a requirement does not match)",
  ],
  [
    "a value in another script inside quotes is no prose: the message after it stays",
    "java.sql.SQLException: The server time zone value '?й???????' is unrecognized or represents more than one time zone.",
    "java.sql.SQLException: The server time zone value '?й???????'",
    "https://github.com/SpringStudent/remote-desktop-control/issues/20; the second cut short",
  ],
  [
    "a name that is no user's object (a kind of software) stays: two missing plugins",
    'Error: Could not find plugin "proto". Make sure the plugin is installed',
    'Error: Could not find plugin "go". Make sure the plugin is installed',
    "synthetic, in the protoc wrapper's words: 'plugin' is not among the kinds whose names are folded",
  ],
  [
    "a duplicate entry and a row too long for its column stay apart",
    "SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry '1' for key 'PRIMARY'",
    "SQLSTATE[22001]: String data, right truncated: 1406 Data too long for column 'name' at row 1",
    "https://github.com/goodby/csv/issues/4; MySQL's 1406 in PDO's words",
  ],
  [
    "contractions unfold, negation stays: could not and could",
    "Couldn't resolve host 'www.example.com'",
    "Could resolve host 'www.example.com'",
    "https://github.com/curl/curl/issues/796; the second is its negation, which must not join",
  ],
  [
    "a class the JVM could not initialize (its static initializer failed) is no class it could not find",
    "java.lang.NoClassDefFoundError: Could not initialize class sun.awt.X11.XToolkit",
    "java.lang.NoClassDefFoundError: sun/awt/X11/XToolkit",
    "https://github.com/youtube/api-samples/issues/260; the second in the JVM's words for a class missing from the class path",
  ],
  [
    "two Oracle errors stay apart",
    "ORA-12154: TNS:could not resolve the connect identifier specified",
    "ORA-12541: TNS:no listener",
    "https://github.com/oracle/node-oracledb/issues/996; ORA-12541 in Oracle's words",
  ],
  [
    "a Python module named in a dotted Java-like name stays (no source extension is read into it)",
    "ModuleNotFoundError: No module named 'pyspark.ml'",
    "ModuleNotFoundError: No module named 'pyspark.sql'",
    "synthetic, in Python's words",
  ],
];

describe("normalizer 5: miss classes share a fingerprint", () => {
  for (const [name, a, b] of V5_SAME) {
    test(name, () => {
      expect(normalizeError(a)).toBe(normalizeError(b));
      // Version 4 kept every one of these apart: the rule is what makes them match.
      expect(normalizeError(a, 4)).not.toBe(normalizeError(b, 4));
    });
  }
});

describe("normalizer 5: different errors stay apart", () => {
  for (const [name, a, b] of V5_DIFFERENT) {
    test(name, () => {
      expect(normalizeError(a)).not.toBe(normalizeError(b));
    });
  }
  test("make's own error is not empty", () => {
    // https://github.com/synthetos/PiOCD/issues/2
    expect(normalizeError("make: *** No rule to make target 'install'.  Stop.")).toBe("make no rule to make target install");
    expect(normalizeError("make: *** No rule to make target 'install'.  Stop.", 4)).toBe("");
  });
});

describe("normalizer 5: normal forms", () => {
  test("an IPv6 address's zone is the machine's interface", () => {
    // https://github.com/PostgresApp/PostgresApp/issues/234
    expect(normalizeError('psql: FATAL:  no pg_hba.conf entry for host "fe80::1%lo0", user "user", database "dbnamehere", SSL off')).toBe(
      "no pg_hba.conf entry for host <ip> user <user> database <name> ssl off",
    );
  });
  test("the words after NoClassDefFoundError's colon are no class name", () => {
    // https://github.com/feihong-cs/JNDIExploit/issues/4 (a user's class whose initializer failed)
    expect(normalizeError("java.lang.NoClassDefFoundError: Could not initialize class com.feihong.ldap.utils.Cache")).toBe(
      "could not initialize class com.feihong.ldap.utils.cache",
    );
  });
  test("a contraction reads as its long form", () => {
    // https://github.com/curl/curl/issues/796 (older curl's words; newer curl prints "Could not resolve host: x")
    expect(normalizeError("Couldn't resolve host 'www.example.com'")).toBe("could not resolve host www.example.com");
  });
  test("an npm peer requirement's range becomes <ver>", () => {
    // https://github.com/oflisback/react-favicon/issues/27
    expect(
      normalizeError(
        "npm WARN react-favicon@0.0.18 requires a peer of react@>=0.12.0 <17.0.0 but none is installed. You must install peer dependencies yourself.",
      ),
    ).toBe("react-favicon@<ver> requires a peer of react@<ver> but none is installed");
  });
  test("a range joined by || becomes <ver> (yarn's words)", () => {
    // https://github.com/technote-space/frourio-demo/pull/147
    expect(normalizeError('warning " > swr@0.5.4" has unmet peer dependency "react@^16.11.0 || ^17.0.0".')).toBe(
      "warning > swr@<ver> has unmet peer dependency react@<ver>",
    );
  });
});
