// The error shape of interface.md §7: { error: { code, message, details? } }.
import type { ValidationDetail } from "../core/trail";
import type { ServiceError } from "../service/errors";

export function errorBody(code: string, message: string, details?: ValidationDetail[]) {
  return { error: details ? { code, message, details } : { code, message } };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(err: ServiceError): Response {
  return jsonResponse(err.status, errorBody(err.code, err.message, err.details), err.headers);
}
