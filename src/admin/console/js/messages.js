// A queue's messages, a page at a time, peeked without changing visibility or receive counts:
// state and time left, body (pretty when JSON), attributes, FIFO ids (the group in a column);
// search by body and attribute on the server; delete one; select some to delete or move.

import { h, fill, fmtInt, fmtTime, fmtDuration, toast, field, confirmDialog, changed } from './dom.js';
import { admin, query } from './api.js';
import { deleteDialog, moveDialog } from './bulk.js';

const PAGE = 50;
const STATES = [['all', 'All'], ['visible', 'Visible'], ['in_flight', 'In flight'], ['delayed', 'Delayed']];
const LABEL = { visible: 'Visible', in_flight: 'In flight', delayed: 'Delayed' };
const STAMPS = ['SentTimestamp', 'ApproximateFirstReceiveTimestamp'];
/** System attributes shown with the message's ids rather than in the attribute table. */
const SHOWN_ABOVE = ['MessageGroupId', 'MessageDeduplicationId', 'SequenceNumber'];

export function messagesView({ name, fifo, params }) {
  let state = STATES.some(([s]) => s === params.get('state')) ? params.get('state') : 'all';
  let pageNo = Math.max(1, Math.floor(Number(params.get('page'))) || 1);
  let data = null;
  let lastKey = '';
  let lastLoad = 0;
  let lastCost = 0;
  let serverNow = null;
  let latest = 0;
  const items = new Map();
  /** Ids of the messages ticked, across pages and searches, until acted on or cleared. */
  const selected = new Set();
  const path = `queues/${encodeURIComponent(name)}/messages`;
  // The queue's region and account, when the page names them, go with every request.
  const scope = {};
  for (const k of ['region', 'account']) if (params.get(k)) scope[k] = params.get(k);
  // A search (by body and by attribute) runs on the server, a bounded number of messages per
  // request; `cursors` holds where each step started, so Back returns to the previous one.
  let search = searchOf(params);
  let cursors = [0];

  const radios = {};
  const segmented = h('div', { class: 'segmented', role: 'radiogroup', 'aria-label': 'Show messages' },
    STATES.map(([s, label]) => {
      radios[s] = h('span', { class: 'n' });
      return h('label', {},
        h('input', { type: 'radio', name: 'state-filter', value: s, checked: s === state, onchange: () => choose(s) }),
        label, ' ', radios[s]);
    }));
  const list = h('ul', { class: fifo ? 'messages fifo' : 'messages', 'aria-label': `Messages of ${name}` });
  const empty = h('div', { class: 'empty', hidden: true });
  const where = h('span', { class: 'where', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', onclick: () => back() }, '← Previous');
  const next = h('button', { type: 'button', onclick: () => forward() }, 'Next →');
  const searchForm = h('form', {
    class: 'form-inline search-form', role: 'search', 'aria-label': 'Search messages',
    onsubmit: (e) => { e.preventDefault(); find(); },
  },
  field('Body contains', h('input', { name: 'body', type: 'search', value: search.body, autocomplete: 'off', spellcheck: 'false' })),
  field('Attribute', h('input', { name: 'attribute', value: search.attribute, autocomplete: 'off', spellcheck: 'false', placeholder: 'name' })),
  field('Value', h('input', { name: 'value', value: search.value, autocomplete: 'off', spellcheck: 'false', placeholder: 'any' })),
  h('button', { type: 'submit' }, 'Search'),
  h('button', { type: 'button', onclick: () => clearSearch() }, 'Clear'));
  const pickPage = h('input', {
    type: 'checkbox', 'aria-label': 'Select every message on this page',
    onchange: (e) => selectPage(e.currentTarget.checked),
  });
  const count = h('span', { class: 'muted selected-count', 'aria-live': 'polite' });
  const delSelected = h('button', { type: 'button', class: 'small danger', onclick: () => removeSelected() }, 'Delete selected');
  const moveSelected = h('button', { type: 'button', class: 'small', onclick: () => moveSelection() }, 'Move selected…');
  const clearSelected = h('button', { type: 'button', class: 'small link', onclick: () => { selected.clear(); showSelection(); } }, 'Clear selection');
  const el = h('section', { class: 'card flush messages-card', 'aria-labelledby': 'msg-title' },
    h('div', { class: 'toolbar pad' },
      h('h2', { id: 'msg-title' }, 'Messages'), segmented,
      h('span', { class: 'muted grow' }, 'Peeked: visibility and receive counts stay as they are.'),
      h('button', { type: 'button', class: 'small', onclick: () => load() }, 'Reload')),
    h('div', { class: 'search-bar' }, searchForm),
    h('div', { class: 'bulk-bar' }, h('label', { class: 'field inline' }, pickPage, 'This page'),
      count, delSelected, moveSelected, clearSelected),
    list, empty,
    h('nav', { class: 'pager', 'aria-label': 'Pages of messages' }, where, prev, next));

  function choose(s) {
    state = s;
    pageNo = 1;
    cursors = [0];
    remember();
    load();
  }

  function back() {
    if (searching()) cursors.pop();
    else pageNo = Math.max(1, pageNo - 1);
    remember();
    load();
  }

  function forward() {
    if (searching()) {
      if (data?.search?.next == null) return;
      cursors.push(data.search.next);
    } else {
      pageNo += 1;
    }
    remember();
    load();
  }

  function go(n) {
    pageNo = Math.max(1, n);
    remember();
    load();
  }

  const searching = () => Boolean(search.body || search.attribute || search.value);

  function find() {
    search = {
      body: searchForm.elements.namedItem('body').value,
      attribute: searchForm.elements.namedItem('attribute').value.trim(),
      value: searchForm.elements.namedItem('value').value,
    };
    cursors = [0];
    pageNo = 1;
    remember();
    load();
  }

  function clearSearch() {
    searchForm.reset();
    for (const k of ['body', 'attribute', 'value']) searchForm.elements.namedItem(k).value = '';
    find();
  }

  function remember() {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(scope)) q.set(k, v);
    if (state !== 'all') q.set('state', state);
    if (pageNo > 1 && !searching()) q.set('page', String(pageNo));
    for (const [k, v] of Object.entries(search)) if (v) q.set(k, v);
    const s = q.toString();
    history.replaceState(null, '', `#/queue/${encodeURIComponent(name)}${s ? `?${s}` : ''}`);
  }

  async function load() {
    const seq = ++latest;
    const started = performance.now();
    const ask = searching()
      ? { ...scope, state, ...search, from: cursors[cursors.length - 1], limit: PAGE }
      : { ...scope, state, offset: (pageNo - 1) * PAGE, limit: PAGE };
    const d = await admin(`${path}${query(ask)}`);
    if (seq !== latest) return;
    lastLoad = Date.now();
    lastCost = performance.now() - started;
    const pages = Math.max(1, Math.ceil(d.total / PAGE));
    if (!d.search && pageNo > pages) {
      go(pages);
      return;
    }
    data = d;
    serverNow = d.now_ms;
    render();
  }

  /**
   * Called every poll with the queue's counts: reloads when they changed, or now and then.
   * A page costs the server a look at the whole queue (about 0.2 s per 100,000 messages), so
   * automatic reloads keep to at most one per ten times the last load took. A search reloads
   * only when asked (or after a change made here): each step looks at up to 10,000 messages.
   */
  async function refresh(counts, force = false) {
    if (counts) {
      radios.all.textContent = fmtInt(counts.visible + counts.in_flight + counts.delayed);
      for (const s of ['visible', 'in_flight', 'delayed']) radios[s].textContent = fmtInt(counts[s]);
    }
    const key = counts ? `${counts.visible}/${counts.in_flight}/${counts.delayed}` : lastKey;
    const timers = data?.messages.some((m) => m.state !== 'visible');
    const since = Date.now() - lastLoad;
    const stale = since > (timers ? 5000 : 15000);
    const allowed = since > lastCost * 10 && !searching();
    if (force || !data || ((key !== lastKey || stale) && allowed)) {
      lastKey = key;
      await load();
    } else {
      tickPills();
    }
  }

  function render() {
    const seen = new Set();
    data.messages.forEach((m, i) => {
      const version = `${m.state}/${m.receive_count}/${m.body_bytes}`;
      let item = items.get(m.id);
      if (!item || item.version !== version) {
        const open = item?.details.open;
        const node = item?.li;
        item = makeItem(m, version);
        item.details.open = Boolean(open);
        if (node) node.replaceWith(item.li);
        items.set(m.id, item);
      }
      item.m = m;
      item.pick.checked = selected.has(m.id);
      seen.add(m.id);
      if (list.children[i] !== item.li) list.insertBefore(item.li, list.children[i] || null);
    });
    for (const [id, item] of items) {
      if (!seen.has(id)) { item.li.remove(); items.delete(id); }
    }
    tickPills();
    showSelection();
    if (data.search) {
      renderSearch();
      return;
    }
    empty.hidden = data.total > 0;
    fill(empty, state === 'all' ? 'No messages in this queue.' : `No ${LABEL[state].toLowerCase()} messages.`);
    const pages = Math.max(1, Math.ceil(data.total / PAGE));
    const from = data.total ? data.offset + 1 : 0;
    where.textContent = `${fmtInt(from)}–${fmtInt(data.offset + data.messages.length)} of ${fmtInt(data.total)} · page ${fmtInt(pageNo)} of ${fmtInt(pages)}`;
    prev.textContent = '← Previous';
    next.textContent = 'Next →';
    prev.disabled = pageNo <= 1;
    next.disabled = pageNo >= pages;
  }

  /** The pager of a search: what this step found and looked at, and whether it goes on. */
  function renderSearch() {
    const s = data.search;
    const n = data.messages.length;
    empty.hidden = n > 0;
    fill(empty, s.complete ? 'No message here matches the search.' : 'No match yet: search further to look at more of the queue.');
    const matches = `${fmtInt(n)} ${n === 1 ? 'match' : 'matches'}`;
    const looked = `looked at ${fmtInt(s.scanned)} of ${fmtInt(data.total)} messages`;
    const step = cursors.length > 1 ? ` (step ${fmtInt(cursors.length)})` : '';
    const tail = s.complete ? ', to the end of the queue' : `; at most ${fmtInt(s.scan_limit)} per search`;
    where.textContent = `${matches} · ${looked}${step}${tail}`;
    prev.textContent = '← Back';
    next.textContent = 'Search further →';
    prev.disabled = cursors.length <= 1;
    next.disabled = s.next == null;
  }

  /** Updates the time left of in-flight and delayed messages from the server's clock. */
  function tickPills() {
    if (!data) return;
    const passed = serverNow == null ? 0 : serverNow - data.now_ms;
    for (const item of items.values()) {
      const m = item.m;
      let text = LABEL[m.state];
      if (m.time_left_ms != null) {
        const left = m.time_left_ms - passed;
        text += left > 0 ? ` · ${data.time_left_exact ? '' : '≈ '}${fmtDuration(left)}` : ' · due';
      }
      if (item.pill.textContent !== text) item.pill.textContent = text;
    }
  }

  function showSelection() {
    const n = selected.size;
    count.textContent = n ? `${fmtInt(n)} selected` : 'None selected';
    delSelected.disabled = moveSelected.disabled = !n;
    clearSelected.hidden = !n;
    const onPage = [...items.values()];
    pickPage.checked = onPage.length > 0 && onPage.every((i) => selected.has(i.m.id));
  }

  function selectPage(on) {
    for (const item of items.values()) {
      if (on) selected.add(item.m.id); else selected.delete(item.m.id);
      item.pick.checked = on;
    }
    showSelection();
  }

  function makeItem(m, version) {
    const pill = h('span', { class: `pill ${m.state}` }, LABEL[m.state]);
    const details = h('details', { class: 'msg', dataset: { id: m.id, state: m.state } },
      h('summary', {},
        h('span', { class: 'id', title: m.id }, m.id),
        h('span', {}, pill),
        fifo ? h('span', { class: 'group', title: 'Message group id' }, m.group_id ?? '—') : null,
        h('span', { class: 'sent', title: `Sent ${fmtTime(m.sent_ms)}` }, fmtSent(m.sent_ms, data.now_ms)),
        h('span', { class: 'recv', title: 'Approximate receive count' }, `${fmtInt(m.receive_count)} recv`),
        h('span', { class: 'preview' }, preview(m))),
      detail(m));
    const pick = h('input', {
      type: 'checkbox', class: 'pick', 'aria-label': `Select message ${m.id}`,
      onchange: (e) => {
        if (e.currentTarget.checked) selected.add(m.id); else selected.delete(m.id);
        showSelection();
      },
    });
    return { li: h('li', {}, pick, details), details, pill, pick, version, m };
  }

  function detail(m) {
    const json = parseJson(m);
    const pre = h('pre', { class: 'body', tabindex: 0, 'aria-label': 'Message body' }, json ? JSON.stringify(json, null, 2) : m.body);
    const more = m.body_truncated
      ? h('button', {
        type: 'button', class: 'small',
        onclick: async (e) => {
          const d = await admin(`${path}${query({ ...scope, id: m.id })}`);
          if (d.messages[0]) pre.textContent = d.messages[0].body;
          e.currentTarget.remove();
        },
      }, `Show the whole body (${fmtInt(m.body_bytes)} bytes)`)
      : null;
    const ids = [['Message id', m.id], ['MD5 of body', m.md5_of_body]];
    if (m.group_id) ids.push(['Group id', m.group_id]);
    if (m.dedup_id) ids.push(['Deduplication id', m.dedup_id]);
    if (m.sequence_number) ids.push(['Sequence number', m.sequence_number]);
    const userAttrs = Object.entries(m.message_attributes);
    return h('div', { class: 'detail' },
      h('div', {},
        h('h3', {}, json ? 'Body (JSON)' : 'Body', h('span', { class: 'muted' }, ` · ${fmtInt(m.body_bytes)} bytes`)),
        pre, more),
      h('div', {},
        h('h3', {}, fifo ? 'Message (FIFO)' : 'Message'), kv(ids),
        h('h3', {}, 'Message attributes'),
        userAttrs.length
          ? kv(userAttrs.map(([k, a]) => [k, `${a.string_value ?? a.binary_value ?? ''}`, a.data_type]))
          : h('p', { class: 'muted' }, 'None.'),
        h('h3', {}, 'System attributes'),
        kv(Object.entries(m.attributes).filter(([k]) => !SHOWN_ABOVE.includes(k))
          .map(([k, v]) => [k, STAMPS.includes(k) ? `${fmtTime(Number(v))} (${v})` : v])),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'small danger', onclick: () => remove(m) }, 'Delete message'))));
  }

  function remove(m) {
    return confirmDialog('Delete this message?', `Deletes message ${m.id} from ${name} without receiving it.`, 'Delete message', async () => {
      await admin(`${path}/${encodeURIComponent(m.id)}${query(scope)}`, { method: 'DELETE' });
      selected.delete(m.id);
      toast('Deleted the message');
      changed();
      await load();
    });
  }

  async function afterBulk() {
    selected.clear();
    changed();
    await load();
  }

  function removeSelected() {
    return deleteDialog({ name, path, scope, ids: [...selected], done: afterBulk });
  }

  function moveSelection() {
    return moveDialog({ name, path, scope, ids: [...selected], done: afterBulk });
  }

  showSelection();

  return {
    el,
    refresh,
    clock: (c) => { serverNow = c.now_ms; tickPills(); },
    unmount: () => { latest += 1; },
  };
}

/** The search a page's address names (#/queue/q?body=…&attribute=…&value=…). */
function searchOf(params) {
  return { body: params.get('body') || '', attribute: params.get('attribute') || '', value: params.get('value') || '' };
}

/** The send time: the time of day when it was today (server time), else the date too. */
function fmtSent(ms, now) {
  const full = fmtTime(ms);
  return full.slice(0, 10) === fmtTime(now).slice(0, 10) ? full.slice(11) : full.slice(0, 16);
}

function parseJson(m) {
  if (m.body_truncated || !/^\s*[[{]/.test(m.body)) return null;
  try { return JSON.parse(m.body); } catch { return null; }
}

function preview(m) {
  const text = m.body.slice(0, 240).replace(/\s+/g, ' ').trim();
  return text || '(empty)';
}

function kv(rows) {
  return h('table', { class: 'kv' }, h('tbody', {}, rows.map(([k, v, type]) => h('tr', {},
    h('td', {}, k, type ? h('span', { class: 'muted' }, ` (${type})`) : null),
    h('td', { class: 'mono' }, v)))));
}
