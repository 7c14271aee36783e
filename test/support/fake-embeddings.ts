import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for an embeddings server (no model can be downloaded here), speaking OpenAI's
 * `POST /v1/embeddings` over real HTTP. Its vectors are built from a small table of concepts, so
 * words that mean the same thing land on the same axis and share no letters ("dog", "puppy"):
 * what a lexical ranking cannot see and a dense one can. Other words hash onto spare axes.
 */
const CONCEPTS: readonly (readonly string[])[] = [
  ['dog', 'dogs', 'puppy', 'labrador', 'canine', 'pup'],
  ['car', 'cars', 'vehicle', 'automobile', 'sedan', 'truck'],
  ['guitar', 'music', 'song', 'concert', 'band', 'gig'],
  ['doctor', 'hospital', 'nurse', 'clinic', 'physician'],
  ['paris', 'france', 'french', 'eiffel'],
];
const DIMS = 24;

export function conceptVector(text: string, dims = DIMS): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    const concept = CONCEPTS.findIndex((c) => c.includes(word));
    if (concept >= 0) {
      v[concept] = (v[concept] ?? 0) + 3;
    } else {
      let h = 7;
      for (const ch of word) h = (h * 31 + ch.charCodeAt(0)) % 9973;
      const axis = CONCEPTS.length + (h % (dims - CONCEPTS.length));
      v[axis] = (v[axis] ?? 0) + 0.2;
    }
  }
  return v;
}

export type FakeMode = 'ok' | 'error' | 'zero' | 'short';

export interface FakeEmbeddings {
  baseUrl: string;
  /** How the next answers behave. */
  mode: FakeMode;
  /** Dimensions of the vectors it answers with (default 24). */
  dims: number;
  /** Texts asked for, in order. */
  inputs: string[];
  /** A request holding a text with this in it is refused (400), as a too-long text would be. */
  poison: string | null;
  close(): Promise<void>;
}

export async function startFakeEmbeddings(): Promise<FakeEmbeddings> {
  const state = {
    mode: 'ok' as FakeMode,
    dims: DIMS,
    inputs: [] as string[],
    poison: null as string | null,
  };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const body = JSON.parse(raw) as { model: string; input: string[] };
      state.inputs.push(...body.input);
      const poison = state.poison;
      if (poison !== null && body.input.some((t) => t.includes(poison))) {
        res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"too long"}');
        return;
      }
      if (state.mode === 'error') {
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"overloaded"}');
        return;
      }
      const input = state.mode === 'short' ? body.input.slice(1) : body.input;
      const data = input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding:
          state.mode === 'zero'
            ? new Array<number>(state.dims).fill(0)
            : conceptVector(text, state.dims),
      }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data, model: body.model }));
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get mode() {
      return state.mode;
    },
    set mode(m: FakeMode) {
      state.mode = m;
    },
    get dims() {
      return state.dims;
    },
    set dims(d: number) {
      state.dims = d;
    },
    inputs: state.inputs,
    get poison() {
      return state.poison;
    },
    set poison(p: string | null) {
      state.poison = p;
    },
    close: () => new Promise<void>((ok) => server.close(() => ok())),
  };
}
