// [pglite] A warm store host keeps each subject's trust view between its clients
// (src/trust/host-views.ts): a later process's read checks that nothing changed and verifies no
// signature again; each read is judged against the asking process's own anchor; a request that
// is not one is refused. What a kept view does after each tamper: tamper-matrix.test.ts (host).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { nodeChainCrypto } from '../src/crypto/chain-crypto.js';
import type { ChainCrypto } from '../src/domain/decision-chain.js';
import { DEFAULT_SUBJECT } from '../src/domain/defaults.js';
import { storeClient } from '../src/engine/test-access.js';
import {
  createEngine,
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerAnchor,
  type OwnerSigner,
} from '../src/index.js';
import { connectHost } from '../src/pglite/host-client.js';
import { setHostLauncher } from '../src/pglite/host-launch.js';
import { socketPathFor } from '../src/pglite/host-protocol.js';
import type { StoreHost } from '../src/pglite/store-host.js';
import { code } from './support/errors.js';
import { inProcessHosts } from './support/in-process-host.js';
import { TEST_KEYS } from './support/test-keys.js';

const root = mkdtempSync(join(tmpdir(), 'mlhv-'));
const hosts: StoreHost[] = [];
const engines: Engine[] = [];
/** Signatures the host's verifier checked (it remembers none, so a second check counts). */
let checked = 0;
const counting: ChainCrypto = {
  ...nodeChainCrypto,
  verify(pem, data, sig) {
    checked++;
    return nodeChainCrypto.verify(pem, data, sig);
  },
};

function owner(name: string): OwnerSigner {
  const file = join(root, `${name}.key`);
  writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
  return loadOwnerKey(file, 'pw', TEST_KEYS);
}

const anchorOf = (s: OwnerSigner): OwnerAnchor => ({
  keyId: s.keyId,
  publicKeyPem: s.publicKeyPem,
  source: `the key of ${s.keyId}`,
});

/**
 * An engine as a command sharing the store opens it (a new client of its host, reading trust
 * views from it); `hostViews: false` as a long-running program does (its own verifier).
 */
async function client(db: string, anchor: OwnerAnchor | null, hostViews = true): Promise<Engine> {
  const e = await createEngine({
    db,
    create: false,
    shared: { hostViews },
    ...(anchor === null ? {} : { anchor: () => anchor }),
  });
  engines.push(e);
  return e;
}

/** A store whose subject has one approved fact, signed by `signer`; its host is running. */
async function storeWithFact(signer: OwnerSigner): Promise<{ db: string; factId: string }> {
  const db = join(mkdtempSync(join(root, 's-')), 'store');
  const e = await createEngine({ db, shared: true, anchor: () => anchorOf(signer) });
  try {
    await e.subjects.create();
    const me = e.subject();
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    const s = await me.sessions.create();
    await me.turns.add({ sessionId: s.id, role: 'user', content: 'We moved to Lund last spring.' });
    const { proposed } = await me.gate.propose({
      sessionId: s.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user lives in Lund.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'We moved to Lund' },
        },
      ],
    });
    const p = proposed[0];
    if (p === undefined) throw new Error('the fixture proposal was dropped');
    const factId = p.id;
    await me.owner.decide({ proposalId: factId, decision: 'approve', signer });
    return { db, factId };
  } finally {
    await e.close();
  }
}

afterEach(async () => {
  for (const e of engines.splice(0)) await e.close();
  for (const h of hosts.splice(0)) await h.stop();
  setHostLauncher(undefined);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('[pglite] trust views kept by the store host', () => {
  it('a later process reads the view the host kept: no signature is checked again, until something changes', async () => {
    setHostLauncher(inProcessHosts(hosts, counting));
    const signer = owner('keeps');
    const { db, factId } = await storeWithFact(signer);
    const first = await client(db, anchorOf(signer));
    checked = 0;
    expect((await first.subject().facts.live()).map((f) => f.id)).toEqual([factId]);
    const built = checked;
    expect(built).toBeGreaterThan(0); // the host verified the chain once
    await first.close();

    const second = await client(db, anchorOf(signer));
    const me = second.subject();
    expect((await me.facts.live()).map((f) => f.id)).toEqual([factId]);
    const arrival = await me.arrival.assemble({ surface: 'chat' });
    expect(arrival.text).toContain('The user lives in Lund.');
    expect((await me.facts.integrity()).ok).toBe(true);
    // a turn written since (a write no view reads) is checked for, not verified again
    const s = await me.sessions.create();
    await me.turns.add({ sessionId: s.id, role: 'user', content: 'Still in Lund.' });
    expect((await me.facts.live()).map((f) => f.id)).toEqual([factId]);
    expect(checked).toBe(built);
    // a long-running program keeps its own verifier: the host checks nothing for it
    const own = await client(db, anchorOf(signer), false);
    expect((await own.subject().facts.live()).map((f) => f.id)).toEqual([factId]);
    expect(checked).toBe(built);

    // negative control: the fact's text edited under the kept view is seen by the next read
    await storeClient(second).transaction(async (tx) => {
      await tx.exec('SET LOCAL session_replication_role = replica'); // past the store's triggers
      await tx.query(`UPDATE facts SET text = $2 WHERE id = $1`, [
        factId,
        'The user lives in Malmö.',
      ]);
    });
    expect(await me.facts.live()).toEqual([]);
    const integrity = await me.facts.integrity();
    expect(integrity.ok).toBe(false);
    expect(integrity.withheld.map((w) => w.factId)).toEqual([factId]);
    expect(hosts).toHaveLength(1); // every engine was a client of the one host
  });

  it("judges each read against the asking process's anchor, never another client's", async () => {
    setHostLauncher(inProcessHosts(hosts));
    const signer = owner('mine');
    const { db, factId } = await storeWithFact(signer);
    const mine = await client(db, anchorOf(signer));
    const theirs = await client(db, anchorOf(owner('theirs')));
    const none = await client(db, null);
    expect((await mine.subject().facts.live()).map((f) => f.id)).toEqual([factId]);
    // another owner's key: the store's key is not it, and nothing it signed is shown
    expect(await theirs.subject().facts.live()).toEqual([]);
    expect((await theirs.subject().facts.integrity()).chain.broken?.code).toBe('KEY_MISMATCH');
    // no anchor: the store's own key, and the read says so
    expect((await none.subject().facts.live()).map((f) => f.id)).toEqual([factId]);
    expect((await none.subject().facts.integrity()).chain.unanchored).toBe(true);
    // and the owner's read after theirs is still judged against the owner's key
    const after = await mine.subject().facts.integrity();
    expect(after.ok).toBe(true);
    expect(after.chain).toMatchObject({ broken: null, unanchored: false, verified: 1 });
  });

  it('refuses a view request that is not one, and answers the same request well formed', async () => {
    setHostLauncher(inProcessHosts(hosts));
    const signer = owner('bad');
    const { db } = await storeWithFact(signer);
    const e = await client(db, anchorOf(signer));
    const storeId = e.storeId;
    const raw = await connectHost(socketPathFor(db), db);
    try {
      const good = { subjectId: DEFAULT_SUBJECT, storeId, anchor: null, now: Date.now() };
      const bad: unknown[] = [
        null,
        'default',
        { ...good, subjectId: 7 },
        { ...good, now: Number.NaN },
        { ...good, anchor: { keyId: 5 } },
        { ...good, anchor: { ...anchorOf(signer), heads: [{ seq: 'one', hash: 'h' }] } },
      ];
      for (const request of bad) {
        expect(await code(raw!.send({ op: 'view', request }))).toBe('INVALID_ARGUMENT');
      }
      // negative control: the same request, well formed, is answered
      const answer = await raw!.send({ op: 'view', request: good });
      expect((answer.view as { live: Array<{ id: string }> }).live).toHaveLength(1);
    } finally {
      raw?.close();
    }
  });
});
