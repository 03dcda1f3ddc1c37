// The operator token check, shared by every operator endpoint (removal, metrics, the console's
// admin API): 501 not_enabled without COLONY_ADMIN_TOKEN, 401 unauthorized for a missing or wrong
// Bearer token. The scheme is matched case-insensitively, with one or more spaces after it (RFC
// 9110 §11.1: auth-scheme is a case-insensitive token; credentials follow 1*SP).
import { createHash, timingSafeEqual } from "node:crypto";
import { ServiceError } from "./errors";

export function authorizeOperator(token: string | null, authorization: string | null): void {
  if (token === null) throw new ServiceError("not_enabled", "operator endpoints are off: COLONY_ADMIN_TOKEN is not set");
  const presented = /^bearer +(.+)$/i.exec(authorization ?? "")?.[1] ?? "";
  // Compare digests: constant time whatever the lengths.
  const a = createHash("sha256").update(presented).digest();
  const b = createHash("sha256").update(token).digest();
  if (!timingSafeEqual(a, b) || presented.length === 0) {
    throw new ServiceError("unauthorized", "missing or wrong operator token");
  }
}
