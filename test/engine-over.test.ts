// engineOver: the engine over a store client that is open already (not exported by the package;
// the trust fixture reopens one embedded store this way, as a new process would find it).
import { describe, expect, it } from 'vitest';
import { engineOver } from '../src/engine.js';
import { openSqlClient } from '../src/store/open-store.js';
import { code } from './support/errors.js';

describe('engineOver [pglite]', () => {
  it('builds an engine on what the client holds, with nothing kept from an earlier one; closing it closes the client', async () => {
    const client = await openSqlClient({ db: 'memory://', create: true });
    const first = await engineOver(client);
    await first.subjects.create('kept');
    const storeId = first.storeId;
    // a second engine over the same client: the same store, a new engine
    const second = await engineOver(client);
    expect(await second.subjects.list()).toEqual(['kept']);
    expect(second.storeId).toBe(storeId);
    expect(second).not.toBe(first);
    await second.close();
    await expect(client.query('SELECT 1')).rejects.toThrow(/closed/);
  });

  it('refuses a bad config before it touches the client, which stays open', async () => {
    const client = await openSqlClient({ db: 'memory://', create: true });
    try {
      expect(await code(engineOver(client, { probes: { roots: 'not a list' as never } }))).toBe(
        'INVALID_ARGUMENT',
      );
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await client.close();
    }
  });
});
