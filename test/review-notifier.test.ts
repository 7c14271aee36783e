import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, LookupFunction, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createPileNotifier, type PileNotifierConfig } from '../server/review/pile-notifier.js';
import { codedError } from '../server/server-errors.js';

interface Received {
  method: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** The status the next notices get. */
  status: number;
  location?: string;
}

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A real HTTP server on 127.0.0.1 that records every request and answers `status`. */
async function receiver(options: { status?: number; hang?: boolean } = {}): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const state: Receiver = { url: '', port: 0, received: [], status: options.status ?? 204 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.received.push({
        method: req.method ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      if (options.hang === true) return;
      res.writeHead(state.status, state.location === undefined ? {} : { location: state.location });
      res.end();
    });
  });
  server.on('connection', (s: Socket) => sockets.add(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.url = `http://127.0.0.1:${state.port}/notice`;
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  );
  return state;
}

/** Resolves every name to `address` and counts the lookups. */
function pinnedLookup(address: string, counter = { lookups: 0 }): LookupFunction {
  return ((_host: string, options: { all?: boolean }, cb: (...args: unknown[]) => void) => {
    counter.lookups += 1;
    if (options.all === true) cb(null, [{ address, family: 4 }]);
    else cb(null, address, 4);
  }) as unknown as LookupFunction;
}

/** A pile whose size the test sets, a clock the test moves, and the errors reported. */
function harness(url: string, extra: Partial<PileNotifierConfig> = {}) {
  const state = { pending: 0, clock: new Date('2030-01-01T09:00:00.000Z'), looks: 0 };
  const errors: unknown[] = [];
  const notifier = createPileNotifier({
    url,
    allowlist: [],
    subject: 'alice',
    pileCount: async () => {
      state.looks += 1;
      return state.pending;
    },
    now: () => state.clock,
    onError: (err) => errors.push(err),
    ...extra,
  });
  const advance = (ms: number): void => {
    state.clock = new Date(state.clock.getTime() + ms);
  };
  return { notifier, state, errors, advance };
}

function refusal(fn: () => unknown): { code: string; data: unknown } {
  try {
    fn();
  } catch (err) {
    const coded = codedError(err);
    if (coded !== null) return { code: coded.code, data: coded.data };
    throw err;
  }
  throw new Error('expected a refusal');
}

const DAY_MS = 24 * 60 * 60 * 1000;

describe('pile notifier', () => {
  it('sends exactly one notice for a new pile across several checks', async () => {
    const r = await receiver();
    const { notifier, state, errors } = harness(r.url);
    state.pending = 3;
    const results = [await notifier.check(), await notifier.check(), await notifier.check()];
    expect(results).toEqual(['sent', 'quiet', 'quiet']);
    expect(r.received).toHaveLength(1);
    expect(errors).toEqual([]);
  });

  it('sends nothing while the pile is empty', async () => {
    const r = await receiver();
    const { notifier } = harness(r.url);
    for (let i = 0; i < 3; i += 1) expect(await notifier.check()).toBe('quiet');
    expect(r.received).toHaveLength(0);
  });

  it('sends again when the pile empties and fills again', async () => {
    const r = await receiver();
    const { notifier, state } = harness(r.url);
    state.pending = 2;
    expect(await notifier.check()).toBe('sent');
    state.pending = 0;
    expect(await notifier.check()).toBe('quiet');
    state.pending = 1;
    expect(await notifier.check()).toBe('sent');
    expect(r.received.map((n) => (JSON.parse(n.body) as { pending: number }).pending)).toEqual([
      2, 1,
    ]);
  });

  it('reminds once a day while the pile stays non-empty, not before', async () => {
    const r = await receiver();
    const { notifier, state, advance } = harness(r.url);
    state.pending = 4;
    expect(await notifier.check()).toBe('sent');
    advance(DAY_MS - 1);
    expect(await notifier.check()).toBe('quiet');
    advance(1);
    expect(await notifier.check()).toBe('sent');
    advance(DAY_MS - 1);
    expect(await notifier.check()).toBe('quiet');
    expect(r.received).toHaveLength(2);
  });

  it('reports a receiver answering 500 and sends on the next check', async () => {
    const r = await receiver({ status: 500 });
    const { notifier, state, errors } = harness(r.url);
    state.pending = 1;
    expect(await notifier.check()).toBe('failed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'status' } });
    expect(String((errors[0] as Error).message)).toContain('500');
    r.status = 200;
    expect(await notifier.check()).toBe('sent');
    expect(await notifier.check()).toBe('quiet');
    expect(r.received).toHaveLength(2);
  });

  it('treats a redirect as a failure and does not follow it', async () => {
    const elsewhere = await receiver();
    const r = await receiver({ status: 302 });
    r.location = elsewhere.url;
    const { notifier, state, errors } = harness(r.url);
    state.pending = 1;
    expect(await notifier.check()).toBe('failed');
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'status' } });
    expect(String((errors[0] as Error).message)).toContain('302');
    expect(elsewhere.received).toHaveLength(0);
  });

  it('gives up on a receiver that never answers within timeoutMs', async () => {
    const r = await receiver({ hang: true });
    const { notifier, state, errors } = harness(r.url, { timeoutMs: 100 });
    state.pending = 1;
    expect(await notifier.check()).toBe('failed');
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'timeout' } });
    expect(String((errors[0] as Error).message)).toContain('100 ms');
  });

  it('reports a refused connection as NOTIFY_FAILED and keeps the cause', async () => {
    const r = await receiver();
    await closers.pop()?.();
    const { notifier, state, errors } = harness(r.url);
    state.pending = 1;
    expect(await notifier.check()).toBe('failed');
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'connection' } });
    expect(String((errors[0] as Error).message)).toContain('ECONNREFUSED');
    expect((errors[0] as Error).cause).toBeInstanceOf(Error);
  });

  it('reports a pile count that is not a whole number as NOTIFY_FAILED', async () => {
    const r = await receiver();
    const { notifier, state, errors } = harness(r.url);
    state.pending = 1.5;
    expect(await notifier.check()).toBe('failed');
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'count' } });
    expect(r.received).toHaveLength(0);
  });

  it('reports a failing pile count as failed', async () => {
    const r = await receiver();
    const errors: unknown[] = [];
    const notifier = createPileNotifier({
      url: r.url,
      allowlist: [],
      subject: 'alice',
      pileCount: () => Promise.reject(new Error('store closed')),
      onError: (err) => errors.push(err),
    });
    expect(await notifier.check()).toBe('failed');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'count' } });
    expect(String((errors[0] as Error).message)).toContain('store closed');
    expect(r.received).toHaveLength(0);
  });

  it('posts a small JSON notice of the expected shape, with no memory text', async () => {
    const r = await receiver();
    const memoryText = 'Alice keeps her spare key under the blue flowerpot';
    const { notifier, state } = harness(r.url, { reviewUrl: 'http://127.0.0.1:7410/review' });
    state.pending = 2;
    expect(await notifier.check()).toBe('sent');
    const [n] = r.received;
    expect(n?.method).toBe('POST');
    expect(n?.headers['content-type']).toBe('application/json');
    expect(n?.headers['user-agent']).toBe('memledger');
    expect(JSON.parse(n?.body ?? '')).toStrictEqual({
      type: 'memledger.pile',
      subject: 'alice',
      pending: 2,
      reviewUrl: 'http://127.0.0.1:7410/review',
      at: '2030-01-01T09:00:00.000Z',
    });
    expect(n?.body).not.toContain(memoryText);
    expect(Buffer.byteLength(n?.body ?? '')).toBeLessThan(512);

    const plain = await receiver();
    const bare = harness(plain.url);
    bare.state.pending = 1;
    await bare.notifier.check();
    expect((JSON.parse(plain.received[0]?.body ?? '') as { reviewUrl: unknown }).reviewUrl).toBe(
      null,
    );
  });

  it('never runs two checks at once', async () => {
    const r = await receiver();
    let looks = 0;
    const notifier = createPileNotifier({
      url: r.url,
      allowlist: [],
      subject: 'alice',
      pileCount: async () => {
        looks += 1;
        await new Promise((resolve) => setTimeout(resolve, 30));
        return 1;
      },
      onError: () => undefined,
    });
    const both = await Promise.all([notifier.check(), notifier.check()]);
    expect(both).toEqual(['sent', 'sent']);
    expect(looks).toBe(1);
    expect(r.received).toHaveLength(1);
  });

  it('start()/stop() send exactly once for a steady non-empty pile', async () => {
    const r = await receiver();
    const { notifier, state, errors } = harness(r.url, { intervalMs: 50 });
    state.pending = 5;
    notifier.start();
    notifier.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await notifier.stop();
    const looks = state.looks;
    expect(looks).toBeGreaterThan(2);
    expect(r.received).toHaveLength(1);
    expect(errors).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 120));
    expect(state.looks).toBe(looks);
  });

  describe('the URL, refused at creation before anything starts', () => {
    const make = (url: string, allowlist: readonly string[] = []) => {
      const looks = { n: 0 };
      const result = refusal(() =>
        createPileNotifier({
          url,
          allowlist,
          subject: 'alice',
          pileCount: async () => {
            looks.n += 1;
            return 1;
          },
        }),
      );
      expect(looks.n).toBe(0);
      return result;
    };

    it('refuses a host neither loopback nor allowlisted', () => {
      expect(make('http://example.com/')).toEqual({
        code: 'NOTIFY_HOST_NOT_ALLOWED',
        data: { field: 'notifyUrl', host: 'example.com' },
      });
      expect(make('http://example.com/', ['example.org'])).toMatchObject({
        code: 'NOTIFY_HOST_NOT_ALLOWED',
      });
      // the allowlist lets it in (nothing connects at creation)
      expect(() =>
        createPileNotifier({
          url: 'https://example.com/',
          allowlist: ['Example.COM.'],
          subject: 'alice',
          pileCount: async () => 0,
        }),
      ).not.toThrow();
    });

    it('refuses other schemes, credentials, and text that is no URL', () => {
      expect(make('ftp://127.0.0.1/')).toEqual({
        code: 'INVALID_ARGUMENT',
        data: { field: 'notifyUrl', reason: 'scheme' },
      });
      expect(make('file:///etc/passwd')).toMatchObject({ data: { reason: 'scheme' } });
      expect(make('http://user:pw@127.0.0.1/')).toMatchObject({ data: { reason: 'credentials' } });
      expect(make('http://user@127.0.0.1/')).toMatchObject({ data: { reason: 'credentials' } });
      expect(make('not a url')).toMatchObject({ data: { reason: 'malformed' } });
    });

    it('does not echo credentials in the refusal', () => {
      let message = '';
      try {
        createPileNotifier({
          url: 'http://user:s3cret@127.0.0.1/',
          allowlist: [],
          subject: 'alice',
          pileCount: async () => 1,
        });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toContain('password');
      expect(message).not.toContain('s3cret');
    });

    it('refuses a bad interval or timeout', () => {
      const base = {
        url: 'http://127.0.0.1/',
        allowlist: [],
        subject: 'a',
        pileCount: async () => 0,
      };
      expect(refusal(() => createPileNotifier({ ...base, intervalMs: 0 })).code).toBe(
        'INVALID_ARGUMENT',
      );
      expect(refusal(() => createPileNotifier({ ...base, timeoutMs: 1.5 })).code).toBe(
        'INVALID_ARGUMENT',
      );
    });
  });

  describe('name resolution', () => {
    it('sends to an allowlisted name that resolves to loopback', async () => {
      const r = await receiver();
      const counter = { lookups: 0 };
      const { notifier, state, errors } = harness(`http://notify.test:${r.port}/notice`, {
        allowlist: ['notify.test'],
        lookup: pinnedLookup('127.0.0.1', counter),
      });
      state.pending = 1;
      expect(await notifier.check()).toBe('sent');
      expect(errors).toEqual([]);
      expect(counter.lookups).toBe(1);
      expect(r.received).toHaveLength(1);
    });

    it('refuses localhost when it resolves to a non-loopback address (negative control)', async () => {
      const r = await receiver();
      const { notifier, state, errors } = harness(`http://localhost:${r.port}/notice`, {
        lookup: pinnedLookup('192.0.2.1'),
      });
      state.pending = 1;
      expect(await notifier.check()).toBe('failed');
      expect(errors[0]).toMatchObject({ code: 'NOTIFY_FAILED', data: { reason: 'not_allowed' } });
      expect(String((errors[0] as Error).message)).toContain('non-loopback');
      expect(r.received).toHaveLength(0);
    });
  });
});
