// The review page shows memory as the engine verifies it, not as the tables say: a status
// flipped in the database or an edited text never shows as live, a cut chain shows as BROKEN
// with its link, and no decision can be signed on it (negative controls for "live" and "ok").
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServe } from '../server/serve.js';
import { ENGINES } from './support/engines.js';
import { TEXTS, trustStore, type TrustFixture, type TrustStore } from './support/trust-fixture.js';

/** A browser's cookie and CSRF token, kept by hand. */
class Owner {
  cookie = '';
  csrf = '';
  constructor(readonly base: string) {}

  async get(path: string): Promise<string> {
    const res = await fetch(`${this.base}${path}`, { headers: { cookie: this.cookie } });
    this.keep(res);
    const body = await res.text();
    this.csrf = /name="_csrf" value="([^"]+)"/.exec(body)?.[1] ?? this.csrf;
    return body;
  }

  async post(path: string, fields: Record<string, string>): Promise<Response> {
    const res = await fetch(`${this.base}${path}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: this.csrf, ...fields }).toString(),
    });
    this.keep(res);
    return res;
  }

  private keep(res: Response): void {
    const set = res.headers.get('set-cookie');
    if (set !== null) this.cookie = set.split(';')[0] ?? '';
  }

  async unlock(passphrase: string): Promise<void> {
    await this.get('');
    const res = await this.post('unlock', { passphrase });
    expect(res.status).toBe(303);
  }
}

describe.each(ENGINES)('the review page on a tampered store [%s]', (kind) => {
  // each test's fixture is a fresh subject of one store
  let store: TrustStore;
  beforeAll(async () => {
    store = await trustStore(kind);
  });
  afterAll(() => store.close());
  let f: TrustFixture | undefined;
  let serve: RunningServe | undefined;

  afterEach(async () => {
    await serve?.close();
    await f?.close();
    serve = undefined;
    f = undefined;
  });

  async function open(): Promise<{ fx: TrustFixture; owner: Owner }> {
    const fx = await store.fixture({ kdf: 'production' }); // the page opens production keys only
    f = fx;
    serve = await startServe({
      engine: fx.engine,
      port: 0,
      review: { subject: fx.subject, keyFile: fx.keyFile },
    });
    const owner = new Owner(serve.url);
    await owner.unlock('pw');
    return { fx, owner };
  }

  it('shows the backed facts as live, and the chain as ok (the positive control)', async () => {
    const { owner } = await open();
    const memory = await owner.get('memory');
    expect(memory).toContain(TEXTS.city);
    expect(memory).toContain(TEXTS.job);
    expect(await owner.get('chain')).toContain('chain ok: 3 decisions');
  });

  it('never shows a status flipped in the database or an edited text as live memory', async () => {
    const { fx, owner } = await open();
    await fx.tamper([`UPDATE facts SET status = 'active' WHERE id = $1`], [fx.ids.sister]);
    await fx.tamper([`UPDATE facts SET text = $2 WHERE id = $1`], [fx.ids.job, TEXTS.forged]);
    const memory = await owner.get('memory');
    expect(memory).toContain(TEXTS.city);
    expect(memory).not.toContain(TEXTS.sister);
    expect(memory).not.toContain(TEXTS.forged);
    const chain = await owner.get('chain');
    expect(chain).not.toContain('every live fact is backed by an owner signature');
    expect(chain).toContain(fx.ids.sister);
  });

  it('shows a cut chain as BROKEN at its link, and signs nothing on it', async () => {
    const { fx, owner } = await open();
    await fx.tamper([`DELETE FROM decisions WHERE subject_id = '${fx.subject}' AND seq = 2`]);
    const chain = await owner.get('chain');
    expect(chain).toMatch(/chain BROKEN at link 3 \(SEQ_GAP\)/);
    expect(chain).not.toContain('chain ok');
    expect(await owner.get('memory')).not.toContain(TEXTS.city);
    const res = await owner.post(`pile/${fx.ids.sister}/approve`, { confirm: 'YES' });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('CHAIN_BROKEN');
    expect((await fx.me.facts.get(fx.ids.sister)).status).toBe('proposed');
  });
});
