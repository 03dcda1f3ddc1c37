// The one refusal both storage adapters share when they open a database: a schema newer than the
// migrations this binary knows. An older colony must not run on it (it would write rows in a shape
// the newer schema does not expect), so opening stops and the operator is told to use a newer one.

export class SchemaTooNewError extends Error {
  constructor(
    readonly found: number,
    readonly newest: number,
    /** Which database, in words (its file, or "the PostgreSQL database"). */
    where = "the database",
  ) {
    super(`${where} has schema version ${found}, which is newer than this colony understands (${newest}); use a newer colony`);
  }
}
