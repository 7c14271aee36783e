import type { OwnerKeyOptions } from '../../src/index.js';

/**
 * Owner keys made and opened at the test-only scrypt cost (microseconds instead of a tenth of a
 * second each). Such a key is refused by the CLI and the servers, which never ask for it; keys a
 * spawned `memledger` or a server's review page must open are made at production cost.
 */
export const TEST_KEYS: OwnerKeyOptions = { kdf: 'test' };
