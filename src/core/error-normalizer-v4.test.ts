// Normalizer version 4 (error-normalizer-v4.ts, frozen): each rule, with real reports from public
// issue threads (none of them taken from the retrieval dev set). Every pair below is one error as
// two reports show it; version 3 kept them apart, version 4 joins them, and later versions keep them
// joined. The pairs after it are different errors that the new rules could wrongly join: they must
// stay apart under version 4 and the current version.
import { describe, expect, test } from "bun:test";
import { normalizeError } from "./fingerprint.ts";

/** [rule, a, b, sources]: the same error in two reports. */
const V4_SAME: [string, string, string, string][] = [
  [
    "Windows' connectex text in its POSIX words: the same cluster that is not running, Helm on Windows and on Linux",
    'Error: Kubernetes cluster unreachable: Get "http://localhost:8080/version": dial tcp [::1]:8080: connectex: No connection could be made because the target machine actively refused it.',
    'Error: INSTALLATION FAILED: Kubernetes cluster unreachable: Get "http://localhost:8080/version?timeout=32s": dial tcp 127.0.0.1:8080: connect: connection refused',
    "synthetic, in the words Helm and Go print on each system",
  ],
  [
    "a failed request names its host in front of the dial, as a wrapper that names only the host does",
    'go: github.com/example/mod@v1.2.3: Get "https://proxy.golang.org/github.com/example/mod/@v/v1.2.3.mod": dial tcp 142.250.64.81:443: i/o timeout',
    "proxy.golang.org: dial tcp 142.250.64.81:443: i/o timeout",
    "synthetic, in the words the go command prints",
  ],
  [
    "Windows' text of a listener's bind error in its POSIX words",
    "Error: listen tcp 0.0.0.0:11434: bind: Only one usage of each socket address (protocol/network address/port) is normally permitted.",
    "2022/05/06 18:13:12 ERR listen tcp :8888: bind: address already in use",
    "https://github.com/ollama/ollama/issues/10063 https://github.com/bluenviron/mediamtx/issues/939",
  ],
  [
    "runner lines: docker push's per-layer progress before the registry's refusal",
    "+ docker push registry.hub.docker.com/getintodevops/hellonode:21\nThe push refers to a repository [registry.hub.docker.com/getintodevops/hellonode]\ncba63da76181: Preparing\n6c433c4837ac: Preparing\n8ee318e54723: Waiting\ne6695624484e: Waiting\ndenied: requested access to the resource is denied\nscript returned exit code 1",
    "ERROR: denied: requested access to the resource is denied",
    "https://github.com/releaseworks/hellonode/issues/2 https://github.com/microsoft/vscode-docker/issues/2377",
  ],
  [
    "the file an out-of-watchers error happened to watch",
    "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/foldername/abcrypto/static'",
    "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/test/tmp/too_many_open_files/requests1/1670337180_4783964_http_www_example_com.appmap.json'\n    at FSWatcher.<computed> (node:internal/fs/watchers:244:19)\n    at Object.watch (node:fs:2315:34)",
    "https://github.com/gatsbyjs/gatsby/issues/11406 https://github.com/getappmap/appmap-js/issues/881",
  ],
  [
    "the directory an out-of-files error happened to watch",
    "Watchpack Error (watcher): Error: EMFILE: too many open files, watch '/home/myuser/rpms/javascript/next_js/next_js_test'",
    "EMFILE: too many open files, watch",
    "https://github.com/webpack/watchpack/issues/181 https://github.com/mikkopaderes/ember-cloud-firestore-adapter/issues/118",
  ],
  [
    "the file a layer was writing when the disk filled",
    "failed to register layer: Error processing tar file(exit status 1): write /usr/lib/x86_64-linux-gnu/libgio-2.0.so.0.4200.1: no space left on device.",
    "failed to register layer: Error processing tar file(exit status 1): write /opt/conda/lib/python3.6/site-packages/torch/lib/libtorch.so: no space left on device.",
    "https://github.com/docker-archive-public/docker.kitematic/issues/3828 https://github.com/NVIDIA-NeMo/Speech/issues/1029",
  ],
  [
    "wrapped cause: Go's x509 error inside a client's request and Go 1.20's 'tls: failed to verify certificate'",
    'tls_client.exceptions.TLSClientExeption: failed to do request: Get "https://192.168.111.30:18444/something": x509: certificate signed by unknown authority.',
    "tls: failed to verify certificate: x509: certificate signed by unknown authority",
    "https://github.com/FlorianREGAZ/Python-Tls-Client/issues/75 https://github.com/hashicorp/nomad/issues/18833",
  ],
  [
    "wrapped cause: the REST mapper's error under kubectl's 'resource mapping not found' (the user's names and file), and its newer hint line",
    'error: resource mapping not found for name: "nacos.nacos.io" namespace: "" from "nacos-operator-all.yaml": no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1beta1"\nensure CRDs are installed first',
    'error: resource mapping not found for name: "iamroles.iammanager.keikoproj.io" namespace: "" from "https://raw.githubusercontent.com/keikoproj/iam-manager/master/hack/iam-manager.yaml": no matches for kind "CustomResourceDefinition" in version "apiextensions.k8s.io/v1beta1"',
    "https://github.com/StarRocks/starrocks-kubernetes-operator/issues/577 https://github.com/keikoproj/iam-manager/issues/106 (its title)",
  ],
  [
    "wrapped cause: a Redis error reply inside node-redis' and ioredis' wrappers",
    "[YzBot][10:39:58.547][ERRO] [ErrorReply: NOAUTH Authentication required.]",
    "[ioredis] Unhandled error event: ReplyError: NOAUTH Authentication required.\n    at JavascriptReplyParser.replyParser.Parser.returnError (/Users/Olegzandr/WebstormProjects/ioredis/lib/redis/parser.js:25:25)",
    "https://github.com/Le-niao/Yunzai-Bot/issues/887 https://github.com/redis/ioredis/issues/307",
  ],
  [
    "wrapped cause: apt's resolver failure under 'Failed to fetch' and under 'Err:N'",
    "W: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/bionic/InRelease  Temporary failure resolving 'archive.ubuntu.com'",
    "Err:1 http://archive.ubuntu.com/ubuntu artful/main amd64 libdbus-1-3 amd64 1.10.22-1ubuntu1\n  Temporary failure resolving 'archive.ubuntu.com'",
    "https://github.com/microsoft/WSL/issues/4792 https://github.com/systemd/mkosi/issues/185",
  ],
  [
    "banner: CMake's location header over its message",
    'CMake Error at CMakeLists.txt:3 (project):\n  No CMAKE_CXX_COMPILER could be found.\n\n  Tell CMake where to find the compiler by setting either the environment\n  variable "CXX" or the CMake cache entry CMAKE_CXX_COMPILER to the full path\n  to the compiler, or to the compiler name if it is in the PATH.',
    "No CMAKE_CXX_COMPILER could be found.",
    "https://github.com/nativeformat/NFDecoder/issues/2 https://github.com/Samsung/rlottie/issues/502 (its title)",
  ],
  [
    "user's names: the unstable library feature a crate used (E0658)",
    "error[E0658]: use of unstable library feature 'once_cell_try'",
    "error[E0658]: use of unstable library feature 'byte_slice_trim_ascii'\n   --> jomini-0.27.2/src/binary/resolver.rs:140:48\n    |\n140 |             lookup.insert(z, String::from(text.trim_ascii_end()));\n    |                                                ^^^^^^^^^^^^^^",
    "https://github.com/OpenByteDev/dll-syringe/issues/26 https://github.com/rakaly/jomini/issues/166",
  ],
  [
    "user's values: the time zone a MySQL server reported",
    "Caused by: com.mysql.cj.exceptions.InvalidConnectionAttributeException: The server time zone value 'CEST' is unrecognized or represents more than one time zone. You must configure either the server or JDBC driver (via the serverTimezone configuration property) to use a more specifc time zone value if you want to utilize time zone support.",
    "java.sql.SQLException: The server time zone value '?й???????' is unrecognized or represents more than one time zone. You must configure either the server or JDBC driver (via the 'serverTimezone' configuration property) to use a more specifc time zone value if you want to utilize time zone support.",
    "https://github.com/urlaubsverwaltung/urlaubsverwaltung/issues/678 https://github.com/SpringStudent/remote-desktop-control/issues/20",
  ],
  [
    "wrapped cause: a database client's class (Django's, psycopg2's) in front of the server's message",
    "django.db.utils.OperationalError: could not connect to server: Connection refused",
    "psycopg2.OperationalError: could not connect to server: Connection refused",
    "https://github.com/QingdaoU/OnlineJudge/issues/210 https://github.com/ErnstHaagsman/djangodocker/issues/3",
  ],
  [
    "version wording: node before 13 printed a listener's errno without its text",
    "Error: listen EADDRINUSE 0.0.0.0:3000",
    "Error: listen EADDRINUSE: address already in use :::3000",
    "https://github.com/GroceriStar/groceristar/issues/206 https://github.com/slack-samples/javascript-announcement-bot/issues/20",
  ],
  [
    "user's names: the functions a C compiler names in a diagnostic that carries its warning flag",
    "ext2spice.c:938:2: error: implicit declaration of function 'EFVisitNodes' is invalid in C99 [-Werror,-Wimplicit-function-declaration]",
    "CalmaRead.c:197:10: error: implicit declaration of function 'calmaReadI2Record' is invalid in C99 [-Werror,-Wimplicit-function-declaration]",
    "https://github.com/RTimothyEdwards/magic/issues/69 (two lines of the same build)",
  ],
  [
    "runner lines: gcc's 'compilation terminated.' after a fatal error",
    "fatal error: Python.h: No such file or directory\ncompilation terminated.\npython/CMakeFiles/g2o.dir/build.make:62: recipe for target 'python/CMakeFiles/g2o.dir/g2o.cpp.o' failed\nmake[2]: *** [python/CMakeFiles/g2o.dir/g2o.cpp.o] Error 1",
    "fatal error: Python.h: No such file or directory",
    "https://github.com/uoip/g2opy/issues/36 https://github.com/andriyor/ghtopdep/pull/4",
  ],
  [
    "user's names: the beans of a Spring dependency cycle",
    "The dependencies of some of the beans in the application context form a cycle:\n\n   jwtSecurityConfig defined in URL [jar:file:/Users/Downloads/java-ecom/backend/target/bundle-java-1.0.0.jar!/BOOT-INF/classes!/com/akveo/bundlejava/config/JwtSecurityConfig.class]\n┌─────┐\n|  tokenService defined in URL [jar:file:/Users/Downloads/java-ecom/backend/target/bundle-java-1.0.0.jar!/BOOT-INF/classes!/com/akveo/bundlejava/authentication/TokenService.class]",
    "The dependencies of some of the beans in the application context form a cycle:",
    "https://github.com/akveo/ngx-admin-bundle-support/issues/97 https://github.com/RamAlapure/JavaFXSpringBootApp/issues/7 (its title)",
  ],
  [
    "user's names: the component Android's manifest merger names",
    "Manifest merger failed : android:exported needs to be explicitly specified for <activity>. Apps targeting Android 12 and higher are required to specify an explicit value for `android:exported` when the corresponding component has an intent filter defined. See https://developer.android.com/guide/topics/manifest/activity-element#exported for details.",
    "Manifest merger failed : android:exported needs to be explicitly specified for element <activity#com.mercadopago.android.px.internal.features.checkout.CheckoutActivity>. Apps targeting Android 12 and higher are required to specify an explicit value for `android:exported` when the corresponding component has an intent filter defined. See https://developer.android.com/guide/topics/manifest/activity-element#exported for details.",
    "https://github.com/mozilla-mobile/fenix/issues/22539 https://github.com/mercadopago/px-android/issues/2675",
  ],
  [
    "user's values: the expression's ordinal, PDO's SQLSTATE and MySQL's number before a long message, a PHP framework's location after it",
    "SQLSTATE[42000]: Syntax error or access violation: 1055 Expression #7 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'objektdatenbank.d.property' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by (in /site/modules/VersionControl/ProcessVersionControl.module line 249)",
    "Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'humhub.notification.id' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by",
    "https://github.com/teppokoivula/VersionControl/pull/5 https://github.com/humhub/humhub/issues/2052 (its 'Error Info' array)",
  ],
  [
    "machine's values: the host triple of a Rust toolchain",
    "error: toolchain 'nightly-x86_64-pc-windows-msvc' is not installed",
    "error: toolchain 'nightly-x86_64-unknown-linux-gnu' is not installed",
    "https://github.com/dtolnay/cargo-expand/issues/43 https://github.com/libLISA/liblisa/pull/2",
  ],
];

/** [why they must stay apart, a, b, sources]: different errors a version-4 rule could join. */
const V4_DIFFERENT: [string, string, string, string][] = [
  [
    "a failed dial says only that something was unreachable: an admission webhook's service and a cluster that is not running stay apart",
    'Error from server (InternalError): error when creating "ingress.yaml": Internal error occurred: failed calling webhook "validate.nginx.ingress.kubernetes.io": Post "https://ingress-nginx-controller-admission.ingress-nginx.svc:443/networking/v1/ingresses?timeout=10s": dial tcp 10.96.14.21:443: connect: connection refused',
    'Error: INSTALLATION FAILED: Kubernetes cluster unreachable: Get "http://localhost:8080/version": dial tcp [::1]:8080: connectex: No connection could be made because the target machine actively refused it.',
    "synthetic, in the words kubectl, Helm and Go print",
  ],
  [
    "a failed dial without a host named: a proxy's upstream and kubectl's missing cluster stay apart",
    "+0800 2023-10-16 20:54:17 ERROR [3100695417] inbound/http[http]: process connection from 127.0.0.1:52440: dial tcp 127.0.0.1:5080: connectex: No connection could be made because the target machine actively refused it.",
    'unable to recognize "/home/ec2-user/environment/fluentd/fluentd.yml": Get http://localhost:8080/api?timeout=32s: dial tcp 127.0.0.1:8080: connect: connection refused',
    "https://github.com/HyNetworks/hysteria/issues/755 https://github.com/aws-samples/eks-workshop/issues/358",
  ],
  [
    "a failed dial: the module proxy and a registry that time out stay apart",
    'go: github.com/example/mod@v1.2.3: Get "https://proxy.golang.org/github.com/example/mod/@v/v1.2.3.mod": dial tcp 142.250.64.81:443: i/o timeout',
    'Error response from daemon: Get "https://registry-1.docker.io/v2/": dial tcp 54.236.113.205:443: i/o timeout',
    "synthetic, in the words the go command and docker print",
  ],
  [
    "a failed dial: a database driver's server and a cluster that is not running stay apart",
    "failed to connect to `host=localhost user=postgres database=app`: dial error (dial tcp 127.0.0.1:5432: connect: connection refused)",
    'Get "http://localhost:8080/api?timeout=32s": dial tcp 127.0.0.1:8080: connect: connection refused',
    "synthetic, in the words pgx and kubectl print",
  ],
  [
    "a stated limit is no machine's size: InnoDB's 767 bytes and MyISAM's 1000 bytes need different fixes",
    "Specified key was too long; max key length is 767 bytes",
    "Specified key was too long; max key length is 1000 bytes",
    "https://github.com/owncloud/core/pull/5672 https://github.com/febsteam/FEBS-Shiro/pull/139",
  ],
  [
    "the MySQL error number stays in front of a message that stays short",
    "1071 Specified key was too long; max key length is 3072 bytes",
    "Error 1071: Specified key was too long; max key length is 1000 bytes",
    "https://github.com/nextcloud/mail/issues/4827 https://github.com/documize/community/issues/142",
  ],
  [
    "the inner cause keeps what follows it: a bind refused and a bind in use",
    "E0811 09:55:40.950978   39150 main.go:26] listen tcp :53: bind: permission denied",
    "E0811 09:56:00.630759   39164 main.go:26] listen tcp :53: bind: address already in use",
    "https://github.com/ARwMq9b6/dnsproxy/issues/8 (two runs in the same report)",
  ],
  [
    "the inner cause keeps what follows it: refused and timed out",
    'Get "http://localhost:8080/api?timeout=32s": dial tcp 127.0.0.1:8080: connect: connection refused',
    "could not connect to server: Connection timed out",
    "https://github.com/sandervanvugt/cka/issues/33 https://github.com/hellno/kono_data/issues/262",
  ],
  [
    "an unstable feature (E0658) and '#![feature]' on the stable channel (E0554) stay apart",
    "error[E0658]: use of unstable library feature 'once_cell_try'",
    "error[E0554]: `#![feature]` may not be used on the stable release channel",
    "https://github.com/OpenByteDev/dll-syringe/issues/26 https://github.com/OpenByteDev/dll-syringe/issues/27",
  ],
  [
    "out of watchers (ENOSPC) and out of file handles (EMFILE) stay apart after the watched path goes",
    "Error: ENOSPC: System limit for number of file watchers reached, watch '/home/foldername/abcrypto/static'",
    "Watchpack Error (watcher): Error: EMFILE: too many open files, watch '/home/myuser/rpms/javascript/next_js/next_js_test'",
    "https://github.com/gatsbyjs/gatsby/issues/11406 https://github.com/webpack/watchpack/issues/181",
  ],
  [
    "a database client's class goes, the server's message stays: refused and timed out",
    "django.db.utils.OperationalError: could not connect to server: Connection refused",
    "django.db.utils.OperationalError in psycopg2/__init__.py:130\ncould not connect to server: Connection timed out",
    "https://github.com/QingdaoU/OnlineJudge/issues/210 https://github.com/hellno/kono_data/issues/262",
  ],
  [
    "the warning flag that identifies a diagnostic whose names are folded stays",
    "ext2spice.c:938:2: error: implicit declaration of function 'EFVisitNodes' is invalid in C99 [-Werror,-Wimplicit-function-declaration]",
    "ISO C99 and later do not support implicit int [-Wimplicit-int]",
    "https://github.com/RTimothyEdwards/magic/issues/69 https://github.com/adokter/rsl/issues/25",
  ],
  [
    "the host triple goes, what rustup says of the toolchain stays",
    "error: toolchain 'nightly-x86_64-pc-windows-msvc' does not contain component 'rust-std' for target 'nightly-x86_64-pc-windows-msvc'",
    "error: toolchain 'nightly-x86_64-pc-windows-msvc' is not installed",
    "https://github.com/raspberryhusky/rsmaker/issues/1 https://github.com/dtolnay/cargo-expand/issues/43",
  ],
];

describe("normalizer 4: miss classes share a fingerprint", () => {
  for (const [name, a, b] of V4_SAME) {
    test(name, () => {
      expect(normalizeError(a, 4)).toBe(normalizeError(b, 4));
      expect(normalizeError(a)).toBe(normalizeError(b));
      // Version 3 kept every one of these apart: the rule is what makes them match.
      expect(normalizeError(a, 3)).not.toBe(normalizeError(b, 3));
    });
  }
});

describe("normalizer 4: different errors stay apart", () => {
  for (const [name, a, b] of V4_DIFFERENT) {
    test(name, () => {
      expect(normalizeError(a, 4)).not.toBe(normalizeError(b, 4));
      expect(normalizeError(a)).not.toBe(normalizeError(b));
    });
  }
});

describe("normalizer 4: normal forms", () => {
  test("a registry's refusal to pull ends at 'docker login'", () => {
    // https://github.com/HodorNV/ALOps/issues/375; kubelet prints the same without the registry's detail
    expect(
      normalizeError(
        "Error response from daemon: pull access denied for myimage, repository does not exist or may require 'docker login': denied: requested access to the resource is denied",
        4,
      ),
    ).toBe("pull access denied for <name>, repository does not exist or may require docker login");
  });
  test("a failed request's dial keeps the host it was reaching, in POSIX words", () => {
    // synthetic: the same refusal from a cluster's webhook service (a private name, redacted) and
    // from the address kubectl falls back to without a kubeconfig
    expect(
      normalizeError(
        'failed calling webhook "validate.nginx.ingress.kubernetes.io": Post "https://ingress-nginx-controller-admission.ingress-nginx.svc:443/networking/v1/ingresses?timeout=10s": dial tcp 10.96.14.21:443: connect: connection refused',
        4,
      ),
    ).toBe("redacted_host: dial tcp <ip>:<port>: connect: connection refused");
    expect(
      normalizeError(
        'Kubernetes cluster unreachable: Get "http://localhost:8080/version": dial tcp [::1]:8080: connectex: No connection could be made because the target machine actively refused it.',
        4,
      ),
    ).toBe("<ip>: dial tcp <ip>:<port>: connect: connection refused");
  });
});
