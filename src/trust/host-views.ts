import { isOwnerAnchor, type OwnerAnchor } from '../domain/anchor.js';
import type { ChainCrypto } from '../domain/decision-chain.js';
import { EngineError } from '../domain/errors.js';
import type { TrustView } from '../domain/trust.js';
import type { HostViewRequest, SqlClient } from '../store/sql-client.js';
import { createTrust, type Trust } from './trust.js';

/**
 * Owner keys a host keeps views for at once: clients of one store read it with one owner's
 * anchor (or none); a key past these drops the one asked for longest ago.
 */
const KEYS_KEPT = 4;

/** One verifier, for the clients that read the store with one owner key (or none). */
interface Keeper {
  trust: Trust;
  /** The anchor and clock of the request being answered (requests run one at a time). */
  anchor: OwnerAnchor | null;
  now: number;
  /** The request running now: the next waits for it. */
  queue: Promise<unknown>;
}

/** The request as it came off the socket, checked (INVALID_ARGUMENT when it is not one). */
function checked(request: unknown): HostViewRequest {
  const r = request as Partial<HostViewRequest> | null;
  if (
    typeof r !== 'object' ||
    r === null ||
    typeof r.subjectId !== 'string' ||
    typeof r.storeId !== 'string' ||
    typeof r.now !== 'number' ||
    !Number.isFinite(r.now) ||
    (r.anchor !== null && !isOwnerAnchor(r.anchor))
  ) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      'a trust view request names a subject, the store id, an owner anchor (or null) and a time',
    );
  }
  return r as HostViewRequest;
}

/**
 * The trust views a store host keeps for its clients (docs/ARCHITECTURE.md, "The store host").
 * Each client process used to verify the subject's whole chain on its first read (1.5 s on a
 * 10,000-link chain); the host's verifier keeps the verified chain and the view between clients,
 * so a later command's read costs the verifier's check that nothing changed (TrustSql.probe).
 *
 * The verifier is the one every engine runs (trust-verifier.ts), on the host's own client, so it
 * sees every write any client made, and checks what it keeps exactly as it would in one process.
 * Each request brings the asking process's anchor and clock: a view is judged against the
 * owner's key and heads that process holds, never against another client's. Clients with
 * different owner keys get different verifiers; requests to one run one at a time, each with its
 * own anchor and time.
 */
export function createHostViews(deps: { client: SqlClient; crypto: ChainCrypto }): {
  view(request: unknown): Promise<TrustView>;
} {
  const keepers = new Map<string, Keeper>();

  const keeperFor = (storeId: string, anchor: OwnerAnchor | null): Keeper => {
    const key = JSON.stringify([storeId, anchor?.keyId ?? null, anchor?.publicKeyPem ?? null]);
    let k = keepers.get(key);
    if (k !== undefined) {
      keepers.delete(key); // kept last: asked for most lately
    } else {
      const keeper: Keeper = {
        trust: undefined as unknown as Trust,
        anchor,
        now: 0,
        queue: Promise.resolve(),
      };
      keeper.trust = createTrust({
        client: deps.client,
        crypto: deps.crypto,
        storeId,
        clock: () => new Date(keeper.now),
        anchor: () => keeper.anchor,
      });
      k = keeper;
      while (keepers.size >= KEYS_KEPT) keepers.delete(keepers.keys().next().value as string);
    }
    keepers.set(key, k);
    return k;
  };

  return {
    view(request) {
      let r: HostViewRequest;
      try {
        r = checked(request);
      } catch (err) {
        return Promise.reject(err);
      }
      const keeper = keeperFor(r.storeId, r.anchor);
      const run = keeper.queue.then(() => {
        keeper.anchor = r.anchor;
        keeper.now = r.now;
        return keeper.trust.view(r.subjectId);
      });
      keeper.queue = run.catch(() => undefined);
      return run;
    },
  };
}
