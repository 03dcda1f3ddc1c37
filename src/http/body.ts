// Reads a request body up to a limit, before anything parses it, whether or not the client sent
// Content-Length (a chunked body is counted as it streams in).
import { ServiceError } from "../service/errors";

export const MAX_BODY_BYTES = 64 * 1024;

const tooLarge = () => new ServiceError(413, "too_large", `request body is over ${MAX_BODY_BYTES / 1024} KB`);

export async function readBodyLimited(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array<ArrayBuffer> | null> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (!/^\d+$/.test(declared.trim())) throw new ServiceError(400, "invalid_request", "Content-Length is not a number");
    if (Number(declared) > limit) throw tooLarge();
  }
  if (!request.body) return null;
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch {
      // The client went away mid-body (or sent less than its Content-Length): its fault, not ours,
      // so a 400 and an ordinary request log line rather than a 500 and an error line.
      throw new ServiceError(400, "invalid_request", "the request body ended before it was complete");
    }
    const { done, value } = chunk;
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}
