/** Work registered with Transaction.afterCommit. */
export type AfterCommitHook = () => void | Promise<void>;

/** Every hook runs, in order, even when one fails; the failures are passed on together. */
export async function runAfterCommitHooks(hooks: AfterCommitHook[]): Promise<void> {
  const errors: unknown[] = [];
  for (const hook of hooks) {
    try {
      await hook();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, "after-commit work failed");
}
