import { csrfField, type Markup, html } from './layout.js';

/** The locked page: the only thing it shows is the form that opens the owner key. */
export function unlockView(input: {
  csrf: string;
  keyProblem: string | null;
  idleMinutes: number;
}): Markup {
  if (input.keyProblem !== null) {
    return html`<section class="card">
      <h2>This page cannot be unlocked</h2>
      <p>${input.keyProblem}</p>
      <p class="meta">
        Start <code>memledger serve</code> with <code>--key F</code> naming the owner key file of
        this store.
      </p>
    </section>`;
  }
  return html`<section class="card">
    <h2>Unlock the review page</h2>
    <p>
      Decisions are signed with the owner key. Its passphrase opens the key in this server's memory
      for ${input.idleMinutes} minute${input.idleMinutes === 1 ? '' : 's'} without a request, or
      until you lock the page; nothing is written to disk.
    </p>
    <form method="post" action="/unlock">
      ${csrfField(input.csrf)}
      <label
        >Owner passphrase
        <input
          type="password"
          name="passphrase"
          id="passphrase"
          autocomplete="current-password"
          required
          autofocus
      /></label>
      <button type="submit" id="unlock">Unlock</button>
    </form>
  </section>`;
}
