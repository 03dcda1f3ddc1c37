// Category of a trail from a fixed set: keyword and pattern rules first; when the rules are
// unsure, the caller's embedding fallback picks the nearest category centroid (the service
// embeds CATEGORY_SEEDS to form the centroids). Pure: no I/O.
import { foldedName } from "./folded-name.ts";
import type { Trail } from "./trail.ts";

export const CATEGORIES = [
  "dependency",
  "build",
  "configuration",
  "runtime",
  "network",
  "permissions",
  "database",
  "memory",
  "concurrency",
  "type_error",
  "syntax",
  "test",
  "deployment",
  "gpu",
  "other",
] as const;
export type Category = (typeof CATEGORIES)[number];

/**
 * A category as a client may write it in a filter (GET /v1/feed `category`), read as every name a
 * client writes in a filter (foldedName: any case, fullwidth forms, invisible characters dropped).
 * Categories are lowercase ASCII, so this is the one spelling the store holds.
 */
export function canonicalCategory(raw: string): string {
  return foldedName(raw);
}

/** Whether the store can hold this as a trail's category (a filter naming anything else finds nothing). */
export const isCategory = (name: string): name is Category => (CATEGORIES as readonly string[]).includes(name);

interface CategoryRule {
  category: Category;
  pattern: RegExp;
  weight: number;
}

const r = (category: Category, weight: number, pattern: RegExp): CategoryRule => ({ category, weight, pattern });

/**
 * Keyword rules. Weight 3: a signal that alone names the category (an error class or code);
 * 2: a strong hint; 1: a weak hint. Patterns are case-insensitive unless they spell a class name.
 */
export const CATEGORY_RULES: CategoryRule[] = [
  // dependency
  r(
    "dependency",
    3,
    /\bModuleNotFoundError\b|\bNo module named\b|\bCannot find module\b|\bMODULE_NOT_FOUND\b|\bERESOLVE\b|\bcould not resolve dependenc|\bunable to resolve dependency|\bpeer dep|\bNo matching distribution\b|\bdependency (?:tree|conflict|resolution)|\bversion conflict\b|\bunresolved (?:import|dependency)|\bpackage .{0,60}not found|\bcannot import name\b|\bDuplicate class\b|\bconflicting (?:dependencies|versions)/i,
  ),
  r(
    "dependency",
    3,
    /\bImportError\b|\bexternally-managed-environment\b|\bERR_REQUIRE_ESM\b|\bpackage\S* is not in (?:GOROOT|std)|\bcannot find package\b|\bno required module provides\b|\bCould not find (?:artifact|a version)|\bfailed to resolve\b/i,
  ),
  r(
    "dependency",
    1,
    /\b(?:pip|npm|yarn|pnpm|conda|poetry|cargo|gem|composer|maven|gradle|go mod|nuget) (?:install|add|update|upgrade|require|get|tidy)\b|\brequirements\.txt\b|\bpackage(?:-lock)?\.json\b|\bpeerDependenc|\blockfile\b|\bdowngrade\b|\bpin\b/i,
  ),
  // build
  r(
    "build",
    3,
    /\bundefined reference to\b|\bld(?:\.\w+)?: |\blinker (?:error|command failed)|\bcollect2\b|\bcompil(?:e|ation|er) (?:error|failed|terminated)|\bfatal error: [\w/.+-]+\.h(?:pp)?: No such file|\bmake(?:\[\d+\])?: \*\*\*|\bCMake Error\b|\bBUILD FAILED\b|\bbuild failed\b|\bgyp ERR!|\bnode-gyp\b|\bfailed to run custom build command\b|\berror: command '.*(?:gcc|clang|cl\.exe)'|\bSource option \d+ is no longer supported|\bmaven-compiler-plugin\b|\bCompilation failed\b|\bExecution failed for task\b|\bwebpack\b.{0,40}\b(?:error|failed)|\bModule build failed\b/i,
  ),
  r(
    "build",
    1,
    /\b(?:gcc|g\+\+|clang|msvc|cmake|make|ninja|bazel|javac|rustc|tsc|webpack|vite|esbuild|rollup|babel|gradle|mvn|msbuild)\b|\bheaders?\b|\b-dev\b|\bbuild\b/i,
  ),
  // configuration
  r(
    "configuration",
    3,
    /\b(?:is|was) not (?:set|defined|configured)\b|\bmissing (?:required )?(?:config|configuration|setting|environment variable)|\binvalid (?:config|configuration|setting)|\bmisconfigur|\benvironment variable\b.{0,40}\b(?:not set|missing|undefined)|\bsafe\.directory\b|\bdubious ownership\b|\bunknown (?:option|setting|property)\b|\bconfig(?:uration)? (?:file )?(?:error|not found)/i,
  ),
  r(
    "configuration",
    1,
    /\b\.env\b|\bconfig\b|\bsettings?\b|\b[A-Z][A-Z0-9_]{3,}=|\bPATH\b|\byaml\b|\btoml\b|\.ini\b|\bproperties\b|\bflag\b|\boption\b/i,
  ),
  // runtime
  r(
    "runtime",
    3,
    /\bRuntimeError\b|\bpanic(?:ked)?\b|\bAttributeError\b|\bKeyError\b|\bIndexError\b|\bValueError\b|\bNullPointerException\b|\bnil pointer dereference\b|\bundefined is not (?:a function|an object)\b|\bCannot read propert(?:y|ies) of (?:undefined|null)\b|\bNoneType\b|\bunwrap\(\)` on an? `(?:None|Err)|\bSegmentation fault\b|\bcore dumped\b|\bUnhandled(?:PromiseRejection| exception)|\bstack trace\b|\bTraceback\b|\bFileNotFoundError\b|\bENOENT\b|\berror while loading shared libraries\b|\bUnicodeDecodeError\b|\bZeroDivisionError\b/i,
  ),
  r("runtime", 1, /\bat runtime\b|\bcrash(?:es|ed)?\b|\bexception\b|\bthrown\b|\bshared librar/i),
  // network
  r(
    "network",
    3,
    /\bECONNREFUSED\b|\bECONNRESET\b|\bETIMEDOUT\b|\bENOTFOUND\b|\bEAI_AGAIN\b|\bgetaddrinfo\b|\bCould not resolve host(?:name)?\b|\bName or service not known\b|\bconnection (?:refused|reset|timed out)\b|\bnetwork is unreachable\b|\bsocket hang up\b|\bSSL(?:Error|HandshakeException|CertVerificationError)?\b|\bCERTIFICATE_VERIFY_FAILED\b|\bcertificate verify failed\b|\bPKIX path building failed\b|\bunable to get local issuer certificate\b|\bself[- ]signed certificate\b|\bTLS handshake\b|\bproxy\b.{0,30}\b(?:error|refused|authentication)|\b(?:502|503|504) (?:Bad Gateway|Service Unavailable|Gateway Time-?out)|\bDNS\b/i,
  ),
  r(
    "network",
    1,
    /\bport \d+\b|\bhttps?:\/\/|\bhost\b|\bsocket\b|\bfirewall\b|\blocalhost\b|\bIPv[46]\b|\bcert(?:ificate)?s?\b|\btruststore\b|\bcacerts\b/i,
  ),
  // permissions
  r(
    "permissions",
    3,
    /\bEACCES\b|\bEPERM\b|\bpermission denied\b|\bOperation not permitted\b|\bAccess (?:is )?denied\b|\bPermissionError\b|\bUnauthorizedAccessException\b|\binsufficient (?:permissions|privileges)\b|\bmust be run as root\b|\bnot in the sudoers\b|\b403 Forbidden\b|\bread-only file system\b/i,
  ),
  r("permissions", 1, /\bsudo\b|\bchmod\b|\bchown\b|\bowner(?:ship)?\b|\bprivileged?\b|\broot\b|\bgroup\b|\busermod\b|\badministrator\b/i),
  // database
  r(
    "database",
    3,
    /\b(?:postgres(?:ql)?|psql|mysql|mariadb|sqlite3?|mongo(?:db|ose)?|redis|cassandra|dynamodb|oracle|ORA-\d{5}|SQLSTATE|sqlalchemy|prisma|sequelize|typeorm|knex|hibernate|jdbc)\b|\brelation "[^"]+" does not exist\b|\brole "[^"]+" does not exist\b|\bAccess denied for user '[^']*'@|\bduplicate key value\b|\bforeign key constraint\b|\bdeadlock detected\b|\bmigration\b.{0,40}\b(?:failed|error)|\bMISCONF\b|\bRDB snapshots?\b/i,
  ),
  r("database", 1, /\bdatabase\b|\bSQL\b|\bquery\b|\btable\b|\bschema\b|\bmigrat(?:e|ion)\b|\bconnection string\b|\bcollection\b/i),
  // memory
  r(
    "memory",
    3,
    /\bOutOfMemoryError\b|\bout of memory\b|\bOOM(?:Killed)?\b|\bJavaScript heap out of memory\b|\bheap space\b|\bGC overhead limit\b|\bENOMEM\b|\bCannot allocate memory\b|\bstd::bad_alloc\b|\bMemoryError\b|\bmemory allocation (?:failed|of \d+ bytes failed)|\bstack overflow\b|\bStackOverflowError\b|\bmaximum call stack size exceeded\b|\bKilled\b.{0,20}\bsignal 9\b|\bshared memory\b|\/dev\/shm\b|\bbus error\b/i,
  ),
  r("memory", 1, /\bmemory\b|\bheap\b|\bRAM\b|\b-Xmx\d|\bmax-old-space-size\b|\bswap\b|\bleak\b|\bbatch size\b/i),
  // concurrency
  r(
    "concurrency",
    3,
    /\bdeadlock\b|\brace condition\b|\bdata race\b|\bgoroutines? (?:are )?asleep\b|\bcannot be (?:sent|shared) between threads\b|\bis not `?(?:Send|Sync)`?\b|\bConcurrentModificationException\b|\bmutex\b|\bRwLock\b|\bMutexGuard\b|\block poisoned\b|\bthread ?pool\b|\bEBUSY\b|\bresource (?:temporarily )?(?:busy|unavailable)\b|\bstate lock\b|\block(?:ed|ing)? (?:state|file|table)\b|\bconcurrent(?:ly)?\b/i,
  ),
  r("concurrency", 1, /\bthreads?\b|\basync\b|\bawait\b|\bchannel\b|\bgoroutine\b|\btokio::spawn\b|\block\b|\batomic\b|\bsynchroni[sz]/i),
  // type errors
  r(
    "type_error",
    3,
    /\bTypeError\b|\btype ?error\b|\bmismatched types\b|\bis not assignable to (?:type|parameter)\b|\bTS\d{4}\b|\bexpected .{1,40}, found .{1,40}|\bincompatible types?\b|\bClassCastException\b|\bcannot convert\b|\bno implicit conversion\b|\berror\[E0(?:308|277|599|382|502|499|505|506|507)\]|\bborrow of moved value\b|\buse of moved value\b|\bimplicitly has an? '?any'? type\b|\bcould not find a declaration file\b|\bhas no attribute\b|\bargument of type\b/i,
  ),
  r("type_error", 1, /\btypes?\b|\btyping\b|\b@types\/|\b\.d\.ts\b|\bgenerics?\b|\btrait bound\b|\bcast\b|\bborrow\b/i),
  // syntax
  r(
    "syntax",
    3,
    /\bSyntaxError\b|\bParseError\b|\bparse error\b|\bunexpected token\b|\binvalid syntax\b|\bIndentationError\b|\bTabError\b|\bunexpected (?:end of (?:file|input)|EOF|identifier|indent)\b|\bunterminated (?:string|comment)\b|\bexpected (?:['"`][;:,)}\]{(]['"`]|[;)}\]])|\bCannot use import statement outside a module\b|\bmissing semicolon\b|\bmalformed\b/i,
  ),
  r("syntax", 1, /\bsyntax\b|\bimport statement\b|\bESM\b|\bCommonJS\b|\bkeyword\b|\btypo\b|\bmisspell/i),
  // test
  r(
    "test",
    3,
    /\bAssertionError\b|\bassert(?:ion)? failed\b|\btests? failed\b|\bFAILED tests?\b|\bpytest\b|\bjest\b|\bmocha\b|\bvitest\b|\bjunit\b|\btestng\b|\bRSpec\b|\bexpect\(.{0,60}\)\.to|\bsnapshot (?:mismatch|failed)|\b\d+ failing\b|\bTest Suites?:.{0,30}failed/i,
  ),
  r("test", 1, /\btests?\b|\bspec\b|\bfixture\b|\bmock\b|\bcoverage\b|\bunittest\b/i),
  // deployment
  r(
    "deployment",
    3,
    /\bkubectl\b|\bkubernetes\b|\bk8s\b|\bpods?\b.{0,30}\b(?:CrashLoopBackOff|Pending|Evicted)|\bCrashLoopBackOff\b|\bImagePullBackOff\b|\bErrImagePull\b|\bFailedScheduling\b|\btaint\b|\bhelm\b|\bterraform\b|\bError response from daemon\b|\bdocker(?:-compose| compose)?\b|\bDockerfile\b|\bcontainer\b|\bheroku\b|\bvercel\b|\bnetlify\b|\bGitHub Actions\b|\bCI\b|\bpipeline\b|\bdeploy(?:ment|ed|ing)?\b|\bnginx\b|\bsystemd\b|\bansible\b|\bcloudformation\b|\bECS\b|\bEKS\b|\bGKE\b/i,
  ),
  r("deployment", 1, /\bserver\b|\bproduction\b|\bcluster\b|\bnode\(s\)\b|\bimage\b|\bregistry\b|\bservice\b|\bdaemon\b/i),
  // gpu
  r(
    "gpu",
    3,
    /\bCUDA\b|\bcuDNN\b|\bcuBLAS\b|\bNCCL\b|\bGPU\b|\bnvidia(?:-smi|-container| driver)?\b|\bROCm\b|\bdevice-side assert\b|\bno kernel image is available\b|\bsm_\d{2}\b|\bcompute capability\b|\bMPS backend\b|\bTensorRT\b|\bVRAM\b/i,
  ),
  r("gpu", 1, /\btorch\b|\btensorflow\b|\bjax\b|\b--gpus\b|\bcuda:\d\b|\bdevice\b/i),
];

const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);

const FIELD_WEIGHTS = { error: 3, error_type: 3, root_cause: 2, description: 1, summary: 1, steps: 1, commands: 1, tags: 2 } as const;

/** Rules are confident when the best score reaches this and beats the runner-up by the margin. */
export const RULE_CONFIDENT_SCORE = 6;
export const RULE_CONFIDENT_MARGIN = 1.5;

/** Scores per category (the sum over fields of field weight × rule weight, each rule once per field). */
export function categoryScores(trail: Trail): Map<Category, number> {
  const scores = new Map<Category, number>();
  const p = trail.problem ?? ({} as Trail["problem"]);
  const s = trail.solution ?? ({} as Trail["solution"]);
  const cap = (x: string) => (x.length > 8000 ? x.slice(0, 8000) : x);
  const fields: [string, number][] = [
    [String(p.error ?? ""), FIELD_WEIGHTS.error],
    [String(p.error_type ?? ""), FIELD_WEIGHTS.error_type],
    [String(p.root_cause ?? ""), FIELD_WEIGHTS.root_cause],
    [String(p.description ?? ""), FIELD_WEIGHTS.description],
    [String(s.summary ?? ""), FIELD_WEIGHTS.summary],
    [list(s.steps).join("\n"), FIELD_WEIGHTS.steps],
    [list(s.commands).join("\n"), FIELD_WEIGHTS.commands],
    [list(trail.tags).join(" "), FIELD_WEIGHTS.tags],
  ];
  const texts = fields.filter(([text]) => text.length > 0).map(([text, fw]) => [cap(text), fw] as const);
  const all = texts.map(([t]) => t).join("\n");
  for (const rule of CATEGORY_RULES) {
    // One test over everything first: most rules match nowhere, and then no field needs a look.
    if (!rule.pattern.test(all)) continue;
    for (const [t, fw] of texts) {
      if (rule.pattern.test(t)) scores.set(rule.category, (scores.get(rule.category) ?? 0) + fw * rule.weight);
    }
  }
  return scores;
}

export function categoryByRules(trail: Trail): { category: Category; confident: boolean } {
  const ranked = [...categoryScores(trail).entries()].sort((a, b) => b[1] - a[1] || CATEGORIES.indexOf(a[0]) - CATEGORIES.indexOf(b[0]));
  const [best, second] = ranked;
  if (!best || best[1] <= 0) return { category: "other", confident: false };
  const runnerUp = second?.[1] ?? 0;
  const confident = best[1] >= RULE_CONFIDENT_SCORE && best[1] >= runnerUp * RULE_CONFIDENT_MARGIN;
  return { category: best[0], confident };
}

/** Descriptive text per category; the service embeds each to form the category centroids. */
export const CATEGORY_SEEDS: Record<Category, string> = {
  dependency:
    "Dependency and package problems: a module or package cannot be found or imported, version conflicts, peer dependency resolution failures, incompatible library versions, missing packages in requirements or package.json, pip npm yarn conda cargo maven gradle install errors.",
  build:
    "Build and compilation failures: compiler errors, linker errors such as undefined reference, missing header files, make or CMake errors, native extension builds with gcc clang node-gyp, bundler and webpack build failures, Gradle or Maven build tasks failing.",
  configuration:
    "Configuration problems: a setting, option, environment variable or config file is missing, misspelled or invalid; wrong paths in settings; tool configuration such as git config, yaml, toml, .env or properties files needs to be changed.",
  runtime:
    "Runtime errors and crashes while the program runs: exceptions, panics, null or nil dereferences, attribute or key errors, missing files at run time, shared libraries that fail to load, segmentation faults, unhandled errors with a traceback.",
  network:
    "Network and connectivity problems: connection refused or reset, timeouts, DNS resolution failures, unreachable hosts or ports, proxies, TLS and SSL certificate verification failures, handshake errors, HTTP gateway errors.",
  permissions:
    "Permission and access problems: permission denied, EACCES or EPERM, operation not permitted, access denied, file ownership, user groups, sudo or administrator rights, privileged ports, read-only file systems.",
  database:
    "Database problems: PostgreSQL, MySQL, SQLite, MongoDB or Redis errors, authentication of database users and roles, failed connections to a database server, SQL errors, migrations, schema and constraint violations, persistence and snapshot failures.",
  memory:
    "Memory problems: out of memory errors, heap space exhausted, processes killed by the OOM killer, memory allocation failures, stack overflows, shared memory limits, memory leaks, raising heap or memory limits.",
  concurrency:
    "Concurrency problems: deadlocks, race conditions, threads and goroutines blocking, locks and mutexes, futures that are not Send between threads, async and await misuse, concurrent modification, stale locks held by another process.",
  type_error:
    "Type errors: TypeError, mismatched or incompatible types, values not assignable to a type, missing type declarations, TypeScript compiler type errors, Rust borrow checker and trait bound errors, invalid casts and conversions.",
  syntax:
    "Syntax and parse errors: SyntaxError, unexpected token, invalid syntax, indentation errors, unexpected end of input, malformed source code or data files, import statements used in the wrong module system.",
  test: "Test failures: failing unit or integration tests, assertion errors, pytest jest mocha junit failures, snapshot mismatches, flaky tests, test fixtures and mocks, test runner configuration.",
  deployment:
    "Deployment and infrastructure problems: Docker containers and images, docker compose, Kubernetes pods and nodes, scheduling and taints, Helm, Terraform state, CI pipelines, servers and services that fail to start or deploy, disk space on hosts.",
  gpu: "GPU problems: CUDA errors, CUDA out of memory, cuDNN and NCCL failures, NVIDIA drivers and the container toolkit, GPU compute capability not supported by the installed PyTorch or TensorFlow build, device selection.",
  other:
    "Other software problems that fit none of the specific categories: tooling quirks, editor or operating system issues, general usage questions and miscellaneous errors.",
};

/** Cosine similarity of vector to each centroid; the closest wins. Vectors of another length are skipped. */
export function nearestCategory(vector: Float32Array, centroids: Map<Category, Float32Array>): { category: Category; similarity: number } {
  let best: { category: Category; similarity: number } = { category: "other", similarity: -Infinity };
  let vNorm = 0;
  for (let i = 0; i < vector.length; i++) vNorm += vector[i]! * vector[i]!;
  vNorm = Math.sqrt(vNorm);
  for (const [category, c] of centroids) {
    if (c.length !== vector.length) continue;
    let dot = 0;
    let cNorm = 0;
    for (let i = 0; i < c.length; i++) {
      dot += vector[i]! * c[i]!;
      cNorm += c[i]! * c[i]!;
    }
    const denom = vNorm * Math.sqrt(cNorm);
    const similarity = denom > 0 ? dot / denom : 0;
    if (
      similarity > best.similarity ||
      (similarity === best.similarity && CATEGORIES.indexOf(category) < CATEGORIES.indexOf(best.category))
    ) {
      best = { category, similarity };
    }
  }
  return Number.isFinite(best.similarity) ? best : { category: "other", similarity: 0 };
}

/** Rules first; when they are unsure, the embedding fallback; else the rules' best guess. */
export function categorize(trail: Trail, embeddingFallback?: () => { category: Category; similarity: number } | undefined): Category {
  const rules = categoryByRules(trail);
  if (rules.confident) return rules.category;
  const nearest = embeddingFallback?.();
  if (nearest && (CATEGORIES as readonly string[]).includes(nearest.category) && Number.isFinite(nearest.similarity))
    return nearest.category;
  return rules.category;
}
