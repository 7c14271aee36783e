import type { SubjectHandle } from '../../src/index.js';

export interface ArrivalStory {
  surface: string;
  manifestId: string;
  tools: string[];
  degraded: string[];
  text: string;
  diff: { changed: string[]; toolsAdded: string[] };
}

/**
 * The next morning: the agent arrives on its wake surface. Commitments, a confirmed action and
 * a retraction are already in the store; arrival joins them into the context before the first
 * token, and the manifest lets the next arrival diff what it was given.
 */
export async function runArrivalStory(me: SubjectHandle, sessionId: string): Promise<ArrivalStory> {
  await me.tools.register({ name: 'web_search', surfaces: ['chat', 'wake'] });
  await me.tools.register({ name: 'send_email', surfaces: ['chat'] });
  await me.commitments.add({
    title: 'Send the vendor contract summary to the user',
    due: '2026-12-04',
  });
  await me.commitments.add({ title: 'Ask which contract the user meant' });
  await me.actions.record({
    tool: 'send_email',
    surface: 'chat',
    target: 'weekly digest to the user',
  });
  await me.ledger.retract({
    claim: 'We decided on the vendor contract last week.',
    stoodOn: 'the user asking "what we decided last week"',
    whyWrong: 'no turn in the record discusses a vendor contract before that question',
    corrected: 'There is no record of a decision about a vendor contract.',
    procedure: 'search the turns before the question for "vendor contract"',
    passObservation: 'no earlier turn mentions the vendor contract',
    overturnCondition: 'an earlier turn records a decision about the vendor contract',
    caughtBy: 'together',
  });
  await me.arrival.assemble({ surface: 'wake', sessionId });
  await me.tools.register({
    name: 'check_workers',
    description: 'inspect background workers',
    surfaces: ['wake'],
  });
  const arrival = await me.arrival.assemble({ surface: 'wake', sessionId });
  const diff = await me.arrival.diff({ manifestId: arrival.manifestId });
  return {
    surface: arrival.surface,
    manifestId: arrival.manifestId,
    tools: arrival.tools,
    degraded: arrival.blocks.filter((b) => b.degraded).map((b) => b.name),
    text: arrival.text,
    diff: { changed: diff.blocks.changed, toolsAdded: diff.tools.added },
  };
}

export function renderArrivalStory(s: ArrivalStory): string {
  return [
    `The next wake: the context the agent arrives with, joined before the first token (manifest ${s.manifestId}):`,
    '',
    s.text
      .split('\n')
      .map((l) => `  | ${l}`)
      .join('\n'),
    '',
    `Bound tools on ${s.surface}: ${s.tools.join(', ')}${s.degraded.length > 0 ? `; degraded blocks: ${s.degraded.join(', ')}` : ''}`,
    `Diff against the previous wake: tools added ${s.diff.toolsAdded.join(', ') || 'none'}; blocks changed ${s.diff.changed.join(', ') || 'none'}`,
  ].join('\n');
}
