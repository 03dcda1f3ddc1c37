// COLONY_DATABASE_URL, read the way libpq reads a connection URI, including its multi-host form
// (postgres://user@db1:5432,db2:5433/colony?target_session_attrs=read-write), which Bun's SQL
// client does not accept: Colony splits the host list itself and gives the client one host at a
// time (src/store/postgres/hosts.ts). Pure: no I/O.

/** libpq's target_session_attrs values Colony honours; a colony writes, so the standby modes are refused. */
export type TargetSessionAttrs = "any" | "read-write" | "primary";
const TARGET_SESSION_ATTRS: readonly TargetSessionAttrs[] = ["any", "read-write", "primary"];
/** libpq's other values: valid for libpq, useless for a client that writes. */
const READ_ONLY_ATTRS = ["read-only", "standby", "prefer-standby"];

/** The sslmode values of libpq that Bun's client takes. */
const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"];

/** libpq's default port, for a host named without one. */
const DEFAULT_PORT = 5432;

export interface DatabaseHost {
  host: string;
  port: number;
  /** The URL with this host alone (every other part as written; target_session_attrs removed). */
  url: string;
}

export interface DatabaseTarget {
  /** In the order written: the order they are tried in. */
  hosts: DatabaseHost[];
  targetSessionAttrs: TargetSessionAttrs;
  /** The user, host list and database, without the password: for messages. */
  description: string;
}

/** Why a URL is refused; the message never contains the password. */
export class DatabaseUrlError extends Error {}

const URI = /^(postgres(?:ql)?):\/\/(?:([^@/?#]*)@)?([^/?#]*)([^?#]*)(\?[^#]*)?$/i;

/**
 * Reads a postgres:// or postgresql:// URL. One host keeps the URL as written (the client gets
 * it unchanged); several hosts give one URL per host.
 */
export function parseDatabaseUrl(raw: string): DatabaseTarget {
  const m = URI.exec(raw.trim());
  if (!m) throw new DatabaseUrlError("not a postgres:// or postgresql:// URL");
  const [, scheme, userinfo, hostList, path, query] = m as unknown as [
    string,
    string,
    string | undefined,
    string,
    string,
    string | undefined,
  ];
  const params = new URLSearchParams(query ?? "");
  const user = userinfo === undefined ? "" : `${userinfo}@`;
  const userName = userinfo === undefined ? "" : `${safeDecode(userinfo.split(":")[0]!)}@`;

  const attrsRaw = params.getAll("target_session_attrs");
  if (attrsRaw.length > 1) throw new DatabaseUrlError("target_session_attrs is given more than once");
  const attrs = (attrsRaw[0] ?? "any").toLowerCase();
  if (!TARGET_SESSION_ATTRS.includes(attrs as TargetSessionAttrs)) {
    const why = READ_ONLY_ATTRS.includes(attrs) ? " (a colony writes: it needs a server that accepts writes)" : "";
    throw new DatabaseUrlError(`target_session_attrs=${attrs} is not supported${why}; use ${TARGET_SESSION_ATTRS.join(", ")}`);
  }
  // Bun's client checks these only when it connects: a colony would start and retry a URL that can never work.
  const sslmode = params.getAll("sslmode");
  if (sslmode.length > 1) throw new DatabaseUrlError("sslmode is given more than once");
  if (sslmode.length === 1 && !SSL_MODES.includes(sslmode[0]!)) {
    throw new DatabaseUrlError(`sslmode=${sslmode[0]} is not one of ${SSL_MODES.join(", ")}`);
  }
  for (const [part, text] of [
    ["the user name or password", userinfo ?? ""],
    ["the database name", path],
  ] as const) {
    if (!wellEncoded(text)) throw new DatabaseUrlError(`${part} has a % that does not start a %XX escape of UTF-8`);
  }
  const balance = params.get("load_balance_hosts");
  if (balance !== null && balance !== "disable") {
    throw new DatabaseUrlError(`load_balance_hosts=${balance} is not supported: hosts are tried in the order written`);
  }
  for (const name of ["host", "hostaddr", "port"]) {
    if (params.has(name) && hostList.includes(",")) {
      throw new DatabaseUrlError(`${name}= in the query cannot be combined with a list of hosts: write each as host:port before the path`);
    }
    if (params.get(name)?.includes(",")) {
      throw new DatabaseUrlError(`a list in ${name}= is not supported: write the hosts as host1:port1,host2:port2 before the path`);
    }
  }

  const specs = hostList.split(",");
  if (specs.length === 1) {
    checkParses(raw.trim());
    const one = specs[0]!;
    const parsed = new URL(raw.trim());
    const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = parsed.port === "" ? DEFAULT_PORT : Number(parsed.port);
    return {
      hosts: [{ host, port, url: raw.trim() }],
      targetSessionAttrs: attrs as TargetSessionAttrs,
      description: `${userName}${one}${path}`,
    };
  }

  params.delete("target_session_attrs");
  params.delete("load_balance_hosts");
  const rest = params.size > 0 ? `?${params.toString()}` : "";
  const hosts = specs.map((spec, i) => {
    if (spec === "") throw new DatabaseUrlError(`host ${i + 1} of the list is empty: write host1:port1,host2:port2`);
    const { host, port } = splitHostPort(spec);
    const url = `${scheme}://${user}${host.includes(":") ? `[${host}]` : host}:${port}${path}${rest}`;
    checkParses(url);
    return { host, port, url };
  });
  const seen = new Set<string>();
  for (const h of hosts) {
    const key = `${h.host.toLowerCase()}:${h.port}`;
    if (seen.has(key)) throw new DatabaseUrlError(`${key} is listed twice`);
    seen.add(key);
  }
  return { hosts, targetSessionAttrs: attrs as TargetSessionAttrs, description: `${userName}${hostList}${path}` };
}

function splitHostPort(spec: string): { host: string; port: number } {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d*))?$/.exec(spec);
  if (!m) throw new DatabaseUrlError(`"${spec}" is not host, host:port or [IPv6]:port`);
  const host = m[1] ?? m[2]!;
  const port = m[3] === undefined || m[3] === "" ? DEFAULT_PORT : Number(m[3]);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new DatabaseUrlError(`port of "${spec}" is not from 1 to 65535`);
  return { host, port };
}

/** What Bun's client will be given must parse as a URL. */
function checkParses(url: string): void {
  try {
    new URL(url);
  } catch {
    throw new DatabaseUrlError("not a valid URL");
  }
}

function wellEncoded(s: string): boolean {
  try {
    decodeURIComponent(s);
    return true;
  } catch {
    return false;
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
