// The queues page: every queue, a page at a time, with live counts, badges and sparklines (and
// region and account columns when the server holds queues in several); filter by name; create
// and delete queues.

import { h, fill, fmtInt, toast, field, openDialog, confirmDialog, val, changed } from './dom.js';
import { sqs, admin, query, arnOf } from './api.js';
import { sample, samples, sparkline, forget } from './spark.js';

const PAGE = 50;
const COUNTS = ['visible', 'in_flight', 'delayed'];

export function queuesPage(main, params, initial) {
  document.title = 'Queues · localsqs';
  let filter = params.get('filter') || '';
  let pageNo = Math.max(1, Math.floor(Number(params.get('page'))) || 1);
  let latest = 0;
  let debounce = null;
  const rows = new Map();

  const summary = h('span', { class: 'summary', id: 'queue-summary' });
  const search = h('input', {
    type: 'search', name: 'filter', value: filter, placeholder: 'Filter by name',
    'aria-label': 'Filter queues by name', autocomplete: 'off', spellcheck: 'false',
  });
  const tbody = h('tbody');
  const empty = h('div', { class: 'empty', hidden: true });
  const where = h('span', { class: 'where', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', onclick: () => go(pageNo - 1) }, '← Previous');
  const next = h('button', { type: 'button', onclick: () => go(pageNo + 1) }, 'Next →');
  const num = (text) => h('th', { scope: 'col', class: 'num' }, text);
  const table = h('table', { 'aria-describedby': 'queue-summary', id: 'queues' },
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Name'),
      h('th', { scope: 'col', class: 'scope-col' }, 'Region'),
      h('th', { scope: 'col', class: 'scope-col' }, 'Account'),
      num('Visible'), num('In flight'), num('Delayed'),
      h('th', { scope: 'col' }, 'Last 5 minutes'),
      h('th', { scope: 'col', class: 'actions' }, h('span', { class: 'muted' }, 'Actions')))),
    tbody);

  main.append(
    h('div', { class: 'page-head' },
      h('h1', {}, 'Queues'), summary,
      h('div', { class: 'actions' },
        h('button', { type: 'button', class: 'primary', onclick: createQueue }, 'Create queue'))),
    h('form', { class: 'toolbar', role: 'search', onsubmit: (e) => { e.preventDefault(); apply(); } }, search),
    h('div', { class: 'card flush' },
      table,
      empty,
      h('nav', { class: 'pager', 'aria-label': 'Pages of queues' }, where, prev, next)),
  );

  search.addEventListener('input', () => {
    clearTimeout(debounce);
    debounce = setTimeout(apply, 250);
  });
  search.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && search.value) { e.preventDefault(); search.value = ''; apply(); }
  });

  function apply() {
    clearTimeout(debounce);
    if (search.value.trim() === filter) return;
    filter = search.value.trim();
    pageNo = 1;
    remember();
    refresh();
  }

  function go(n) {
    pageNo = Math.max(1, n);
    remember();
    refresh();
  }

  /** Keeps the filter and page in the address, without a history entry per keystroke. */
  function remember() {
    const q = new URLSearchParams();
    if (filter) q.set('filter', filter);
    if (pageNo > 1) q.set('page', String(pageNo));
    const s = q.toString();
    history.replaceState(null, '', s ? `#/?${s}` : '#/');
  }

  async function refresh() {
    const seq = ++latest;
    const data = await admin(`queues${query({ contains: filter, offset: (pageNo - 1) * PAGE, limit: PAGE })}`);
    if (seq !== latest) return; // a newer filter or page was asked for meanwhile
    const pages = Math.max(1, Math.ceil(data.total / PAGE));
    if (pageNo > pages) {
      go(pages);
      return;
    }
    render(data);
  }

  function render(data) {
    summary.textContent = filter
      ? `${fmtInt(data.total)} of ${fmtInt(data.all)} queues match “${filter}”`
      : `${fmtInt(data.all)} ${data.all === 1 ? 'queue' : 'queues'}`;
    const seen = new Set();
    // With queues in more than one account or region, columns say where each queue lives.
    table.classList.toggle('scoped', data.scopes > 1);
    data.queues.forEach((q, i) => {
      sample(q.url, q);
      seen.add(q.url);
      const row = rows.get(q.url) || makeRow(q);
      rows.set(q.url, row);
      update(row, q);
      if (tbody.children[i] !== row.tr) tbody.insertBefore(row.tr, tbody.children[i] || null);
    });
    for (const [name, row] of rows) {
      if (!seen.has(name)) { row.tr.remove(); rows.delete(name); }
    }
    empty.hidden = data.total > 0;
    fill(empty, filter
      ? `No queue name contains “${filter}”.`
      : 'No queues yet. Create one here, or with any SDK or the AWS CLI.');
    const from = data.total ? data.offset + 1 : 0;
    const to = data.offset + data.queues.length;
    const pages = Math.max(1, Math.ceil(data.total / PAGE));
    where.textContent = `${fmtInt(from)}–${fmtInt(to)} of ${fmtInt(data.total)} · page ${fmtInt(pageNo)} of ${fmtInt(pages)}`;
    prev.disabled = pageNo <= 1;
    next.disabled = pageNo >= pages;
  }

  function makeRow(q) {
    const scope = `?region=${encodeURIComponent(q.region)}&account=${encodeURIComponent(q.account)}`;
    const link = h('a', { class: 'queue-name', href: `#/queue/${encodeURIComponent(q.name)}${scope}` }, q.name);
    const kind = h('span', { class: q.fifo ? 'badge fifo' : 'badge standard' }, q.fifo ? 'FIFO' : 'Standard');
    const dlq = h('span', { class: 'badge dlq', title: 'Dead-letter queue: another queue’s RedrivePolicy targets it', hidden: true }, 'DLQ');
    const counts = Object.fromEntries(COUNTS.map((c) => [c, h('td', { class: 'num', dataset: { count: c } })]));
    const chart = h('td', { class: 'chart' });
    const del = h('button', {
      type: 'button', class: 'small danger', 'aria-label': `Delete queue ${q.name}`,
      onclick: () => deleteQueue(q.name, row.url, row.total),
    }, 'Delete');
    const tr = h('tr', { dataset: { queue: q.name } },
      h('td', {}, h('div', { class: 'cell-name' }, link, kind, dlq)),
      h('td', { class: 'scope-col region' }, q.region),
      h('td', { class: 'scope-col account mono' }, q.account),
      counts.visible, counts.in_flight, counts.delayed, chart, h('td', { class: 'actions' }, del));
    const row = { tr, dlq, counts, chart, url: q.url, total: 0 };
    return row;
  }

  function update(row, q) {
    row.url = q.url;
    row.total = q.visible + q.in_flight + q.delayed;
    row.dlq.hidden = !q.dlq;
    for (const c of COUNTS) {
      const text = fmtInt(q[c]);
      if (row.counts[c].textContent !== text) row.counts[c].textContent = text;
      row.counts[c].classList.toggle('zero', q[c] === 0);
    }
    fill(row.chart, sparkline(samples(q.url), { label: q.name }));
  }

  if (initial && !filter && pageNo === 1) render(initial);

  return { refresh, unmount: () => clearTimeout(debounce) };
}

function deleteQueue(name, url, total) {
  const what = total ? ` and its ${fmtInt(total)} ${total === 1 ? 'message' : 'messages'}` : '';
  return confirmDialog(`Delete ${name}?`, `This deletes the queue${what}. It cannot be undone.`, 'Delete queue', async () => {
    await sqs('DeleteQueue', { QueueUrl: url });
    forget(name);
    toast(`Deleted ${name}`);
    changed();
  });
}

function createQueue() {
  const num = (name, placeholder, max) => h('input', { name, type: 'number', min: 0, max, placeholder, inputmode: 'numeric' });
  const fifo = h('input', { type: 'checkbox', name: 'fifo' });
  const cbd = h('input', { type: 'checkbox', name: 'cbd', disabled: true });
  fifo.addEventListener('change', () => { cbd.disabled = !fifo.checked; });
  const body = [
    field('Name', h('input', {
      name: 'name', required: true, autofocus: true, maxlength: 80, autocomplete: 'off', spellcheck: 'false',
      pattern: '[A-Za-z0-9_\\-]{1,75}(\\.fifo)?|[A-Za-z0-9_\\-]{1,80}',
    }), 'Letters, digits, - and _; up to 80 characters. FIFO queues end in .fifo (added for you).'),
    h('div', { class: 'row' },
      h('label', { class: 'field inline' }, fifo, 'FIFO queue'),
      h('label', { class: 'field inline' }, cbd, 'Content-based deduplication')),
    h('div', { class: 'row' },
      field('Visibility timeout (s)', num('visibility', '30', 43200)),
      field('Delay (s)', num('delay', '0', 900)),
      field('Retention (s)', num('retention', '345600', 1209600))),
    h('fieldset', {},
      h('legend', {}, 'Dead-letter queue (optional)'),
      h('div', { class: 'row' },
        field('Queue name', h('input', { name: 'dlq', autocomplete: 'off', spellcheck: 'false' })),
        field('Max receives', num('max', '3', 1000)))),
  ];
  return openDialog({
    title: 'Create queue', submit: 'Create queue', body,
    onSubmit: async (form) => {
      let name = val(form, 'name');
      const isFifo = fifo.checked || name.endsWith('.fifo');
      if (isFifo && !name.endsWith('.fifo')) name += '.fifo';
      const Attributes = {};
      if (isFifo) Attributes.FifoQueue = 'true';
      if (isFifo && cbd.checked) Attributes.ContentBasedDeduplication = 'true';
      for (const [attr, input] of [['VisibilityTimeout', 'visibility'], ['DelaySeconds', 'delay'], ['MessageRetentionPeriod', 'retention']]) {
        if (val(form, input)) Attributes[attr] = val(form, input);
      }
      const dlq = val(form, 'dlq');
      if (dlq) {
        Attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: await arnOf(dlq),
          maxReceiveCount: Number(val(form, 'max') || 3),
        });
      }
      await sqs('CreateQueue', { QueueName: name, Attributes });
      toast(`Created ${name}`);
      changed();
    },
  });
}
