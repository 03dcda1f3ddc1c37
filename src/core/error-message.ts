// The text of anything thrown: an Error's message (optionally with its class name), else its string form.
export function errorMessage(err: unknown, options: { withName?: boolean } = {}): string {
  if (!(err instanceof Error)) return String(err);
  return options.withName ? `${err.name}: ${err.message}` : err.message;
}
