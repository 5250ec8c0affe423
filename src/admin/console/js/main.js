// The console's entry point: hash routing between its pages, the live refresh loop, the
// server clock in the header and the theme toggle.

import { admin } from './api.js';
import { fmtClock, fmtDuration } from './dom.js';
import { queuesPage } from './queues.js';
import { queuePage } from './queue.js';
import { toolsPage } from './tools.js';
import { topicsPage } from './topics.js';

const POLL_MS = 1500;
const main = document.getElementById('main');

/** The first page of queues, inlined by the server so the list shows before any fetch. */
let initial = null;
try {
  initial = JSON.parse(document.getElementById('initial-data').textContent).initial;
} catch {
  initial = null;
}

let page = null;

/** '#/queue/orders?state=visible' → { path: ['queue', 'orders'], params }. */
function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, q = ''] = raw.split('?');
  return { path: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(q) };
}

function route() {
  page?.unmount?.();
  main.replaceChildren();
  const { path, params } = parseHash();
  let section = 'queues';
  if (path[0] === 'queue' && path[1]) {
    page = queuePage(main, path[1], params);
  } else if (path[0] === 'topics') {
    section = 'topics';
    page = topicsPage(main);
  } else if (path[0] === 'tools') {
    section = 'tools';
    page = toolsPage(main);
  } else {
    page = queuesPage(main, params, initial);
  }
  initial = null; // only the first render may use the inlined page
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === section) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/** Keeps the header's server clock current. */
async function updateClock() {
  const c = await admin('clock');
  document.getElementById('clock-now').textContent = fmtClock(c.now_ms);
  document.getElementById('clock-now').dateTime = new Date(c.now_ms).toISOString();
  const extra = [];
  if (Math.abs(c.offset_ms) >= 1000) extra.push(`${c.offset_ms > 0 ? '+' : '−'}${fmtDuration(Math.abs(c.offset_ms))}`);
  if (c.frozen) extra.push('frozen');
  document.getElementById('clock-extra').textContent = extra.length ? `· ${extra.join(' · ')}` : '';
  return c;
}

let timer = null;
let ticking = false;

/** One round of live updates; the next is scheduled when this one ends, so they never pile up. */
async function tick() {
  clearTimeout(timer);
  if (ticking) return;
  ticking = true;
  try {
    const [clock] = await Promise.all([updateClock(), page?.refresh?.()]);
    page?.clock?.(clock);
    document.getElementById('offline').hidden = true;
  } catch (e) {
    if (e instanceof TypeError) document.getElementById('offline').hidden = false;
    else console.warn('refresh failed', e);
  } finally {
    ticking = false;
    timer = setTimeout(tick, document.hidden ? POLL_MS * 4 : POLL_MS);
  }
}

/** Runs the next round of updates now rather than at the next poll. */
function refreshSoon() {
  clearTimeout(timer);
  timer = setTimeout(tick, 50);
}
// Pages announce a change they made (`changed()` in dom.js) so the screen follows at once.
document.addEventListener('localsqs:changed', refreshSoon);

// Theme: the system preference, unless the toggle chose one (remembered in localStorage).
const toggle = document.getElementById('theme-toggle');
const dark = matchMedia('(prefers-color-scheme: dark)');
const effective = () => document.documentElement.dataset.theme || (dark.matches ? 'dark' : 'light');
function showTheme() {
  const isDark = effective() === 'dark';
  toggle.classList.toggle('dark', isDark);
  toggle.setAttribute('aria-label', isDark ? 'Switch to light theme' : 'Switch to dark theme');
  toggle.title = toggle.getAttribute('aria-label');
}
toggle.addEventListener('click', () => {
  const next = effective() === 'dark' ? 'light' : 'dark';
  document.documentElement.dataset.theme = next;
  try {
    localStorage.setItem('localsqs-theme', next);
  } catch {
    // Not remembered; still applied.
  }
  showTheme();
});
dark.addEventListener('change', showTheme);
showTheme();

window.addEventListener('hashchange', () => {
  route();
  main.focus({ preventScroll: true });
  refreshSoon();
});
document.addEventListener('visibilitychange', () => { if (!document.hidden) refreshSoon(); });

route();
tick();
