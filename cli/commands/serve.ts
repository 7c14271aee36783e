import { EngineError } from '../../src/domain/errors.js';
import type { Engine } from '../../src/index.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../server/listen-defaults.js';
import type { ReviewConfig } from '../../server/review/review-app.js';
import { defineCommand } from '../command.js';
import type { CommandContext } from '../context.js';
import { recordSignedHead, verifyAnchored } from '../head-file.js';
import { LLM_OPTIONS, llmFrom } from '../llm-options.js';
import {
  anchorLine,
  findOwnerKey,
  KEY_ID_OPTION,
  KEY_OPTIONS,
  keyNotFoundMessage,
} from '../owner-key-options.js';
import { SUBJECT_OPTION } from '../options.js';
import { PROBE_CONFIG_OPTIONS, probeConfig } from '../probe-options.js';

/** `host:port`, `[v6]:port`, `host` or `:port`. */
export function parseListen(value: string | undefined): { host: string; port: number } {
  if (value === undefined) return { host: DEFAULT_HOST, port: DEFAULT_PORT };
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]*))(?::(\d{1,5}))?$/.exec(value.trim());
  const host = m?.[1] ?? m?.[2] ?? '';
  const port = m?.[3] === undefined ? DEFAULT_PORT : Number(m[3]);
  if (m === null || (host === '' && m[3] === undefined) || port > 65_535) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--listen "${value.slice(0, 100)}": use host:port, e.g. 127.0.0.1:7777 or [::1]:7777`,
      { data: { field: 'listen' } },
    );
  }
  return { host: host === '' ? DEFAULT_HOST : host, port };
}

/** Resolves on the first SIGINT or SIGTERM, with its name. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** `memledger serve`: the HTTP API, MCP over Streamable HTTP and the review page, until a signal. */
export const serveCommand = defineCommand({
  path: ['serve'],
  summary:
    'Serves the HTTP API, MCP (Streamable HTTP, at /mcp) and the owner review page (at /) until SIGINT or SIGTERM.',
  options: {
    listen: {
      kind: 'text',
      value: 'HOST:PORT',
      help: `the address to listen on (default ${DEFAULT_HOST}:${DEFAULT_PORT}; port 0 picks one)`,
    },
    'allow-remote': {
      kind: 'flag',
      help: 'allow a non-loopback address (anyone who reaches it can present tokens)',
    },
    'allow-host': {
      kind: 'repeat',
      value: 'NAME',
      help: 'a host name requests may be addressed to besides loopback (Host and Origin checks)',
    },
    ...SUBJECT_OPTION,
    key: KEY_OPTIONS.key,
    ...KEY_ID_OPTION,
    'idle-lock': {
      kind: 'int',
      value: 'MIN',
      min: 1,
      help: 'minutes the review page keeps the owner key open without a request (default 10, at most 1440)',
    },
    'notify-url': {
      kind: 'text',
      value: 'URL',
      help: 'POST a JSON notice here when the pile fills, and once a day while it stays full (loopback or an --allow host)',
    },
    ...PROBE_CONFIG_OPTIONS,
    ...LLM_OPTIONS,
  },
  notes: [
    'The owner review page is at / : the subject’s pile (--subject, default owner), unlocked in the browser with the owner key’s passphrase (--key F, else $MEMLEDGER_OWNER_KEY, else ~/.config/memledger/owner-<subject>.key).',
    'Every read is checked against the owner’s key from outside the store: that key file for --subject (or the key id pinned with --key-id), and ~/.config/memledger/owner-<subject>.key for any other subject a token names.',
    'File probes read only the --root directories ($MEMLEDGER_PROBE_ROOTS); none by default, so a token holder reads no file the owner did not name.',
    'Every API and MCP request carries `Authorization: Bearer <token>` (memledger token create); the review page refuses any token.',
    'A non-loopback --listen is refused (REMOTE_NOT_ALLOWED) without --allow-remote.',
    'Requests must name a loopback host, the --listen address, or an --allow-host name (DNS rebinding); on 0.0.0.0, give --allow-host.',
    'POST /v1/sessions/{id}/reflect calls the model of --llm-url and --llm-model ($MEMLEDGER_LLM_URL, $MEMLEDGER_LLM_MODEL; its key only in $MEMLEDGER_LLM_API_KEY); without one it answers LLM_NOT_CONFIGURED.',
  ],
  async run(ctx) {
    const { host, port } = parseListen(ctx.values.listen);
    // checked before the store opens: a URL without a model starts nothing
    const llm = llmFrom(ctx);
    await ctx.withEngine(
      false,
      async (engine) => {
        // loaded here, not at start-up: every other command (a hook after each reply) skips Hono
        const { startServe } = await import('../../server/serve.js');
        const review = await reviewConfig(ctx, engine);
        const notifyUrl = ctx.values['notify-url'];
        const running = await startServe({
          engine,
          host,
          port,
          allowRemote: ctx.values['allow-remote'],
          allowedHosts: ctx.values['allow-host'] ?? [],
          review,
          ...(notifyUrl === undefined
            ? {}
            : { notifyUrl, notifyAllowlist: probeConfig(ctx, 'none').httpAllowlist ?? [] }),
        });
        // listening for the signal before saying where we serve: a caller that stops us as soon
        // as it reads the line must find the handler in place, not the default that kills
        const stopped = untilSignal();
        try {
          const mcp = `${running.url}mcp`;
          const page =
            review.keyFile === null
              ? `review page ${running.url} cannot be unlocked: ${review.keyProblem ?? ''}`
              : `review page ${running.url} (unlock with the passphrase of ${review.keyFile})`;
          ctx.print(
            {
              url: running.url,
              mcp,
              host: running.host,
              port: running.port,
              review: { subject: running.review.subject, keyFile: review.keyFile },
              llm: llm === undefined ? null : { provider: llm.provider, model: llm.model },
            },
            () =>
              `memledger serving ${running.url} (MCP at ${mcp}); stop with Ctrl-C\n${page}\n` +
              (llm === undefined
                ? 'reflection: no model (--llm-url, --llm-model); /reflect answers LLM_NOT_CONFIGURED'
                : `reflection: ${llm.provider} ${llm.model}`),
          );
          await stopped;
        } finally {
          await running.close();
        }
      },
      // serve reads many times: its own verifier, warm after the first read, costs no trips
      { probes: probeConfig(ctx, 'none'), ...(llm === undefined ? {} : { llm }), longLived: true },
    );
  },
});

/** The longest --idle-lock: a day. */
const MAX_IDLE_MINUTES = 1_440;

/**
 * The review page's subject and owner key file, found as `decide` finds it; a store without an
 * owner key, or no key file for it, leaves the page locked for good and says why.
 */
async function reviewConfig(
  ctx: CommandContext<typeof serveCommand.options>,
  engine: Engine,
): Promise<ReviewConfig> {
  const subject = ctx.values.subject ?? 'owner';
  const me = engine.subject(subject);
  // a named subject must exist (SUBJECT_NOT_FOUND, as on every command); the default `owner`
  // of a store made without init only leaves the page locked for good
  if (ctx.values.subject !== undefined) await me.sessions.list({ limit: 1 });
  const stored = await me.owner.key().catch((err: unknown) => {
    if (err instanceof EngineError && err.code === 'SUBJECT_NOT_FOUND') return null;
    throw err;
  });
  const idle = ctx.values['idle-lock'];
  if (idle !== undefined && idle > MAX_IDLE_MINUTES) {
    throw new EngineError(
      'INVALID_ARGUMENT',
      `--idle-lock ${idle}: at most ${MAX_IDLE_MINUTES} minutes (a day); the key should not stay open longer`,
      { data: { field: 'idle-lock' } },
    );
  }
  const common: Omit<ReviewConfig, 'keyFile'> = {
    subject,
    ...(idle === undefined ? {} : { idleMs: idle * 60_000 }),
    verifyChain: async (handle) => {
      const { anchor, report, signedHead } = await verifyAnchored(ctx, handle);
      return { report, anchored: anchor.keyFile !== null, anchor: anchorLine(anchor), signedHead };
    },
  };
  if (stored === null) {
    return {
      ...common,
      keyFile: null,
      keyProblem: `subject "${subject}" has no owner key in the store (memledger init stores one)`,
    };
  }
  const lookup = findOwnerKey(ctx, subject, stored.keyId);
  if (lookup.keyFile === null) {
    return { ...common, keyFile: null, keyProblem: keyNotFoundMessage(lookup) };
  }
  const keyFile = lookup.keyFile;
  // a named key file that holds another key is refused now, as `decide` refuses it
  if (lookup.publicKey?.keyId !== stored.keyId) {
    throw new EngineError(
      'WRONG_KEY',
      `the key file ${keyFile} holds key ${String(lookup.publicKey?.keyId)}, but subject "${subject}" is anchored by key ${stored.keyId}; pass --key F with the key file that holds ${stored.keyId}`,
      { data: { wanted: stored.keyId, given: lookup.publicKey?.keyId ?? null, keyFile } },
    );
  }
  return {
    ...common,
    keyFile,
    onDecided: (head) => recordSignedHead(ctx, keyFile, me, head),
  };
}
