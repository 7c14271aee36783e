// A writer process for test/heavy/shared-store.test.ts, run with `node` against the compiled
// dist/ (npm run build): opens the embedded store at <dir> shared (through its host, started when
// none runs) and records <count> user turns "<label> <i>" in session <session>, printing one JSON
// line per acknowledged turn ({ ack: "<label> <i>", hostPid }) and one per failure ({ error }).
// A failed turn is tried once more later only as a new turn: what was not acknowledged is never
// counted. Prints { done: true } at the end.
import process from 'node:process';

const [dir, session, label, countText] = process.argv.slice(2);
const count = Number(countText);
const say = (doc) => process.stdout.write(JSON.stringify(doc) + '\n');
const { createEngine } = await import('../../dist/src/index.js');
const { storeClient } = await import('../../dist/src/engine/test-access.js');

// A host killed while this process opens the store fails the open (HOST_LOST): opened again.
let engine;
for (let attempt = 1; engine === undefined; attempt++) {
  try {
    const opened = await createEngine({ db: dir, create: false, shared: { idleSeconds: 5 } });
    try {
      await opened.subject().sessions.create({ id: session });
    } catch (err) {
      if (err?.code !== 'SESSION_EXISTS') {
        await opened.close();
        throw err;
      }
    }
    engine = opened;
  } catch (err) {
    if (attempt === 5 || err?.code !== 'HOST_LOST') throw err;
    say({ error: { code: err.code, message: String(err.message), opening: true } });
  }
}
const me = engine.subject();
for (let i = 0; i < count; i++) {
  const content = `${label} ${i}`;
  try {
    await me.turns.add({ sessionId: session, role: 'user', content });
    say({ ack: content, hostPid: storeClient(engine).hostPid ?? null });
  } catch (err) {
    say({ error: { code: err?.code ?? 'THROWN', message: String(err?.message ?? err) } });
  }
}
await engine.close();
say({ done: true });
