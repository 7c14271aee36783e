import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** A file the page loads, served by the server itself (no CDN), with a content hash for caching. */
export interface Asset {
  readonly body: string;
  readonly type: string;
  readonly etag: string;
}

function asset(body: string, type: string): Asset {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, type, etag };
}

let htmxAsset: Asset | undefined;

/** htmx, from the npm package the server depends on. */
export function htmx(): Asset {
  htmxAsset ??= asset(
    readFileSync(createRequire(import.meta.url).resolve('htmx.org/dist/htmx.min.js'), 'utf8'),
    'text/javascript; charset=utf-8',
  );
  return htmxAsset;
}

const CSS = `
:root { color-scheme: light dark; --fg: #1b1b1f; --bg: #fbfbfd; --muted: #5d5d6b; --line: #d6d6de;
  --card: #ffffff; --warn: #8a1c00; --warn-bg: #fff0ea; --ok: #0c5d2a; --ok-bg: #e9f8ee; --mark: #ffe58a; }
@media (prefers-color-scheme: dark) { :root { --fg: #ececf1; --bg: #16161b; --muted: #a3a3b3;
  --line: #3a3a46; --card: #1f1f27; --warn: #ffb59e; --warn-bg: #3b1d14; --ok: #a5e8bb; --ok-bg: #16301f; --mark: #6b5a10; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, sans-serif; color: var(--fg); background: var(--bg); }
header.top { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; padding: .6rem 1rem;
  border-bottom: 1px solid var(--line); background: var(--card); }
header.top h1 { font-size: 1.05rem; margin: 0; }
nav a { margin-right: .8rem; color: inherit; }
nav a[aria-current="page"] { font-weight: 700; text-decoration: none; }
.badge { display: inline-block; min-width: 1.6em; padding: 0 .45em; border-radius: 1em; text-align: center;
  background: var(--line); font-weight: 700; }
.badge.nonempty { background: var(--warn); color: var(--bg); }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
.flash { padding: .5rem .8rem; border-radius: .4rem; margin: 0 0 1rem; }
.flash.ok { background: var(--ok-bg); color: var(--ok); }
.flash.error { background: var(--warn-bg); color: var(--warn); }
article, section.card { background: var(--card); border: 1px solid var(--line); border-radius: .5rem;
  padding: .8rem 1rem; margin: 0 0 1rem; }
article:focus-within { outline: 2px solid var(--muted); }
.meta { color: var(--muted); font-size: .88rem; }
.claim { font-size: 1.05rem; margin: .4rem 0; overflow-wrap: anywhere; }
.unattested { background: var(--warn-bg); color: var(--warn); font-weight: 700; padding: .3rem .6rem; border-radius: .3rem; }
ol.turns { list-style: none; padding: 0; margin: .4rem 0; }
ol.turns li { padding: .3rem .6rem; border-left: 3px solid var(--line); margin: .2rem 0; overflow-wrap: anywhere; }
.said { white-space: pre-wrap; unicode-bidi: isolate; }
.claim, td, dd { unicode-bidi: plaintext; }
.meta strong, .meta code { unicode-bidi: isolate; }
ol.turns li.cited { border-left-color: var(--fg); }
ol.turns li.context { color: var(--muted); }
mark { background: var(--mark); color: inherit; }
form.inline { display: inline-flex; gap: .4rem; align-items: center; margin: .3rem .6rem .3rem 0; }
input[type=text], input[type=password], select { font: inherit; padding: .25rem .4rem; }
button { font: inherit; padding: .25rem .8rem; cursor: pointer; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; overflow-wrap: anywhere; }
.pager { display: flex; gap: 1rem; margin: 1rem 0; }
.lineage { margin: .3rem 0 0 1rem; color: var(--muted); font-size: .9rem; }
.chart text { font-size: 10px; fill: var(--muted); }
code { font-size: .9em; }
td code { overflow-wrap: normal; white-space: nowrap; }
.state-ok { color: var(--ok); font-weight: 700; }
.state-bad { color: var(--warn); font-weight: 700; }
textarea { font: inherit; width: 100%; padding: .3rem .4rem; }
label.words { display: block; width: 100%; }
details.edit, details.correct { margin: .3rem 0; }
details > summary { cursor: pointer; color: var(--muted); }
form.edit, form.correct, form.remember, form.forget { display: flex; flex-direction: column; gap: .4rem;
  align-items: flex-start; margin: .4rem 0; }
.fact-actions { display: flex; flex-wrap: wrap; gap: .2rem 1rem; align-items: baseline; margin-top: .3rem; }
dl.edit-outcome dt { font-weight: 700; }
dl.edit-outcome dd { margin: 0 0 .3rem 1rem; overflow-wrap: anywhere; unicode-bidi: plaintext; }
ol.turns li.forgotten { color: var(--muted); font-style: italic; }
ol.turns li .receipt, ol.turns li a { display: block; }
.forget-plan .plan-line strong { font-size: 1.05rem; }
`;

let cssAsset: Asset | undefined;

/** The page's one stylesheet. */
export function stylesheet(): Asset {
  cssAsset ??= asset(CSS, 'text/css; charset=utf-8');
  return cssAsset;
}
