// Broke: the HTTP face writes from a body sent with Content-Encoding: gzip (read as if identity) and from JSON with duplicate keys (the last silently wins), instead of a 4xx that changes nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServeApp } from '../../server/serve.js';
import { dumpStore } from '../support/dump-store.js';
import { ONE_ENGINE, openTestEngine, type TestEngine } from '../support/engines.js';
import { ownerWithTokens } from '../support/tokens.js';

type App = ReturnType<typeof createServeApp>['app'];

describe.each(ONE_ENGINE)('HTTP bodies that must be refused [%s]', (kind) => {
  let t: TestEngine;
  let app: App;
  let agent: string;

  beforeAll(async () => {
    t = await openTestEngine(kind);
    app = createServeApp({ engine: t.engine, onInternalError: () => undefined }).app;
    agent = (await ownerWithTokens(t.engine, 'alice')).agent;
  });
  afterAll(async () => {
    await t.close();
  });

  const post = async (body: string, headers: Record<string, string> = {}) => {
    const res = await app.request('/v1/sessions', {
      method: 'POST',
      headers: {
        host: '127.0.0.1:7777',
        authorization: `Bearer ${agent}`,
        'content-type': 'application/json',
        ...headers,
      },
      body,
    });
    return { status: res.status, json: (await res.json()) as { error?: { code: string } } };
  };

  it('refuses a content coding it does not decode, and changes nothing', async () => {
    const before = await dumpStore(t.engine);
    const res = await post('{"title":"sent as gzip"}', { 'content-encoding': 'gzip' });
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof res.json.error?.code).toBe('string');
    expect(await dumpStore(t.engine)).toEqual(before);
  });

  it('refuses duplicate keys in a JSON object, and changes nothing', async () => {
    const before = await dumpStore(t.engine);
    const res = await post('{"title":"what a checker saw","title":"what was stored"}');
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.status).toBeLessThan(500);
    expect(typeof res.json.error?.code).toBe('string');
    expect(await dumpStore(t.engine)).toEqual(before);
  });
});
