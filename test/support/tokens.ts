import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Engine,
  type OwnerKeyOptions,
  type OwnerSigner,
  type SubjectHandle,
  type TokenInfo,
} from '../../src/index.js';
import { TEST_KEYS } from './test-keys.js';

export const OWNER_PASSPHRASE = 'correct horse battery staple';

/**
 * An owner key written to a temp file and loaded: one scrypt per call, so share it per file.
 * `keys`: its scrypt cost, production unless asked (a review page unlocks only such a key); a
 * signer used in process alone can be made at the test cost (test/support/test-keys.ts).
 */
export function makeOwnerSigner(keys?: OwnerKeyOptions): { signer: OwnerSigner; keyPath: string } {
  const keyPath = join(mkdtempSync(join(tmpdir(), 'ml-owner-')), 'owner.key');
  writeOwnerKeyFile(keyPath, generateOwnerKey(OWNER_PASSPHRASE, keys).keyFile);
  return { signer: loadOwnerKey(keyPath, OWNER_PASSPHRASE, keys), keyPath };
}

/** A new subject whose owner key is the signer's: its handle. */
export async function keyedSubject(
  engine: Engine,
  id: string,
  signer: OwnerSigner,
): Promise<SubjectHandle> {
  await engine.subjects.create(id);
  const me = engine.subject(id);
  await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  return me;
}

export interface SubjectWithTokens {
  signer: OwnerSigner;
  keyPath: string;
  agent: string;
  reader: string;
  agentInfo: TokenInfo;
  readerInfo: TokenInfo;
}

/**
 * Creates the subject, sets its owner key, and makes one agent and one reader token. The owner
 * key is made at the test cost unless given (pass a production one for a review page to unlock).
 */
export async function ownerWithTokens(
  engine: Engine,
  subject: string,
  owner: { signer: OwnerSigner; keyPath: string } = makeOwnerSigner(TEST_KEYS),
): Promise<SubjectWithTokens> {
  const { signer } = owner;
  await engine.subjects.create(subject);
  const handle = engine.subject(subject);
  if ((await handle.owner.key()) === null) {
    await handle.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  }
  const agent = await engine
    .subject(subject)
    .owner.createToken({ role: 'agent', name: 'agent', signer });
  const reader = await engine
    .subject(subject)
    .owner.createToken({ role: 'reader', name: 'reader', signer });
  return {
    ...owner,
    agent: agent.token,
    reader: reader.token,
    agentInfo: agent.info,
    readerInfo: reader.info,
  };
}
