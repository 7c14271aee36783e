import fc from 'fast-check';
import type { Proposal } from '../../src/index.js';

/**
 * Generators of bad input for the property tests: each yields a value that is wrong in exactly
 * one way, with the error code that way must get, so a property can assert the exact code.
 */

/** Any text around a defect: every code point, paired surrogates included, never a half. */
const around = fc.string({ unit: 'binary', maxLength: 12 });

/** A string holding a NUL. */
export const withNul = fc.tuple(around, around).map(([a, b]) => `${a}\u0000${b}`);
/** A string holding half a surrogate pair on its own. */
export const withLoneSurrogate = fc
  .tuple(around, fc.integer({ min: 0xd800, max: 0xdfff }), around)
  .map(([a, half, b]) => a + String.fromCharCode(half) + b);
/** A string no store can keep as sent. */
export const unstorable = fc.oneof(withNul, withLoneSurrogate);

/** A string over `max` code units (printable, so only its length is wrong). */
export function longer(max: number): fc.Arbitrary<string> {
  return fc
    .tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom('x', 'é', 'tea '))
    .map(([extra, unit]) => unit.repeat(Math.ceil((max + extra) / unit.length)));
}

/** Anything but a string (and not undefined, which means "absent"). */
export const notString: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.bigInt(),
  fc.array(fc.string(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }),
);

/** A string field wrong in one of the ways the one rule refuses (or of the wrong type). */
export function badText(max: number): fc.Arbitrary<unknown> {
  return fc.oneof(unstorable, longer(max), notString);
}

/** A chain of `depth` objects or lists. */
export function nested(depth: number, list: boolean): unknown {
  let v: unknown = list ? [] : {};
  for (let i = 0; i < depth; i++) v = list ? [v] : { a: v };
  return v;
}

/** A value whose shape is not plain bounded JSON: too deep, cyclic, a BigInt, a function… */
export const badShape: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(fc.integer({ min: 33, max: 6000 }), fc.boolean()).map(([d, list]) => nested(d, list)),
  fc.constant(null).map(() => {
    const o: Record<string, unknown> = { note: 'loop' };
    o.self = o;
    return o;
  }),
  fc.bigInt().map((n) => ({ n })),
  fc.constant({ run: () => 1 }),
  fc.constant({ s: Symbol('x') }),
  fc.integer({ min: 10_001, max: 12_000 }).map((n) => Array.from({ length: n }, (_, i) => i)),
);

/** A Date the store cannot keep: invalid, or outside the years 1 to 9999. */
export const badDate: fc.Arbitrary<Date> = fc.oneof(
  fc.constant(null).map(() => new Date(Number.NaN)),
  fc.integer({ min: -271_000, max: 0 }).map((y) => yearDate(y)),
  fc.integer({ min: 10_000, max: 275_000 }).map((y) => yearDate(y)),
);

function yearDate(year: number): Date {
  const d = new Date(0);
  d.setUTCFullYear(year);
  return d;
}

/** A string in the id format that names nothing. */
export const unknownId = fc.stringMatching(/^[a-z0-9]{8,16}$/).map((s) => `nosuch-${s}`);

/** A session id that is missing (SESSION_REQUIRED) or malformed (INVALID_ARGUMENT). */
export const badSessionId: fc.Arbitrary<{ value: unknown; code: string }> = fc.oneof(
  fc.constantFrom(undefined, null, '').map((value) => ({ value, code: 'SESSION_REQUIRED' })),
  fc
    .oneof(
      unstorable,
      longer(128),
      fc.constantFrom('has space', '-leading', 'a/b', 'ü'),
      fc.integer(),
    )
    .map((value) => ({ value, code: 'INVALID_ARGUMENT' })),
  unknownId.map((value) => ({ value, code: 'SESSION_NOT_FOUND' })),
);

/** One field replaced: `{ field: value }` merged over a good base, with the code it must get. */
export interface Mutation {
  label: string;
  patch: Record<string, unknown>;
  code: string;
}

export function mutate(
  label: string,
  field: string,
  values: fc.Arbitrary<unknown>,
  code = 'INVALID_ARGUMENT',
): fc.Arbitrary<Mutation> {
  return values.map((value) => ({ label, patch: { [field]: value }, code }));
}

/** Probe specs that parse: one of each kind and mode. */
export const GOOD_SPECS: readonly Record<string, unknown>[] = [
  { kind: 'file', path: 'notes.txt', mode: 'exists' },
  { kind: 'file', path: 'notes.txt', mode: 'contains', needle: 'tea', negate: false },
  { kind: 'sql', query: 'select 1', op: 'eq', expect: 1 },
  { kind: 'http', url: 'http://127.0.0.1:9/', status: 200 },
];

const [fileExists, fileContains, sqlSpec, httpSpec] = GOOD_SPECS as [
  Record<string, unknown>,
  Record<string, unknown>,
  Record<string, unknown>,
  Record<string, unknown>,
];

function over(base: Record<string, unknown>, field: string, values: fc.Arbitrary<unknown>) {
  return values.map((v) => ({ ...base, [field]: v }));
}

/** A probe spec wrong in one way; every one is INVALID_ARGUMENT and runs nothing. */
export const badSpec: fc.Arbitrary<unknown> = fc.oneof(
  fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.array(fc.string()), fc.bigInt()),
  over(
    fileExists,
    'kind',
    fc.oneof(
      fc.string().filter((s) => !['file', 'sql', 'http'].includes(s)),
      notString,
    ),
  ),
  fc
    .tuple(fc.constantFrom(...GOOD_SPECS), fc.constantFrom('assertion', 'extra', 'Path', 'timeout'))
    .map(([spec, key]) => ({ ...spec, [key]: 'x' })),
  over(fileExists, 'path', fc.oneof(badText(10_000), fc.constant(''))),
  over(
    fileExists,
    'mode',
    fc.oneof(
      fc.string().filter((s) => !['exists', 'missing', 'contains'].includes(s)),
      notString,
    ),
  ),
  over(fileExists, 'needle', fc.string()),
  over(fileExists, 'negate', fc.boolean()),
  over(fileContains, 'needle', fc.oneof(badText(10_000), fc.constant(''))),
  over(fileContains, 'negate', fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
  over(
    sqlSpec,
    'query',
    fc.oneof(
      badText(10_000),
      fc.constantFrom(
        'delete from facts',
        'update facts set text = 1',
        'insert into facts values (1)',
        'create table x (a int)',
        'select 1; select 2',
        'select pg_sleep(1)',
        "select pg_read_file('/etc/passwd')",
        "select count(*) from pg_ls_dir('.')",
        'select U&"\\0070g_sleep"(1)',
        "copy facts to program 'true'",
      ),
    ),
  ),
  over(
    sqlSpec,
    'op',
    fc.oneof(
      fc.string().filter((s) => !['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(s)),
      notString,
    ),
  ),
  over(
    sqlSpec,
    'expect',
    fc.oneof(
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, undefined),
      fc.string(),
      fc.bigInt(),
      fc.constant(null),
    ),
  ),
  over(
    httpSpec,
    'url',
    fc.oneof(
      badText(10_000),
      fc.constantFrom(
        'not a url',
        'ftp://127.0.0.1/',
        'file:///etc/passwd',
        'http://u:p@127.0.0.1/',
        '',
      ),
    ),
  ),
  over(
    httpSpec,
    'status',
    fc.oneof(
      fc.integer({ max: 99 }),
      fc.integer({ min: 600 }),
      fc.double({ min: 100.01, max: 598.99 }).filter((n) => !Number.isInteger(n)),
      fc.string(),
      fc.constant(null),
    ),
  ),
  fc.constant({ kind: 'http', url: 'http://127.0.0.1:9/' }),
  over(
    { kind: 'http', url: 'http://127.0.0.1:9/' },
    'contains',
    fc.oneof(badText(10_000), fc.constant('')),
  ),
);

export const QUOTE = 'I love green tea';
export const GOOD_ITEM: Proposal = {
  slot: 'what_i_know_about_user',
  text: 'The user loves green tea',
  origin: 'saw',
  evidence: { turn: 1, quote: QUOTE },
};
export const GOOD_RETRACTION = {
  claim: 'The deploy was green',
  stoodOn: 'the CI badge',
  whyWrong: 'the badge was cached',
  corrected: 'The deploy failed',
  procedure: 'rerun the pipeline',
  passObservation: 'the pipeline fails',
  overturnCondition: 'the pipeline passes',
};

/** What blocks may not hold: nesting past 64 levels, a cycle, a BigInt, a function. */
export const badBlockShape: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(fc.integer({ min: 65, max: 6000 }), fc.boolean()).map(([d, list]) => nested(d, list)),
  badShape.filter((v) => !Array.isArray(v) && !(typeof v === 'object' && v !== null && 'a' in v)),
);

/** A turn wrong in one way: which call, its input, the code it must get. */
export function badTurn(
  sessionId: string,
): fc.Arbitrary<{ call: 'add' | 'recordResponse'; input: Record<string, unknown>; code: string }> {
  const user = { sessionId, role: 'user', content: 'I like tea' };
  const reply = {
    sessionId,
    role: 'assistant',
    content: 'Done.',
    receipt: { tools: ['web_search'], sources: ['https://example.org/a'] },
  };
  const tools = (list: fc.Arbitrary<unknown>) => list.map((t) => ({ receipt: { tools: [t] } }));
  const onUser: fc.Arbitrary<Mutation> = fc.oneof(
    mutate('content', 'content', fc.oneof(unstorable, notString)),
    mutate(
      'content',
      'content',
      fc.integer({ min: 1, max: 5 }).map((n) => 'x'.repeat(1_000_000 + n)),
    ),
    mutate('content', 'content', fc.constantFrom('', ' ', '\n\t ', undefined), 'EMPTY_TEXT'),
    mutate(
      'role',
      'role',
      fc.oneof(
        fc.string().filter((s) => !['user', 'assistant', 'system', 'tool'].includes(s)),
        notString,
      ),
      'UNKNOWN_ROLE',
    ),
    mutate(
      'speaker',
      'speaker',
      fc.oneof(unstorable, longer(200), fc.constantFrom('a\nb', '   '), notString),
    ),
    mutate(
      'at',
      'at',
      fc.oneof(
        badDate,
        fc.string(),
        fc.integer(),
        fc.integer({ min: 1, max: 3e11 }).map((ms) => new Date(Date.now() + 60_000 + ms)),
      ),
    ),
    mutate(
      'receipt',
      'receipt',
      fc.constantFrom({ tools: ['x'] }, { noTools: true }, { tools: ['a'], sources: ['b'] }),
      'RECEIPT_NOT_ALLOWED',
    ),
    mutate('utility', 'utility', fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
    mutate('corrective', 'corrective', fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
    badSessionId.map(({ value, code }) => ({
      label: 'sessionId',
      patch: { sessionId: value },
      code,
    })),
  );
  const onReply: fc.Arbitrary<Mutation> = fc.oneof(
    mutate(
      'receipt',
      'receipt',
      fc.oneof(
        fc.constant(null),
        fc.string(),
        fc.integer(),
        fc.array(fc.string(), { maxLength: 2 }),
      ),
    ),
    tools(fc.oneof(unstorable, longer(2048), fc.constantFrom('  ', 'a\nb', 'x]]y'))).map(
      (patch) => ({ label: 'tool', patch, code: 'INVALID_ARGUMENT' }),
    ),
    fc.oneof(unstorable, longer(2048)).map((s) => ({
      label: 'source',
      patch: { receipt: { tools: ['w'], sources: [s] } },
      code: 'INVALID_ARGUMENT',
    })),
    fc.integer({ min: 1001, max: 1100 }).map((n) => ({
      label: 'tools',
      patch: { receipt: { tools: Array.from({ length: n }, (_, i) => `t${i}`) } },
      code: 'INVALID_ARGUMENT',
    })),
    fc.oneof(fc.string(), fc.integer()).map((t) => ({
      label: 'tools shape',
      patch: { receipt: { tools: t } },
      code: 'INVALID_ARGUMENT',
    })),
    fc
      .constantFrom({ noTools: true, tools: ['a'] }, { sources: ['s'] })
      .map((receipt) => ({ label: 'conflict', patch: { receipt }, code: 'RECEIPT_CONFLICT' })),
    fc.constant({
      label: 'corrective reply',
      patch: { corrective: true },
      code: 'INVALID_ARGUMENT',
    }),
  );
  const blocks: fc.Arbitrary<{ blocks: unknown; code: string }> = fc.oneof(
    fc
      .oneof(
        fc.string(),
        fc.integer(),
        fc.constant(null),
        fc.array(fc.oneof(fc.integer(), fc.constant(null)), { minLength: 1, maxLength: 3 }),
      )
      .map((b) => ({ blocks: b, code: 'INVALID_ARGUMENT' })),
    unstorable.map((text) => ({ blocks: [{ type: 'text', text }], code: 'INVALID_ARGUMENT' })),
    fc.oneof(unstorable, longer(2048), fc.constant('a\nb')).map((name) => ({
      blocks: [
        { type: 'tool_use', name },
        { type: 'text', text: 'ok' },
      ],
      code: 'INVALID_ARGUMENT',
    })),
    unstorable.map((url) => ({
      blocks: [{ type: 'text', text: 'ok', citations: [{ url }] }],
      code: 'INVALID_ARGUMENT',
    })),
    badBlockShape.map((content) => ({
      blocks: [
        { type: 'web_search_tool_result', content: [content] },
        { type: 'text', text: 'ok' },
      ],
      code: 'INVALID_ARGUMENT',
    })),
    fc
      .constantFrom([], [{ type: 'text', text: '  ' }])
      .map((b) => ({ blocks: b, code: 'EMPTY_TEXT' })),
  );
  return fc.oneof(
    {
      weight: 4,
      arbitrary: onUser.map((m) => ({
        call: 'add' as const,
        input: { ...user, ...m.patch },
        code: m.code,
      })),
    },
    {
      weight: 3,
      arbitrary: onReply.map((m) => ({
        call: 'add' as const,
        input: { ...reply, ...m.patch },
        code: m.code,
      })),
    },
    {
      weight: 2,
      arbitrary: blocks.map((b) => ({
        call: 'recordResponse' as const,
        input: { sessionId, blocks: b.blocks },
        code: b.code,
      })),
    },
  );
}

/** A proposal item wrong in one way; each must be dropped with INVALID_PROPOSAL. */
export const badItem: fc.Arbitrary<unknown> = fc.oneof(
  fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.string(),
    fc.boolean(),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.bigInt(),
  ),
  badShape.map((extra) => ({ ...GOOD_ITEM, extra })),
  badShape.map((quote) => ({ ...GOOD_ITEM, evidence: { turn: 1, quote, more: quote } })),
  fc
    .oneof(unstorable, longer(2000), fc.constantFrom('', '   '), notString)
    .map((text) => ({ ...GOOD_ITEM, text })),
  fc.oneof(unstorable, longer(64), fc.constant('')).map((slot) => ({ ...GOOD_ITEM, slot })),
  fc.oneof(unstorable, longer(256)).map((key) => ({ ...GOOD_ITEM, key })),
  fc
    .oneof(
      fc.string().filter((s) => !['did', 'saw', 'inferred', 'summarized'].includes(s)),
      notString,
      unstorable,
    )
    .map((origin) => ({ ...GOOD_ITEM, origin })),
  fc
    .tuple(
      fc.constantFrom('validFrom', 'validTo'),
      fc.oneof(
        unstorable,
        fc.constantFrom('garbage', '0000-01-01', '+010000-01-01', '-000001-06-01', '+275760-09-13'),
      ),
    )
    .map(([field, v]) => ({ ...GOOD_ITEM, [field]: v })),
  fc
    .oneof(
      fc.integer({ min: 2 ** 31, max: Number.MAX_SAFE_INTEGER }),
      fc.double({ min: 2 ** 31, noNaN: true }),
      fc.integer({ max: 0 }),
      fc.double({ min: 1.01, max: 1e6, noNaN: true }).filter((n) => !Number.isInteger(n)),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, null, '1', true),
      fc.bigInt({ min: 1n, max: 10n }),
    )
    .map((turn) => ({ ...GOOD_ITEM, evidence: { turn, quote: QUOTE } })),
  fc
    .oneof(fc.string(), fc.integer(), fc.array(fc.string(), { maxLength: 2 }), fc.constant(true))
    .map((evidence) => ({ ...GOOD_ITEM, evidence })),
  fc
    .oneof(unstorable, longer(16_384))
    .map((quote) => ({ ...GOOD_ITEM, evidence: { turn: 1, quote } })),
  fc
    .oneof(unstorable, longer(2048))
    .map((tool) => ({ ...GOOD_ITEM, evidence: { turn: 1, quote: QUOTE, tool } })),
);

/** A retraction wrong in one way, with its code. */
export const badRetraction: fc.Arbitrary<Mutation> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('claim', 'stoodOn', 'whyWrong', 'corrected', 'procedure'),
      fc.oneof(badText(16_384), fc.constantFrom('', '  ', undefined)),
    )
    .map(([field, v]) => ({ label: field, patch: { [field]: v }, code: 'INVALID_ARGUMENT' })),
  fc
    .tuple(fc.constantFrom('passObservation', 'overturnCondition'), badText(16_384))
    .map(([field, v]) => ({ label: field, patch: { [field]: v }, code: 'INVALID_ARGUMENT' })),
  fc
    .constantFrom(
      { passObservation: '' },
      { overturnCondition: '  ' },
      { passObservation: 'the pipeline passes' },
    )
    .map((patch) => ({ label: 'polarity', patch, code: 'POLARITY_NOT_DISTINCT' })),
  // (null means "absent" for caughtBy and dueDays: the default applies)
  mutate(
    'caughtBy',
    'caughtBy',
    fc.oneof(
      fc.string().filter((s) => !['self', 'owner', 'together', 'reality'].includes(s)),
      fc.integer(),
      fc.boolean(),
    ),
  ),
  mutate(
    'dueDays',
    'dueDays',
    fc.oneof(
      fc.integer({ max: -1 }),
      fc.double({ min: 36_500.01, noNaN: true }),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, '3', true),
    ),
  ),
  fc
    .tuple(
      fc.constantFrom('correctedAt', 'claimedAt'),
      fc.oneof(badDate, fc.string(), fc.integer()),
    )
    .map(([field, v]) => ({ label: field, patch: { [field]: v }, code: 'INVALID_ARGUMENT' })),
  fc.integer({ min: 1, max: 36_500 }).map((dueDays) => ({
    label: 'due date',
    patch: { correctedAt: new Date('9999-12-31T12:00:00Z'), dueDays },
    code: 'INVALID_ARGUMENT',
  })),
  mutate(
    'tags',
    'tags',
    fc.oneof(
      fc.string(),
      fc.integer(),
      fc.array(fc.integer(), { minLength: 1, maxLength: 3 }),
      unstorable.map((t) => ['ok', t]),
      longer(16_384).map((t) => [t]),
      fc.integer({ min: 1001, max: 1100 }).map((n) => Array.from({ length: n }, () => 't')),
    ),
  ),
  fc
    .tuple(fc.constantFrom('claimSurface', 'claimRef', 'factId'), badText(16_384))
    .map(([field, v]) => ({ label: field, patch: { [field]: v }, code: 'INVALID_ARGUMENT' })),
  mutate('factId', 'factId', unknownId, 'FACT_NOT_FOUND'),
  mutate(
    'probe',
    'probe',
    fc.oneof(fc.string(), fc.integer(), fc.constant(null), fc.array(fc.string(), { maxLength: 1 })),
  ),
  mutate(
    'probe spec',
    'probe',
    badSpec.map((spec) => ({ spec, standsIf: 'falsified', overturnsIf: 'verified' })),
  ),
  mutate(
    'probe polarity',
    'probe',
    fc
      .constantFrom('verified', 'falsified')
      .map((v) => ({ spec: GOOD_SPECS[0], standsIf: v, overturnsIf: v })),
    'POLARITY_NOT_DISTINCT',
  ),
  mutate(
    'probe verdict',
    'probe',
    fc
      .oneof(
        fc.string().filter((v) => !['verified', 'verified_missing', 'falsified'].includes(v)),
        fc.constant('error'),
      )
      .map((v) => ({ spec: GOOD_SPECS[0], standsIf: v, overturnsIf: 'verified' })),
  ),
);
