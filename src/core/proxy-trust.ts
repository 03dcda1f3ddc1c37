// Which proxies may tell the colony who the client is (COLONY_TRUST_PROXY), and how the client
// address is read from X-Forwarded-For behind them. Each proxy appends the address it received the
// request from, so only the right-hand entries were written by proxies we run: everything to the
// left of them is whatever the client chose to send. Pure: no I/O.
import { BlockList, isIP } from "node:net";

export type TrustProxy =
  | { kind: "off" }
  /** This many proxies stand in front of the colony, the socket peer being the nearest. */
  | { kind: "hops"; hops: number }
  /** The proxies by address or CIDR block: the peer must be one of them for the header to count. */
  | { kind: "list"; proxies: BlockList; entries: string[] };

export const TRUST_PROXY_ACCEPTS =
  "off (0, false, no, off), a hop count (1 to 32; 1, true, yes, on = one proxy), " +
  "or a comma-separated list of proxy addresses or CIDR blocks (IPv4 or IPv6)";

const MAX_HOPS = 32;
/** Longer entries are not addresses: the peer is used instead. */
const MAX_ENTRY_LENGTH = 100;

/** The setting, or null when the text is none of the accepted forms. */
export function parseTrustProxy(raw: string | undefined): TrustProxy | null {
  const text = raw?.trim() ?? "";
  if (text === "" || /^(0|false|no|off)$/i.test(text)) return { kind: "off" };
  if (/^(true|yes|on)$/i.test(text)) return { kind: "hops", hops: 1 };
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    return hops >= 1 && hops <= MAX_HOPS ? { kind: "hops", hops } : null;
  }
  const proxies = new BlockList();
  const entries = text.split(",").map((e) => e.trim());
  for (const entry of entries) {
    const [address = "", prefix, extra] = entry.split("/");
    const family = isIP(address);
    if (family === 0 || extra !== undefined) return null;
    const type = family === 4 ? "ipv4" : "ipv6";
    if (prefix === undefined) {
      proxies.addAddress(address, type);
      continue;
    }
    const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : -1;
    if (bits < 0 || bits > (family === 4 ? 32 : 128)) return null;
    proxies.addSubnet(address, bits, type);
  }
  return { kind: "list", proxies, entries };
}

/** An X-Forwarded-For entry or a peer as a bare address: `[v6]:port` and `v4:port` lose the port. */
export function bareAddress(entry: string): string {
  const e = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(e);
  if (bracketed) return bracketed[1]!;
  const v4port = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(e);
  return v4port ? v4port[1]! : e;
}

function isTrusted(proxies: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && proxies.check(address, family === 4 ? "ipv4" : "ipv6");
}

/**
 * The client address: the right-most X-Forwarded-For entry that is not a trusted proxy. With a hop
 * count, the entry that many hops from the colony; with a list, the peer must itself be a listed
 * proxy, and entries are skipped from the right while they are listed proxies too. When every
 * entry is a proxy, the left-most is the best knowledge there is.
 */
export function forwardedClient(forwardedFor: string | null, peer: string | null, trust: TrustProxy): string {
  const fallback = peer ?? "unknown";
  if (trust.kind === "off" || !forwardedFor) return fallback;
  // Several X-Forwarded-For headers arrive joined by ", ": the same list in order.
  const chain = forwardedFor
    .split(",")
    .map(bareAddress)
    .filter((e) => e !== "");
  if (chain.length === 0) return fallback;
  let chosen: string;
  if (trust.kind === "hops") {
    chosen = chain[Math.max(0, chain.length - trust.hops)]!;
  } else {
    if (peer === null || !isTrusted(trust.proxies, bareAddress(peer))) return fallback;
    let i = chain.length - 1;
    while (i > 0 && isTrusted(trust.proxies, chain[i]!)) i--;
    chosen = chain[i]!;
  }
  return chosen.length <= MAX_ENTRY_LENGTH ? chosen : fallback;
}

/** The eight 16-bit groups of an IPv6 address (an IPv4 tail and a zone allowed), or null. */
function ipv6Groups(address: string): number[] | null {
  const zone = address.indexOf("%");
  const text = zone < 0 ? address : address.slice(0, zone);
  if (isIP(text) !== 6) return null;
  const [left = "", right] = text.split("::");
  const groups = (s: string): number[] => {
    if (s === "") return [];
    const out: number[] = [];
    for (const part of s.split(":")) {
      if (part.includes(".")) {
        // An IPv4 tail is the last two groups.
        const [a = 0, b = 0, c = 0, d = 0] = part.split(".").map(Number);
        out.push((a << 8) | b, (c << 8) | d);
      } else out.push(Number.parseInt(part, 16));
    }
    return out;
  };
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const zeros = 8 - l.length - r.length;
  for (let k = 0; k < zeros; k++) l.push(0);
  return l.concat(r);
}

/**
 * The client a request is counted and named under (quotas, counted reports, merge credits, the
 * address pseudonym): an IPv4 address as it is; an IPv6 address as its /64 network, since one home
 * or one server holds a whole /64 (2^64 addresses: a quota per address would be none); an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as its IPv4 address. Anything else as it is.
 */
export function clientNetwork(address: string): string {
  if (!address.includes(":")) return address; // IPv4 (the common case, kept cheap) or not an address
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 255}.${groups[7]! >> 8}.${groups[7]! & 255}`;
  }
  // The network's four groups in hex, trailing zero groups left to the "::".
  let last = 3;
  while (last >= 0 && groups[last] === 0) last--;
  let network = "";
  for (let k = 0; k <= last; k++) network += (k > 0 ? ":" : "") + groups[k]!.toString(16);
  return `${network}::/64`;
}
