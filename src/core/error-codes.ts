// The error codes of the contract (interface.md §7), one row each, in the manner of Meilisearch's
// error table: the code decides the HTTP status, whether the same request may succeed if retried
// later, and the message used when a site gives none. ServiceError takes its status from here, the
// HTTP layer renders it as { error: { code, message, details? } }, the MCP tools and the CLI read
// `retryable` from here. docs/errors.md shows this table; a test keeps the two and the spec in step.

export interface ErrorCodeRow {
  status: number;
  /** The same request may succeed later (after Retry-After, or with backoff). */
  retryable: boolean;
  /** The message when the site has nothing more specific to say. */
  message: string;
}

export const ERROR_CODES = {
  invalid_trail: { status: 400, retryable: false, message: "the trail does not validate" },
  invalid_request: { status: 400, retryable: false, message: "the request is not valid" },
  unauthorized: { status: 401, retryable: false, message: "missing or wrong operator token" },
  not_found: { status: 404, retryable: false, message: "not found" },
  discarded: { status: 409, retryable: false, message: "the draft is already discarded" },
  published: { status: 409, retryable: false, message: "the draft is already published" },
  in_progress: { status: 409, retryable: false, message: "the draft is being published" },
  draft_changed: {
    status: 412,
    retryable: false,
    message: "the draft reads differently now than when it was shown; read it again before approving",
  },
  too_large: { status: 413, retryable: false, message: "the request body is too large" },
  rate_limited: { status: 429, retryable: true, message: "quota exhausted; wait Retry-After seconds" },
  draft_limited: { status: 429, retryable: true, message: "too many drafts from this address" },
  publish_limited: { status: 429, retryable: true, message: "hourly publish quota exceeded" },
  internal: { status: 500, retryable: false, message: "internal error" },
  not_enabled: { status: 501, retryable: false, message: "operator endpoints are off" },
  unavailable: { status: 503, retryable: true, message: "a dependency is down; retry with backoff" },
  busy: { status: 503, retryable: true, message: "too many trails are waiting for enrichment" },
} as const satisfies Record<string, ErrorCodeRow>;

export type ErrorCode = keyof typeof ERROR_CODES;

export const isErrorCode = (code: string): code is ErrorCode => Object.hasOwn(ERROR_CODES, code);

/** Whether a code (from this colony or a remote one) names a condition worth retrying; unknown codes are not. */
export const isRetryable = (code: string): boolean => isErrorCode(code) && ERROR_CODES[code].retryable;
