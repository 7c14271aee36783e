// A read checks only the last link's signature when it is format 2 (it covers the links under it),
// so the owner's process must never sign on a chain it checked under a key other than its own.
// The attack a review found: the store shows the chain check the forger's key and the owner-key
// lookup the owner's (a view keyed on the statement), the forger appends a link signed with its
// own key, and an owner process with no anchor decides something else on top of it. Its genuine
// signature would then cover the forged approval for every reader, anchored or not.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeChainCrypto } from '../../src/crypto/chain-crypto.js';
import { nextLinkFields, sealLink, type DecisionLink } from '../../src/domain/decision-chain.js';
import { factContentHash } from '../../src/domain/chain-state.js';
import { storeClient } from '../../src/engine/test-access.js';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type FactId,
  type OwnerAnchor,
  type OwnerSigner,
} from '../../src/index.js';
import { DecisionSql } from '../../src/store/decision-sql.js';
import { TrustSql } from '../../src/trust/trust-sql.js';
import { ENGINES, openTestEngine } from '../support/engines.js';
import { code } from '../support/errors.js';
import { TEST_KEYS } from '../support/test-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'memledger-forged-under-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function signer(name: string): OwnerSigner {
  const file = join(dir, `${name}.key`);
  writeOwnerKeyFile(file, generateOwnerKey('pw', TEST_KEYS).keyFile);
  return loadOwnerKey(file, 'pw', TEST_KEYS);
}

describe.each(ENGINES)(
  'the owner never signs over a link checked under another key [%s]',
  (kind) => {
    for (const forge of [true, false]) {
      it(
        forge
          ? 'refuses to decide when the chain check saw another key, and the forged link stays withheld'
          : 'negative control: with the store honest, the same decision is signed',
        async () => {
          const owner = signer(`owner-${kind}-${forge}`);
          const forger = signer(`forger-${kind}-${forge}`);
          let anchored = false; // the owner's library process runs without an anchor
          const anchor: OwnerAnchor = {
            keyId: owner.keyId,
            publicKeyPem: owner.publicKeyPem,
            source: 'the test',
          };
          const t = await openTestEngine(kind, { anchor: () => (anchored ? anchor : null) });
          const db = storeClient(t.engine);
          try {
            await t.engine.subjects.create('victim');
            const me = t.engine.subject('victim');
            await me.owner.setKey({ publicKeyPem: owner.publicKeyPem, keyId: owner.keyId });
            const s = await me.sessions.create();
            await me.turns.add({
              sessionId: s.id,
              role: 'user',
              content: 'Keep your answers short, I read these on my phone.',
            });
            const quotes = ['Keep your answers short', 'I read these on my phone', 'answers short'];
            const r = await me.gate.propose({
              sessionId: s.id,
              proposals: quotes.map((quote, i) => ({
                slot: 'stances',
                text:
                  ['Keep answers short.', 'The user reads on a phone.', 'Short is good.'][i] ?? '',
                origin: 'saw' as const,
                evidence: { turn: 1, quote },
              })),
            });
            const [first, victim, later] = r.proposed.map((p) => p.id) as [FactId, FactId, FactId];
            await me.owner.decide({ proposalId: first, decision: 'approve', signer: owner });

            if (forge) {
              // the store's writer, without the owner's private key
              const link1 = (await new DecisionSql(db).chain('victim'))[0] as DecisionLink;
              const [fact] = await new TrustSql(db).facts('victim', [victim]);
              const forged = sealLink(
                nextLinkFields(link1, {
                  subjectId: 'victim',
                  proposalId: victim,
                  contentHash: factContentHash(fact!, nodeChainCrypto),
                  decision: 'approve',
                  decidedAt: new Date(Date.now() + 1000).toISOString(),
                  note: '',
                  keyId: owner.keyId,
                }),
                nodeChainCrypto,
                { keyId: owner.keyId, sign: forger.sign },
              );
              await db.exec('ALTER TABLE facts DISABLE TRIGGER facts_guard');
              await new DecisionSql(db).append(forged);
              await db.query(
                `UPDATE facts SET status = 'active', status_at = now(), promoted_by = 'owner' WHERE id = $1`,
                [victim],
              );
              await db.exec('ALTER TABLE facts ENABLE TRIGGER facts_guard');
              // the chain check's probe (its SQL names chain_length) sees the forger's key
              await db.exec('ALTER TABLE subjects RENAME TO subjects_real');
              await db.query(
                `CREATE VIEW subjects AS SELECT id, created_at,
                 CASE WHEN current_query() LIKE '%chain_length%' THEN '${forger.publicKeyPem}'
                      ELSE owner_public_key END AS owner_public_key,
                 owner_key_id FROM subjects_real`,
              );
            }
            const decided = await code(
              me.owner.decide({ proposalId: later, decision: 'approve', signer: owner }),
            ).catch((err: Error) => err.message);
            if (forge) {
              await db.exec('DROP VIEW subjects');
              await db.exec('ALTER TABLE subjects_real RENAME TO subjects');
            }
            if (!forge) {
              expect(decided).toBe('expected an EngineError, got success');
              expect((await me.facts.get(later)).status).toBe('active');
              expect((await me.owner.verifyChain()).ok).toBe(true);
              return;
            }
            expect(decided).toBe('CHAIN_BROKEN');
            const links = await new DecisionSql(db).chain('victim');
            expect(links).toHaveLength(2); // nothing was signed on top of the forged link
            for (const reader of [false, true]) {
              anchored = reader;
              expect((await me.facts.live()).map((f) => f.id)).not.toContain(victim);
              expect((await me.facts.get(victim)).integrity?.code).toBe('MISSING_DECISION');
            }
            expect(await me.owner.verifyChain()).toMatchObject({
              ok: false,
              brokenAt: 2,
              code: 'BAD_SIGNATURE',
            });
          } finally {
            await t.close();
          }
        },
      );
    }
  },
);
