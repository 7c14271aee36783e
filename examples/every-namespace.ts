// Every namespace of a subject handle, once, on an in-memory store. `test/heavy/package.test.ts`
// installs the packed package into an empty directory, type-checks this file against it and
// runs it; it prints one JSON line that the test reads.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  anthropicSystem,
  createEngine,
  EngineError,
  generateOwnerKey,
  loadOwnerKey,
  writeOwnerKeyFile,
  type Embedder,
  type SubjectHandle,
} from 'memledger';
import { isAttestedBy, RECEIPT_PREFIX, stripImitatedReceipts } from 'memledger/rules';

// A host's own embedder: a bag of letters, enough to show the call (use openAiEmbedder or
// localEmbedder for real vectors).
const letters: Embedder = {
  model: 'letters-26',
  async embed(texts) {
    return texts.map((text) => {
      const v = new Array<number>(26).fill(0);
      for (const ch of text.toLowerCase()) {
        const i = ch.charCodeAt(0) - 97;
        if (i >= 0 && i < 26) v[i] = (v[i] ?? 0) + 1;
      }
      v[0] = (v[0] ?? 0) + 1; // never the zero vector
      return v;
    });
  },
};

async function main(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(join(tmpdir(), 'memledger-example-'));
  writeFileSync(join(dir, 'deploy.log'), 'deploy ok\n');
  const keyFile = join(dir, 'owner.key');
  writeOwnerKeyFile(keyFile, generateOwnerKey('correct horse').keyFile);
  const signer = loadOwnerKey(keyFile, 'correct horse');

  const engine = await createEngine({
    db: 'memory://',
    embedder: letters,
    probes: { roots: [dir] },
    arrival: { identity: 'You are a careful assistant.', timeZone: 'UTC' },
  });
  try {
    await engine.subjects.create('alice');
    const me: SubjectHandle = engine.subject('alice');

    // owner, slots
    await me.owner.setKey({ keyId: signer.keyId, publicKeyPem: signer.publicKeyPem });
    await me.slots.declare({ name: 'travel', rule: 'user_fact' });

    // sessions, turns, history
    const session = await me.sessions.create({ title: 'Planning' });
    await me.turns.add({
      sessionId: session.id,
      role: 'user',
      content: 'I am allergic to peanuts, and I fly to Lisbon on Friday.',
    });
    await me.turns.recordResponse({
      sessionId: session.id,
      blocks: [{ type: 'text', text: 'Noted, no peanuts. Safe travels to Lisbon.' }],
    });
    const transcript = await me.history.render(session.id);

    // gate, owner, facts
    const { proposed, dropped } = await me.gate.propose({
      sessionId: session.id,
      proposals: [
        {
          slot: 'what_i_know_about_user',
          text: 'The user is allergic to peanuts.',
          origin: 'saw',
          evidence: { turn: 1, quote: 'I am allergic to peanuts' },
        },
        {
          slot: 'travel',
          text: 'The user flies to Oslo on Friday.',
          origin: 'saw',
          evidence: { turn: 2, quote: 'Safe travels to Lisbon' },
        },
      ],
    });
    const pile = await me.gate.pile();
    await me.owner.decide({ proposalId: proposed[0]!.id, decision: 'approve', signer });
    const chain = await me.owner.verifyChain();
    const live = await me.facts.live();
    const fact = await me.facts.get(proposed[0]!.id);

    // tools, commitments, actions, arrival
    await me.tools.register({ name: 'search', surfaces: ['chat'] });
    const commitment = await me.commitments.add({ title: 'Send the packing list' });
    await me.actions.record({ tool: 'search', surface: 'chat', target: 'Lisbon weather' });
    const arrival = await me.arrival.assemble({ surface: 'chat', sessionId: session.id });
    const system = anthropicSystem(arrival.blocks);

    // probes, ledger
    const calibration = await me.probes.calibrate({ instrument: 'file' });
    const probe = await me.probes.run({
      kind: 'file',
      path: 'deploy.log',
      mode: 'contains',
      needle: 'deploy ok',
    });
    const retraction = await me.ledger.retract({
      claim: 'The deploy failed.',
      stoodOn: 'an old log line',
      whyWrong: 'the log says the deploy went through',
      corrected: 'The deploy succeeded.',
      procedure: 'Read deploy.log',
      passObservation: 'deploy.log contains "deploy ok"',
      overturnCondition: 'deploy.log lacks "deploy ok"',
      dueDays: 0,
      probe: {
        spec: { kind: 'file', path: 'deploy.log', mode: 'contains', needle: 'deploy ok' },
        standsIf: 'verified',
        overturnsIf: 'falsified',
      },
    });
    const settled = await me.ledger.settle({ retractionId: retraction.id, runProbe: true });

    // vectors, recall
    const embedded = await me.vectors.embedPending();
    const recalled = await me.recall.search('peanuts allergy');

    // reflection and summaries: writing needs a model (EngineConfig.llm); reading their runs does not
    const reflections = await me.reflection.list();
    await me.slots.declare({ name: 'life_lately', rule: 'summary', scope: 'rolling' });
    const summaries = await me.summaries.list({ aspect: 'life_lately' });

    // tokens for the servers: made with the owner key, shown once, checked on every use
    const { token } = await me.owner.createToken({ role: 'reader', signer });
    const caller = await engine.tokens.authenticate(token);

    // Errors are EngineErrors with a code.
    let unknownSubject = '';
    try {
      await engine.subject('nobody').facts.live();
    } catch (err) {
      if (err instanceof EngineError) unknownSubject = err.code;
    }

    return {
      transcriptHasReceipt: transcript.includes('RECEIPT'),
      proposed: proposed.length,
      dropped: dropped.map((d) => d.code),
      pile: pile.length,
      chainOk: chain.ok,
      live: live.map((f) => f.text),
      factStatus: fact.status,
      commitment: commitment.status,
      arrivalHasFact: arrival.text.includes('allergic to peanuts'),
      systemBlocks: system.length,
      calibrated: calibration.every((c) => c.passed),
      probe: probe.verdict,
      settled: settled.verdict,
      embedded: embedded.turns + embedded.facts > 0,
      recalledFirst: recalled[0]?.passport.origin ?? null,
      unknownSubject,
      tokenRole: caller.role,
      runs: reflections.length + summaries.length,
      rules: {
        attested: isAttestedBy('allergic to peanuts', 'I am allergic to peanuts.'),
        stripped: stripImitatedReceipts(`Done.\n${RECEIPT_PREFIX} no tools ran]]`).removed,
      },
    };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(JSON.stringify(await main()));
