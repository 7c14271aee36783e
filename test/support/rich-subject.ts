// A subject with a record of every kind an export holds (docs/EXPORT.md): sessions and turns with
// every kind of receipt, a utility call, proposals approved, rejected, pending and superseded, the
// dropped log, a delegation and a fact live on its receipt, a signed retraction settled by a
// calibrated probe, commitments, actions, tools, an arrival's manifest, a reflection, two
// summaries (the second from the first), the owner's forget and a request honoured under the
// signed policy, tokens (one revoked), and vectors. The engine must have been opened with
// `probes.roots` holding `dir`, an `llm` (the fake) and an `embedder` (the fake).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { FactId, OwnerSigner, SubjectHandle } from '../../src/index.js';

const DAY = 86_400_000;

export interface RichSubject {
  sessions: string[];
  /** Queries whose recall must rank the same on every copy. */
  queries: string[];
}

/** Builds the subject `me` (created, no key yet) with `signer` as its owner. */
export async function buildRichSubject(
  me: SubjectHandle,
  signer: OwnerSigner,
  dir: string,
  advance: (ms: number) => void,
): Promise<RichSubject> {
  await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
  await me.arrival.setTimeZone('Europe/Lisbon');
  await me.tools.register({ name: 'send_email', description: 'Sends mail', surfaces: ['chat'] });
  await me.tools.register({ name: 'web_search', surfaces: ['chat', 'wake'] });

  const a = (await me.sessions.create({ title: 'Moving house' })).id;
  const say = (sessionId: string, content: string, speaker?: string) =>
    me.turns.add({
      sessionId,
      role: 'user',
      content,
      ...(speaker === undefined ? {} : { speaker }),
    });
  await say(
    a,
    'I live in Lisbon and I work night shifts as a nurse. My sister is called Ana.',
    'Carol',
  );
  await me.turns.add({
    sessionId: a,
    role: 'assistant',
    content: 'I searched for removal firms and emailed the rota to the ward.',
    receipt: {
      tools: ['web_search', 'send_email'],
      sources: ['https://example.org/removals', 'msg-1'],
    },
  });
  await say(a, 'Actually I am moving to Porto next month.');
  await me.turns.add({
    sessionId: a,
    role: 'assistant',
    content: 'Noted: Porto from next month.',
    receipt: { noTools: true },
  });
  await me.turns.add({
    sessionId: a,
    role: 'assistant',
    content: 'A reply with no receipt at all.',
  });
  await me.turns.add({
    sessionId: a,
    role: 'user',
    content: 'Generate a short title for this conversation.',
    utility: true,
  });
  await me.turns.add({
    sessionId: a,
    role: 'user',
    content: 'No, I said Porto, not Braga.',
    corrective: true,
  });
  await say(a, 'My old locker code was 4471 and I would rather you did not keep it.');

  await me.slots.declare({ name: 'emails', rule: 'action' });
  await me.owner.delegate({
    slot: 'emails',
    tools: ['send_email'],
    template: 'Emailed the {} to the {}.',
    signer,
  });
  const r = await me.gate.propose({
    sessionId: a,
    proposals: [
      {
        slot: 'what_i_know_about_user',
        key: 'city',
        text: 'The user lives in Lisbon.',
        origin: 'saw',
        evidence: { turn: 1, quote: 'I live in Lisbon' },
      },
      {
        slot: 'what_i_know_about_user',
        key: 'job',
        text: 'The user works night shifts as a nurse.',
        origin: 'saw',
        evidence: { turn: 1, quote: 'I work night shifts as a nurse' },
      },
      {
        slot: 'what_i_know_about_user',
        key: 'sister',
        text: "The user's sister is called Ana.",
        origin: 'saw',
        evidence: { turn: 1, quote: 'My sister is called Ana' },
      },
      {
        slot: 'what_i_know_about_user',
        text: 'The user has a dog.',
        origin: 'saw',
        evidence: { turn: 1, quote: 'I have a dog' },
      },
      {
        slot: 'emails',
        text: 'Emailed the rota to the ward.',
        origin: 'did',
        evidence: { turn: 2, tool: 'send_email' },
      },
    ],
  });
  expect(r.dropped.map((d) => d.code)).toEqual(['QUOTE_NOT_FOUND']);
  expect(r.proposed).toHaveLength(4);
  const [city, job, sister] = r.proposed.map((p) => p.id) as [FactId, FactId, FactId];
  await me.owner.decide({ proposalId: city, decision: 'approve', signer });
  await me.owner.decide({ proposalId: job, decision: 'approve', signer });
  await me.owner.decide({ proposalId: sister, decision: 'reject', note: 'not now', signer });
  // Porto supersedes Lisbon
  const moved = await me.gate.propose({
    sessionId: a,
    proposals: [
      {
        slot: 'what_i_know_about_user',
        key: 'city',
        text: 'The user is moving to Porto next month.',
        origin: 'saw',
        evidence: { turn: 3, quote: 'I am moving to Porto next month' },
      },
    ],
  });
  await me.owner.decide({
    proposalId: moved.proposed[0]!.id,
    decision: 'approve',
    supersede: true,
    signer,
  });
  // a pending one stays in the pile
  const b = (await me.sessions.create({ id: 'garden' })).id;
  await say(b, 'I grow tomatoes and basil on my balcony.');
  await me.gate.propose({
    sessionId: b,
    proposals: [
      {
        slot: 'what_i_know_about_user',
        text: 'The user grows tomatoes and basil on a balcony.',
        origin: 'saw',
        evidence: { turn: 1, quote: 'I grow tomatoes and basil on my balcony' },
      },
    ],
  });

  // a signed retraction of the job, settled by a calibrated probe once due
  writeFileSync(join(dir, 'rota.txt'), 'night shifts\n');
  const retraction = await me.ledger.retract({
    claim: 'The user works night shifts as a nurse.',
    stoodOn: 'what the user said in March',
    whyWrong: 'the user moved to day shifts',
    corrected: 'The user works day shifts.',
    procedure: 'read the rota file',
    passObservation: 'the rota file exists',
    overturnCondition: 'the rota file is gone',
    caughtBy: 'owner',
    factId: job,
    signer,
    probe: {
      spec: { kind: 'file', path: 'rota.txt', mode: 'exists' },
      standsIf: 'verified',
      overturnsIf: 'falsified',
    },
  });
  advance(4 * DAY);
  await me.probes.calibrate({ instrument: 'file' });
  await me.ledger.settle({ retractionId: retraction.id, runProbe: true });

  const due = await me.commitments.add({ title: 'Book the removal van', due: '2027-01-10' });
  await me.commitments.add({ title: 'Send the new address to the ward' });
  await me.commitments.done(due.id);
  await me.actions.record({
    tool: 'send_email',
    surface: 'chat',
    target: 'the ward',
    status: 'confirmed',
  });
  await me.arrival.assemble({ surface: 'chat', sessionId: a, message: 'Where do I live now?' });

  await me.reflection.reflect({ sessionId: b });
  await me.slots.declare({ name: 'life_lately', rule: 'summary' });
  const first = await me.summaries.summarize({ aspect: 'life_lately', sessionId: a });
  if (first.factId !== null) {
    await me.owner.decide({ proposalId: first.factId as FactId, decision: 'approve', signer });
  }
  await say(b, 'The basil died but the tomatoes are doing well.');
  await me.summaries.summarize({ aspect: 'life_lately', sessionId: b });

  // the owner forgets a turn; the user's own request is honoured under the signed policy
  await me.owner.forget({ scope: { kind: 'turn', session: a, seq: 5 }, signer });
  await me.owner.setForgetPolicy({ honourRequests: true, signer });
  const asked = await say(a, 'Please forget my old locker code.');
  if (!asked.recorded) throw new Error('not recorded');
  const request = await me.gate.requestForget({
    sessionId: a,
    turn: asked.turn.seq,
    quote: 'Please forget my old locker code',
    scope: { kind: 'phrase', phrase: 'old locker code' },
  });
  expect(request.status).toBe('honoured');

  await me.owner.createToken({ role: 'agent', name: 'laptop', signer });
  const old = await me.owner.createToken({ role: 'reader', name: 'old phone', signer });
  await me.owner.revokeToken({ id: old.info.id, signer });

  const embedded = await me.vectors.embedPending();
  expect(embedded.turns).toBeGreaterThan(0);
  return {
    sessions: [a, b],
    queries: [
      'Where does the user live?',
      'tomatoes basil balcony',
      'night shifts nurse',
      'removal van',
    ],
  };
}
