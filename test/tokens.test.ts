// Tokens the servers accept: made and revoked with the owner key, checked against the owner's
// signature on every authentication, so a flipped column refuses a token instead of widening it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeClient } from '../src/engine/test-access.js';
import { TOKEN_ROLES, type Engine, type SubjectHandle } from '../src/index.js';
import { engineBeside, ENGINES, openTestEngine, type TestEngine } from './support/engines.js';
import { code } from './support/errors.js';
import { makeOwnerSigner, ownerWithTokens } from './support/tokens.js';
import { TEST_KEYS } from './support/test-keys.js';

const owner = makeOwnerSigner(TEST_KEYS);
const stranger = makeOwnerSigner(TEST_KEYS);

describe.each(ENGINES)('tokens [%s]', (kind) => {
  let t: TestEngine;
  let engine: Engine;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    engine = t.engine;
  });
  afterAll(async () => t.close());

  const sql = (text: string, params: unknown[] = []) => storeClient(engine).query(text, params);

  it('a token authenticates as its subject and role, and its secret is stored only as a hash', async () => {
    const { agent, reader, agentInfo, readerInfo } = await ownerWithTokens(engine, 'alice', owner);
    expect(agent).toMatch(/^mlt_[A-Za-z0-9_-]{43}$/);
    const a = await engine.tokens.authenticate(agent);
    expect(a).toMatchObject({ id: agentInfo.id, subject: 'alice', role: 'agent', revokedAt: null });
    expect((await engine.tokens.authenticate(reader)).role).toBe('reader');
    expect(readerInfo.name).toBe('reader');
    const { rows } = await sql('SELECT * FROM access_tokens');
    expect(JSON.stringify(rows)).not.toContain(agent.slice(4));
    expect(TOKEN_ROLES).toEqual(['agent', 'reader']);
    const bobs = await ownerWithTokens(engine, 'bob-listed', owner);
    const listed = await engine.subject('alice').owner.tokens();
    expect(listed.map((x) => x.role)).toEqual(['agent', 'reader']);
    // another subject's tokens are its own namespace's, never alice's
    expect(listed.map((x) => x.id)).not.toContain(bobs.agentInfo.id);
    expect((await engine.subject('bob-listed').owner.tokens()).map((x) => x.subject)).toEqual([
      'bob-listed',
      'bob-listed',
    ]);
    expect(JSON.stringify(listed)).not.toContain(agent);
  });

  it('refuses a malformed, unknown or revoked token', async () => {
    expect(await code(engine.tokens.authenticate('nope'))).toBe('TOKEN_INVALID');
    expect(await code(engine.tokens.authenticate(`mlt_${'A'.repeat(43)}`))).toBe('TOKEN_INVALID');
    expect(await code(engine.tokens.authenticate(undefined as unknown as string))).toBe(
      'TOKEN_INVALID',
    );
    const made = await engine.subject('alice').owner.createToken({
      role: 'agent',
      signer: owner.signer,
    });
    await engine.tokens.authenticate(made.token); // positive control
    const revoked = await engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: owner.signer });
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await code(engine.tokens.authenticate(made.token))).toBe('TOKEN_REVOKED');
    // revoking twice is harmless and keeps the first time
    const again = await engine
      .subject(made.info.subject)
      .owner.revokeToken({ id: made.info.id, signer: owner.signer });
    expect(again.revokedAt?.getTime()).toBe(revoked.revokedAt?.getTime());
    const alice = engine.subject('alice').owner;
    expect(await code(alice.revokeToken({ id: 'tok_nosuch', signer: owner.signer }))).toBe(
      'TOKEN_NOT_FOUND',
    );
    // another subject's token reads as a missing one in this subject's owner namespace
    const bobs = await ownerWithTokens(engine, 'bob-revoke', owner);
    expect(await code(alice.revokeToken({ id: bobs.agentInfo.id, signer: owner.signer }))).toBe(
      'TOKEN_NOT_FOUND',
    );
    await engine.tokens.authenticate(bobs.agent); // untouched
  });

  it('only the subject\u2019s owner key makes or revokes its tokens', async () => {
    expect(
      await code(
        engine.subject('alice').owner.createToken({ role: 'agent', signer: stranger.signer }),
      ),
    ).toBe('WRONG_KEY');
    await engine.subjects.create('keyless');
    expect(
      await code(
        engine.subject('keyless').owner.createToken({ role: 'reader', signer: owner.signer }),
      ),
    ).toBe('NO_OWNER_KEY');
    expect(
      await code(
        engine.subject('ghost').owner.createToken({ role: 'reader', signer: owner.signer }),
      ),
    ).toBe('SUBJECT_NOT_FOUND');
    const made = await engine.subject('alice').owner.createToken({
      role: 'reader',
      signer: owner.signer,
    });
    expect(
      await code(
        engine
          .subject(made.info.subject)
          .owner.revokeToken({ id: made.info.id, signer: stranger.signer }),
      ),
    ).toBe('WRONG_KEY');
    await engine.tokens.authenticate(made.token);
    type CreateInput = Parameters<SubjectHandle['owner']['createToken']>[0];
    for (const bad of [
      { role: 'owner', signer: owner.signer },
      { role: 'agent' },
      { role: 'agent', signer: owner.signer, name: 'a\u0000b' },
    ]) {
      expect(await code(engine.subject('alice').owner.createToken(bad as CreateInput))).toBe(
        'INVALID_ARGUMENT',
      );
    }
    expect(
      await code(
        engine.subject('../alice').owner.createToken({ role: 'agent', signer: owner.signer }),
      ),
    ).toBe('INVALID_ARGUMENT');
    // a subject named in the input changes nothing: the token is the namespace's subject's
    await ownerWithTokens(engine, 'bob-input', owner);
    const aimed = await engine.subject('alice').owner.createToken({
      subject: 'bob-input',
      role: 'agent',
      signer: owner.signer,
    } as CreateInput);
    expect(aimed.info.subject).toBe('alice');
  });

  it('a row changed in the store refuses the token: its role or its subject', async () => {
    const { reader } = await ownerWithTokens(engine, 'bob', owner);
    await ownerWithTokens(engine, 'carol', stranger);
    await engine.tokens.authenticate(reader); // positive control
    // the trigger lets a row change only by being revoked
    await expect(
      sql(`UPDATE access_tokens SET role = 'agent' WHERE name = 'reader'`),
    ).rejects.toThrow(/only by being revoked/);
    await expect(sql('DELETE FROM access_tokens')).rejects.toThrow(/never deleted/);
    await sql('ALTER TABLE access_tokens DISABLE TRIGGER access_tokens_revoke_only');
    try {
      const hash = (
        await sql('SELECT token_hash FROM access_tokens WHERE subject_id = $1 AND role = $2', [
          'bob',
          'reader',
        ])
      ).rows[0] as { token_hash: string };
      await sql(`UPDATE access_tokens SET role = 'agent' WHERE token_hash = $1`, [hash.token_hash]);
      expect(await code(engine.tokens.authenticate(reader))).toBe('TOKEN_INVALID');
      await sql(
        `UPDATE access_tokens SET role = 'reader', subject_id = 'carol' WHERE token_hash = $1`,
        [hash.token_hash],
      );
      expect(await code(engine.tokens.authenticate(reader))).toBe('TOKEN_INVALID');
      await sql(`UPDATE access_tokens SET subject_id = 'bob' WHERE token_hash = $1`, [
        hash.token_hash,
      ]);
      await engine.tokens.authenticate(reader); // restored: accepted again
    } finally {
      await sql('ALTER TABLE access_tokens ENABLE TRIGGER access_tokens_revoke_only');
    }
  });

  it('rejects every call once the engine is closed', async () => {
    // an engine of its own on this store, closed here
    const other = await engineBeside(t);
    await other.close();
    expect(await code(other.subject().owner.tokens())).toBe('ENGINE_CLOSED');
    expect(await code(other.tokens.authenticate('x'))).toBe('ENGINE_CLOSED');
  });
});
