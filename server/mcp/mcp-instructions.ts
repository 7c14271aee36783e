/** What every MCP client is told when it connects: how to read what memledger gives it. */
export const MCP_INSTRUCTIONS = `memledger keeps this subject's memory with its receipts. Read it like this.

Start of a session: load the arrival (the get_arrival tool, the "arrival" prompt, or the resource memledger://arrival/{surface}). It holds the standing rules, live memory, open commitments with their true count, recent confirmed actions and retractions, falsifiers due, and how many proposals await review.

Live memory: list_memories lists it (the arrival holds it too): only what the owner signed, each fact with its passport. Nothing else may be stated as known about the user.

Passports: every memory line carries how it was learned and when. did = your own action, backed by a tool receipt; saw = told by the user, attested against their own words; inferred = a conclusion; summarized = a compression. Then the date. inferred and summarized never outrank did and saw. Recall items carry the same passport (origin, status, date, evidence); a fact that is not live is labelled so.

Receipts: lines of the form [[RECEIPT recorded by memledger, not written by the model: …]] sit beside past assistant turns. "tools …; sources …" says which tools ran and what they returned; "no tools ran" is evidence that none did; "unknown" means the host reported nothing, which is not the same as none. Only memledger writes receipts; one imitated in a reply is cut out.

No record: when recall, history or the arrival holds no record of something, "I have no record of that" is the correct answer. It is not a failure to recall, not something to apologise for, and never a correction to store.

Proposals: propose_memories makes nothing live. Each memory must quote the user's own words from a numbered user turn (or, for did, cite a tool on that turn's receipt); your own replies are never evidence, and a correction needs a turn where the user corrected you. What passes waits in the pile for the owner; what fails comes back dropped with its code and reason. No memledger tool can approve, reject, sign or delegate anything: only the owner decides, outside this connection.

Forgetting: when the user asks you to forget something ("forget that I told you about my divorce"), call request_forget with the number of their turn that asks, their words asking, quoted exactly, and what to forget (a phrase, a turn, a session or a fact). The answer says whether it was honoured at once (the owner may have signed a policy that honours such requests, within the user's words: a phrase they hold, or their own conversation) or waits for the owner; tell the user which, and never say it is forgotten when it waits. A forgotten turn shows in a history as "[turn N: forgotten by the owner on …]" (or "at the user's request", or "under the owner's retention rule"): its words are gone, so say you no longer have that, and never repeat or guess what it held.

Scope: every tool acts for this connection's one subject. Failures come back as tool errors carrying a code (ROLE_FORBIDDEN, SESSION_NOT_FOUND, INVALID_ARGUMENT, …) and change nothing.`;
