// Normalizer version 3 (error-normalizer-v3.ts, frozen): each rule, with the real reports it was
// written from. Every pair below is one error as two reports show it; version 2 kept them apart,
// version 3 joins them, and later versions keep them joined. The pairs after it are different
// errors that must stay apart under version 3 and the current version.
import { describe, expect, test } from "bun:test";
import { normalizeError } from "./fingerprint.ts";

/** [rule, a, b, sources]: the same error in two reports. */
const V3_SAME: [string, string, string, string][] = [
  [
    "logger prefix: Heroku's dyno column 'app[web.1]: ' after the timestamp",
    "2013-04-29T02:33:02.894961+00:00 app[web.1]: Error: Cannot find module 'debug'",
    "Error: Cannot find module 'debug'\n    at Function.Module._resolveFilename (module.js:336:15)\n    at Function.Module._load (module.js:278:25)",
    "https://github.com/dbashford/mimosa/issues/178 https://github.com/expressjs/morgan/issues/55",
  ],
  [
    "logger prefix: logback's '[main]' thread column is no lost ANSI code",
    "19:01:06.674 [main] ERROR c.e.app.Application - SSLHandshake No appropriate protocol (protocol is disabled or cipher suites are inappropriate)",
    "SSLHandshake No appropriate protocol (protocol is disabled or cipher suites are inappropriate)",
    "https://logback.qos.ch/manual/layouts.html https://github.com/eclipse-ee4j/jersey/pull/5198",
  ],
  [
    "logger prefix: Dropwizard's '! ' in front of every line of a stack",
    "! javax.net.ssl.SSLHandshakeException: No appropriate protocol (protocol is disabled or cipher suites are inappropriate)\n! at sun.security.ssl.Handshaker.activate(Handshaker.java:503) ~[na:1.8.0_45]",
    "Caused by: javax.net.ssl.SSLHandshakeException: No appropriate protocol (protocol is disabled or cipher suites are inappropriate)\n\tat com.tencent.kona.sun.security.ssl.HandshakeContext.<init>(HandshakeContext.java:171) ~[tlcp-jar-with-dependencies.jar:?]",
    "https://github.com/phaneesh/revolver/issues/2 https://github.com/apache/jmeter/issues/6282",
  ],
  [
    "runner prefix: Terraform's box '│ ' around a provider's error",
    "│ Error: cannot re-use a name that is still in use\n│ \n│   with module.cert-manager.helm_release.cert_manager[0],",
    "Error: cannot re-use a name that is still in use",
    "https://github.com/tetratelabs/tetrate-service-bridge-sandbox/issues/107 https://github.com/FederatedAI/KubeFATE/issues/186",
  ],
  [
    "runner trailer: compose's 'exited with code' line",
    'db_1             | FATAL:  database "tripal" does not exist\ntripal_tripal_1 exited with code 2',
    'FATAL:  database "tripal" does not exist',
    "https://github.com/galaxy-genome-annotation/docker-tripal/issues/19 (the same report without its last line)",
  ],
  [
    "runner trailer: make's 'recipe for target' line, ninja's 'build stopped'",
    "nvcc fatal   : Unsupported gpu architecture 'compute_86'\nMakefile:183: recipe for target 'obj/convolutional_kernels.o' failed\nmake: *** [obj/convolutional_kernels.o] Error 1",
    "nvcc fatal   : Unsupported gpu architecture 'compute_86'\nninja: build stopped: subcommand failed",
    "https://github.com/googlecolab/colabtools/issues/1748 https://github.com/Ruyi-Zha/naf_cbct/issues/15",
  ],
  [
    "traceback: node's 'Require stack:' list under the message",
    "Error: Cannot find module 'node:events'\nRequire stack:\n- E:\\Projects\\aff\\node_modules\\express\\lib\\express.js",
    "Error: Cannot find module 'node:events'",
    "https://github.com/serverless/serverless/issues/13056 https://github.com/RileCraft/DiscordBot-Template/issues/8",
  ],
  [
    "chatter before the error: a dev server's own progress lines before Go's panic",
    "[gaper] Building program\n[gaper] Starting program\n[gaper] Building program\npanic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0xa0 pc=0x4d0ca6]",
    "panic: runtime error: invalid memory address or nil pointer dereference\n[signal SIGSEGV: segmentation violation code=0x1 addr=0x98 pc=0xe1d30f]\n\ngoroutine 1 [running]:\nmain.main()\n    /app/main.go:69 +0x1af",
    "https://github.com/maxcnunes/gaper/issues/9 https://github.com/fiatjaf/njump/issues/65",
  ],
  [
    "wrapped cause: a Python exception's repr and pytest's 'E   ' line",
    "RecursionError('maximum recursion depth exceeded')",
    "E   RecursionError: maximum recursion depth exceeded",
    "https://github.com/packit/ogr/issues/506",
  ],
  [
    "wrapped cause: PyMySQL's tuple and the MySQL client's 'ERROR n (state):' format",
    "(1698, \"Access denied for user 'root'@'localhost'\")",
    "ERROR 1698 (28000): Access denied for user 'root'@'localhost'",
    "https://github.com/dbcli/mycli/issues/759 https://github.com/phpmyadmin/phpmyadmin/issues/14887",
  ],
  [
    "wrapped cause: PHP's mysqli prefix '(HY000/1698): '",
    "mysqli_real_connect(): (HY000/1698): Access denied for user 'root'@'localhost'",
    "ERROR 1698 (28000): Access denied for user 'root'@'localhost'",
    "https://github.com/phpmyadmin/phpmyadmin/issues/14887",
  ],
  [
    "wrapped cause: Spring's '; nested exception is' chain gives its innermost exception",
    "org.springframework.orm.hibernate3.HibernateSystemException: could not initialize proxy - no Session; nested exception is \n\norg.hibernate.LazyInitializationException: could not initialize proxy - no Session",
    "org.hibernate.LazyInitializationException: could not initialize proxy - no Session",
    "https://github.com/INCF/eeg-database/issues/88 https://github.com/apache/grails-data-mapping/issues/562",
  ],
  [
    "wrapped cause: Ruby's namespaced classes in front of the server's message",
    "ActiveRecord::StatementInvalid: Mysql2::Error: Incorrect string value: '\\xF0\\x9F\\x98\\xB6 ' for column 'text' at row 1:",
    "Mysql2::Error: Incorrect string value: '\\xF0\\x9F\\x98\\xB6 ' for column 'text' at row 1",
    "https://github.com/openaustralia/planningalerts/issues/1064 (the driver's own error without the ORM's class)",
  ],
  [
    "user source name: the user's Spring bean types",
    "NoSuchBeanDefinitionException: No qualifying bean of type 'hello.UserRepository' available: expected at least 1 bean which qualifies as autowire candidate.",
    "Caused by: org.springframework.beans.factory.NoSuchBeanDefinitionException: No qualifying bean of type 'eu.arrowhead.common.database.repository.AggregationRepository' available: expected at least 1 bean which qualifies as autowire candidate. Dependency annotations: {}",
    "https://github.com/spring-guides/gs-accessing-data-mysql/issues/24 https://github.com/eclipse-arrowhead/core-java-spring/pull/332",
  ],
  [
    "wrapped cause: tini's 'exec x failed: ' and the kernel's 'exec x: ' before the same system error",
    "[FATAL tini (6)] exec /usr/local/bin/entrypoint.sh failed: No such file or directory",
    "exec /usr/local/bin/entrypoint.sh: no such file or directory",
    "https://github.com/cedya77/aiometadata/issues/578 https://github.com/AtalayaLabs/OxiCloud/issues/289",
  ],
  [
    "context prefix: what a reporter or script printed before the tool's own 'error:'",
    "Mac OS 10.14.4 -configure: error: C compiler cannot create executables",
    "configure: error: C compiler cannot create executables",
    "https://github.com/EddyRivasLab/hmmer/issues/155 https://github.com/dschanoeh/socketcand/issues/23",
  ],
  [
    "user source name: the Go module (at a version) whose download failed",
    'go: github.com/go-sql-driver/mysql@v1.6.0: Get "https://proxy.golang.org/github.com/go-sql-driver/mysql/@v/v1.6.0.mod": dial tcp 172.217.163.49:443: i/o timeout',
    "go: github.com/gogo/protobuf@v1.3.1: Get https://proxy.golang.org/github.com/gogo/protobuf/@v/v1.3.1.mod: dial tcp 172.217.160.81:443: i/o timeout",
    "https://github.com/ac0d3r/MySQLMonitor/issues/3 https://github.com/withlin/canal-go/issues/57",
  ],
  [
    "logger prefix: Monolog's 'local.ERROR: ' after its timestamp and its context record after the message",
    '[2019-01-16 20:32:39] local.ERROR: NOAUTH Authentication required. {"exception":"[object] (Predis\\\\Response\\\\ServerException(code: 0): NOAUTH Authentication required. at /application/vendor/predis/predis/src/Client.php:370)',
    "NOAUTH Authentication required.",
    "https://github.com/guillaumebriday/laravel-blog/issues/52 https://github.com/redis/node-redis/issues/1631",
  ],
  [
    "logger prefix: Kubernetes' klog header and the source location after it",
    'E0418 04:56:17.489683       1 reflector.go:201] github.com/skippbox/kubewatch/pkg/controller/controller.go:147: Failed to list *v1.Pod: pods is forbidden: User "system:serviceaccount:default:default" cannot list pods at the cluster scope',
    'pods is forbidden: User "system:serviceaccount:default:default" cannot list pods at the cluster scope',
    "https://github.com/vmware-archive/kubewatch/issues/95 (the same report's message without the klog header)",
  ],
  [
    "user source name: the user's own database in PostgreSQL's message",
    '2024-04-08 21:13:26.690 UTC [75] FATAL:  database "not-postgres" does not exist',
    'FATAL:  database "armkdbd" does not exist',
    "https://github.com/docker-library/postgres/issues/1092",
  ],
  [
    "user source name: the user's image a registry refused",
    "Error response from daemon: pull access denied for minio, repository does not exist or may require 'docker login': denied: requested access to the resource is denied\nError: Process completed with exit code 1.",
    "Failed to pull image \"suedostcargo-web\": Error response from daemon: pull access denied for suedostcargo-web, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
    "https://github.com/wukongdaily/DockerTarBuilder/issues/11 https://github.com/kubernetes/minikube/issues/20613",
  ],
  [
    "context prefix: Go's listener error with and without the program's context and the host",
    "run: open server: listen: listen tcp 127.0.0.1:8088: bind: address already in use",
    "[negroni] listen tcp :3000: bind: address already in use",
    "https://github.com/influxdata/influxdb/issues/21004 https://github.com/urfave/negroni/issues/10",
  ],
  [
    "quoting: a whole report wrapped in backticks by the reporter",
    "`thread 'main' panicked at 'attempt to subtract with overflow', src/session/sidebar/selection.rs:160:55`",
    "thread 'main' panicked at 'attempt to subtract with overflow', src/menu.rs:556:68",
    "https://github.com/paper-plane-developers/paper-plane/issues/476 https://github.com/xvxx/phetch/issues/1",
  ],
  [
    "version wording: gcc names a warning promoted to an error '-Werror=x'",
    "discrete_src/vm.cpp:695:39: error: ISO C++17 does not allow ‘register’ storage class specifier [-Werror=register]",
    "./smmath.hh:444:10: error: ISO C++17 does not allow 'register' storage class specifier [-Wregister]",
    "https://github.com/jingoro2112/wrench/issues/3 https://github.com/swesterfeld/spectmorph/issues/23",
  ],
  [
    "version wording: advice after the first sentence changes between releases",
    "[ERROR] Source option 5 is no longer supported. Use 6 or later.",
    "[ERROR] Source option 5 is no longer supported. Use 8 or later.",
    "shared/eval/errors-dev.json c048 (javac through maven-compiler-plugin)",
  ],
  [
    "class: a message that identifies the error by itself, with and without its class",
    "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
    "module 'PIL.Image' has no attribute 'ANTIALIAS'",
    "https://github.com/moinwiki/moin/issues/1468 https://github.com/pythongosssss/ComfyUI-Custom-Scripts/issues/40",
  ],
  [
    "user source name: MinGW's archive member and section in front of the linker message",
    "c:/mingw/bin/../lib/gcc/mingw32/6.3.0/../../../libmingw32.a(main.o):(.text.startup+0xa0): undefined reference to `WinMain@16'",
    "undefined reference to `WinMain'",
    "https://github.com/CodeWithHarry/The-Ultimate-C-Programming-Course/issues/33 https://github.com/msys2/MINGW-packages/issues/21261",
  ],
  [
    "windows path: MSBuild's project file after the message",
    "“Eigen/Dense”: No such file or directory [E:\\instant-ngp\\build\\optix_program.vcxproj]",
    "fatal error: Eigen/Dense: No such file or directory",
    "https://github.com/NVlabs/instant-ngp/issues/254 https://github.com/ashawkey/cubvh/issues/13",
  ],
  [
    "user source name: the user's file at the end of a path the error names",
    "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/lws/nodeapps/demo1/public'",
    "client_1    | Error from chokidar (/app/src/_components): Error: ENOSPC: System limit for number of file watchers reached, watch '/app/src/_components/PrivateRoute.jsx'",
    "https://github.com/microsoft/vscode/issues/75041 https://github.com/ToolJet/ToolJet/issues/198",
  ],
];

/** [why, a, b]: different errors that look alike. */
const V3_DIFFERENT: [string, string, string][] = [
  [
    "a class stays in front of a system error text (the class says which call failed)",
    "ImportError: libGL.so.1: cannot open shared object file: No such file or directory",
    "OSError: libGL.so.1: cannot open shared object file: No such file or directory",
  ],
  ["a short message keeps its class", "KeyError: 'user_id'", "ValueError: 'user_id'"],
  [
    "MySQL's error number stays (1045: wrong password, 1698: socket authentication)",
    "pymysql.err.OperationalError: (1045, \"Access denied for user 'root'@'localhost'\")",
    "ERROR 1698 (28000): Access denied for user 'root'@'localhost'",
  ],
  ["rustc's 'error[E0382]:' is no syslog tag", "error[E0382]: use of moved value: `x`", "error[E0505]: use of moved value: `x`"],
  [
    "git's '! [rejected]' is no Dropwizard prefix",
    "! [rejected]        main -> main (fetch first)",
    "! [rejected]        main -> main (non-fast-forward)",
  ],
  ["the first sentence is kept whole when it is short", "Error: EACCES. Permission denied.", "Error: EACCES. Operation not permitted."],
  [
    "a module name in a message stays (the fix depends on it)",
    "ModuleNotFoundError: No module named 'distutils'",
    "ModuleNotFoundError: No module named 'distutils.util'",
  ],
];

describe("normalizer 3: miss classes share a fingerprint", () => {
  for (const [name, a, b] of V3_SAME) {
    test(name, () => {
      expect(normalizeError(a, 3)).toBe(normalizeError(b, 3));
      expect(normalizeError(a)).toBe(normalizeError(b));
      // Version 2 kept every one of these apart: the rule is what makes them match.
      expect(normalizeError(a, 2)).not.toBe(normalizeError(b, 2));
    });
  }
});

describe("normalizer 3: normal forms", () => {
  test("MySQL clients' formats of an error number become 'n: message'", () => {
    // https://github.com/WebDevSimplified/Learn-SQL/issues/8 (MySQL Workbench), https://github.com/lensh/vue-qq/issues/8 (mysql CLI)
    expect(normalizeError("Error Code: 1055. Expression #1 of SELECT list is not in GROUP BY clause", 3)).toBe(
      "1055: expression #1 of select list is not in group by clause",
    );
    expect(normalizeError("ERROR 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause", 3)).toBe(
      "1055: expression #1 of select list is not in group by clause",
    );
  });
});

describe("normalizer 3: different errors stay apart", () => {
  for (const [name, a, b] of V3_DIFFERENT) {
    test(name, () => {
      expect(normalizeError(a, 3)).not.toBe(normalizeError(b, 3));
      expect(normalizeError(a)).not.toBe(normalizeError(b));
    });
  }
});
