// The start failures the operator must fix, common to the commands that open a colony's store
// (`colony serve`, `colony import`): each is one plain line and exit 2, never a stack trace.
import { ModelDirError } from "../compose";
import { ListenError } from "../serve";
import { SchemaTooNewError } from "../store/schema-version";
import { DataDirUnusableError } from "../store/sqlite/database";
import { DatabaseDamagedError } from "../store/sqlite/integrity";

/**
 * A damaged database file, a data directory that cannot hold the colony, a schema newer than this
 * binary, a COLONY_MODEL_DIR that does not load, a port that cannot be listened on.
 */
export function isStartRefusal(err: unknown): err is Error {
  return (
    err instanceof DatabaseDamagedError ||
    err instanceof DataDirUnusableError ||
    err instanceof SchemaTooNewError ||
    err instanceof ModelDirError ||
    err instanceof ListenError
  );
}
