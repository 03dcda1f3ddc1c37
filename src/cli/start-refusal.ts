// The start failures the operator must fix, whichever command meets them (`colony serve`, `import`,
// `backup`, `restore`, `migrate`): src/main.ts prints each as one plain line and exits 2, never a
// stack trace. Imported only when a command failed.
import { DatabaseRefusedError, ModelDirError } from "../compose";
import { CacheDirError } from "../platform/native";
import { ListenError } from "../http/listen-error";
import { SchemaTooNewError } from "../store/schema-version";
import { DataDirUnusableError } from "../store/sqlite/database";
import { DatabaseDamagedError } from "../store/sqlite/integrity";

/**
 * A damaged database file, a data directory that cannot hold the colony, a schema newer than this
 * binary, a COLONY_MODEL_DIR that does not load, a cache directory the binary cannot unpack into,
 * a port that cannot be listened on, a PostgreSQL login or database the server refuses.
 */
export function isStartRefusal(err: unknown): err is Error {
  return (
    err instanceof DatabaseDamagedError ||
    err instanceof DataDirUnusableError ||
    err instanceof SchemaTooNewError ||
    err instanceof ModelDirError ||
    err instanceof CacheDirError ||
    err instanceof ListenError ||
    err instanceof DatabaseRefusedError
  );
}
