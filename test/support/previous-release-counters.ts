// How a replica of the release before PostgreSQL migration 13 (a3e4ab7,
// src/store/postgres/repositories.ts) counts a search's label and its hour: one row per key and
// hour, the keys the counter tables still have. The tests of a rolling upgrade across migration 13
// and the counters bench's "before" run these as that release sends them.
import type { SQL } from "bun";

/** The hour's search count and the label's searches and clients, in the caller's transaction. */
export async function countSearchAsPreviousRelease(tx: SQL, label: string, client: string, hour: number): Promise<void> {
  await tx`INSERT INTO series_hourly (hour, name, value) VALUES (${hour}, 'searches', 1)
    ON CONFLICT (hour, name) DO UPDATE SET value = series_hourly.value + excluded.value`;
  await tx`WITH moved AS (
      INSERT INTO search_clients (label, client, hour) VALUES (${label}, ${client}, ${hour})
      ON CONFLICT (label, client) DO UPDATE SET prev_hour = search_clients.hour, hour = excluded.hour
        WHERE search_clients.hour < excluded.hour
      RETURNING prev_hour
    ), earlier AS (
      UPDATE search_hourly s SET clients = s.clients - 1 FROM moved
      WHERE s.hour = moved.prev_hour AND s.label = ${label} AND s.clients > 0
    )
    INSERT INTO search_hourly (hour, label, n, clients) VALUES (${hour}, ${label}, 1, (SELECT count(*)::int FROM moved))
    ON CONFLICT (hour, label) DO UPDATE SET n = search_hourly.n + 1, clients = search_hourly.clients + excluded.clients`;
}
