import { EngineError } from '../domain/errors.js';
import type { SqlClient } from '../store/sql-client.js';
import type { Engine } from './handle-types.js';

export { setEmbeddedTemplate } from '../store/embedded-template.js';
export { makeEmbeddedTemplate } from '../store/open-store.js';

// Not exported from the package: the public API has no handle that can write the store's
// tables. Tests and benchmarks reach the store's client here to tamper with it or bulk-load it.
const clients = new WeakMap<Engine, SqlClient>();

export function registerStoreClient(engine: Engine, client: SqlClient): void {
  clients.set(engine, client);
}

/** The store client behind an engine, for tests and benchmarks only. */
export function storeClient(engine: Engine): SqlClient {
  const client = clients.get(engine);
  if (client === undefined)
    throw new EngineError('INVALID_ARGUMENT', 'not an engine made by createEngine');
  return client;
}
