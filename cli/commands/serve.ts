import { EngineError } from '../../src/index.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../server/listen-defaults.js';
import { defineCommand } from '../command.js';
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

/** `memledger serve`: the HTTP API and MCP over Streamable HTTP, until SIGINT or SIGTERM. */
export const serveCommand = defineCommand({
  path: ['serve'],
  summary: 'Serves the HTTP API and MCP (Streamable HTTP, at /mcp) until SIGINT or SIGTERM.',
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
    ...PROBE_CONFIG_OPTIONS,
  },
  notes: [
    'File probes read only the --root directories ($MEMLEDGER_PROBE_ROOTS); none by default, so a token holder reads no file the owner did not name.',
    'Every request carries `Authorization: Bearer <token>` (memledger token create).',
    'A non-loopback --listen is refused (REMOTE_NOT_ALLOWED) without --allow-remote.',
    'Requests must name a loopback host, the --listen address, or an --allow-host name (DNS rebinding); on 0.0.0.0, give --allow-host.',
  ],
  async run(ctx) {
    const { host, port } = parseListen(ctx.values.listen);
    await ctx.withEngine(
      false,
      async (engine) => {
        // loaded here, not at start-up: every other command (a hook after each reply) skips Hono
        const { startServe } = await import('../../server/serve.js');
        const running = await startServe({
          engine,
          host,
          port,
          allowRemote: ctx.values['allow-remote'],
          allowedHosts: ctx.values['allow-host'] ?? [],
        });
        try {
          const mcp = `${running.url}mcp`;
          ctx.print(
            { url: running.url, mcp, host: running.host, port: running.port },
            () => `memledger serving ${running.url} (MCP at ${mcp}); stop with Ctrl-C`,
          );
          await untilSignal();
        } finally {
          await running.close();
        }
      },
      { probes: probeConfig(ctx, 'none') },
    );
  },
});
