// One queue: its URL, ARN, region and account; live counts and chart, dead-letter links and
// redrive progress, attributes and tags (editable), its messages, and the actions (send,
// purge, redrive, delete).

import { h, fill, fmtInt, fmtTime, toast, field, openDialog, confirmDialog, val, changed } from './dom.js';
import { sqs, admin, attributes, query } from './api.js';
import { sample, samples, sparkline, forget } from './spark.js';
import { messagesView } from './messages.js';
import { sendDialog, redriveDialog, tasksTable } from './actions.js';

const COUNTS = [['visible', 'Visible'], ['in_flight', 'In flight'], ['delayed', 'Delayed']];
const EDITABLE = ['DelaySeconds', 'MaximumMessageSize', 'MessageRetentionPeriod', 'ReceiveMessageWaitTimeSeconds',
  'VisibilityTimeout', 'RedrivePolicy', 'RedriveAllowPolicy', 'Policy', 'KmsMasterKeyId',
  'KmsDataKeyReusePeriodSeconds', 'SqsManagedSseEnabled'];
const EDITABLE_FIFO = ['ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit'];
const SECONDS_STAMPS = ['CreatedTimestamp', 'LastModifiedTimestamp'];
/** Shown live in the counts above, so left out of the attribute table. */
const COUNT_ATTRIBUTES = ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'];

const nameOf = (arnOrUrl) => String(arnOrUrl).split(/[:/]/).pop();
const queueLink = (name) => h('a', { href: `#/queue/${encodeURIComponent(name)}` }, name);

export function queuePage(main, name, params) {
  document.title = `${name} · localsqs`;
  let url = null;
  let attrs = {};
  let sources = [];
  let gone = false;
  let messages = null;

  const badges = h('span', { class: 'badges' });
  const actions = h('div', { class: 'actions' });
  const stats = Object.fromEntries(COUNTS.map(([c]) => [c, h('div', { class: 'value', dataset: { count: c } }, '–')]));
  const chart = h('div', {});
  const deadLetter = h('section', { class: 'card', 'aria-labelledby': 'dl-title', hidden: true });
  const attrBody = h('tbody');
  const tagBody = h('tbody');
  const messagesSlot = h('div', {});
  const status = h('div', {});
  // The URL clients use (what GetQueueUrl answers for this host), the ARN, and where it lives.
  const urlText = h('code', { id: 'queue-url' }, '…');
  const arnText = h('code', { id: 'queue-arn' }, '…');
  const whereText = h('span', { id: 'queue-where' }, '…');
  const copy = h('button', { type: 'button', class: 'small', 'aria-label': 'Copy the queue URL', onclick: () => copyUrl() }, 'Copy');
  const ids = h('dl', { class: 'queue-ids', 'aria-label': 'Queue identity' },
    h('dt', {}, 'URL'), h('dd', {}, urlText, ' ', copy),
    h('dt', {}, 'ARN'), h('dd', {}, arnText),
    h('dt', {}, 'Region · account'), h('dd', {}, whereText));

  main.append(
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/' }, 'Queues'), ' / ', name),
    h('div', { class: 'page-head' }, h('h1', {}, name), badges, actions),
    ids,
    status,
    h('section', { class: 'stats', 'aria-label': 'Message counts' },
      COUNTS.map(([c, label]) => h('div', { class: `stat ${c}` }, h('div', { class: 'name' }, label), stats[c])),
      h('div', { class: 'stat chart' },
        h('div', { class: 'legend' },
          h('span', { class: 'muted' }, 'Last 5 minutes'),
          COUNTS.map(([c, label]) => h('span', { dataset: { series: c }, class: `key-${c}` }, label))),
        chart)),
    deadLetter,
    messagesSlot,
    h('div', { class: 'grid-2' },
      h('section', { class: 'card', 'aria-labelledby': 'attr-title' },
        h('div', { class: 'toolbar' }, h('h2', { id: 'attr-title', class: 'grow' }, 'Attributes'),
          h('button', { type: 'button', class: 'small', onclick: () => editAttribute() }, 'Set attribute')),
        h('table', { class: 'kv' }, attrBody)),
      h('section', { class: 'card', 'aria-labelledby': 'tag-title' },
        h('h2', { id: 'tag-title' }, 'Tags'),
        h('table', { class: 'kv' }, tagBody),
        tagForm())),
  );

  const ready = init();

  async function init() {
    try {
      // A queue in another region or account is addressed by the URL form that names both.
      const region = params.get('region');
      const account = params.get('account');
      url = region && account
        ? `${location.origin}/queue/${encodeURIComponent(region)}/${encodeURIComponent(account)}/${encodeURIComponent(name)}`
        : (await sqs('GetQueueUrl', { QueueName: name })).QueueUrl;
    } catch (e) {
      if (/QueueDoesNotExist|NonExistentQueue/.test(e.code)) return missing();
      throw e;
    }
    await loadMeta();
    messages = messagesView({ name, url, fifo: attrs.FifoQueue === 'true', params });
    messagesSlot.replaceWith(messages.el);
  }

  function missing() {
    gone = true;
    fill(status, h('div', { class: 'card', role: 'alert' },
      h('p', {}, `There is no queue named ${name}. `, h('a', { href: '#/' }, 'Back to the queues'))));
    for (const el of main.querySelectorAll('.stats, .grid-2, .queue-ids, [aria-labelledby="dl-title"]')) el.hidden = true;
    messages?.el.remove();
    fill(actions);
  }

  async function loadMeta() {
    const [a, tags, dls] = await Promise.all([
      attributes(url),
      sqs('ListQueueTags', { QueueUrl: url }),
      sqs('ListDeadLetterSourceQueues', { QueueUrl: url, MaxResults: 1000 }),
    ]);
    attrs = a;
    sources = (dls.queueUrls || []).map(nameOf);
    renderHead();
    renderAttributes();
    renderTags(tags.Tags || {});
    renderDeadLetter();
  }

  function renderHead() {
    const fifo = attrs.FifoQueue === 'true';
    fill(badges,
      h('span', { class: fifo ? 'badge fifo' : 'badge standard' }, fifo ? 'FIFO' : 'Standard'), ' ',
      sources.length ? h('span', { class: 'badge dlq', title: 'Dead-letter queue of another queue' }, 'DLQ') : null);
    fill(actions,
      h('button', { type: 'button', class: 'primary', onclick: () => sendDialog(url, attrs) }, 'Send message'),
      sources.length ? h('button', { type: 'button', onclick: () => redriveDialog(name, attrs.QueueArn, sources) }, 'Redrive…') : null,
      h('button', { type: 'button', onclick: purge }, 'Purge'),
      h('button', { type: 'button', class: 'danger', onclick: remove }, 'Delete queue'));
  }

  function renderAttributes() {
    const editable = new Set([...EDITABLE, ...(attrs.FifoQueue === 'true' ? EDITABLE_FIFO : [])]);
    const keys = Object.keys(attrs).filter((k) => !COUNT_ATTRIBUTES.includes(k)).sort();
    fill(attrBody, keys.map((k) => {
      const v = attrs[k];
      let shown = v;
      if (SECONDS_STAMPS.includes(k)) shown = h('span', { title: v }, fmtTime(Number(v) * 1000));
      else if (v.startsWith('{')) shown = h('pre', {}, pretty(v));
      return h('tr', { dataset: { attribute: k } },
        h('td', {}, k),
        h('td', {}, shown),
        h('td', { class: 'actions' }, editable.has(k)
          ? h('button', { type: 'button', class: 'small', 'aria-label': `Edit ${k}`, onclick: () => editAttribute(k) }, 'Edit')
          : null));
    }));
  }

  function renderTags(tags) {
    const keys = Object.keys(tags).sort();
    fill(tagBody, keys.length ? keys.map((k) => h('tr', { dataset: { tag: k } },
      h('td', {}, k), h('td', {}, tags[k]),
      h('td', { class: 'actions' }, h('button', {
        type: 'button', class: 'small danger', 'aria-label': `Remove tag ${k}`,
        onclick: async () => {
          await sqs('UntagQueue', { QueueUrl: url, TagKeys: [k] }).catch(report);
          await loadMeta();
        },
      }, 'Remove'))))
      : h('tr', { class: 'none' }, h('td', { colspan: 3 }, 'No tags.')));
  }

  function tagForm() {
    return h('form', {
      class: 'form-inline', 'aria-label': 'Add a tag',
      onsubmit: async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        const key = val(form, 'key');
        if (!key) return;
        try {
          await sqs('TagQueue', { QueueUrl: url, Tags: { [key]: val(form, 'value') } });
          form.reset();
          await loadMeta();
          toast(`Tagged ${key}`);
        } catch (err) { report(err); }
      },
    },
    field('Key', h('input', { name: 'key', required: true, autocomplete: 'off' })),
    field('Value', h('input', { name: 'value', autocomplete: 'off' })),
    h('button', { type: 'submit' }, 'Add tag'));
  }

  function renderDeadLetter() {
    let policy = null;
    try { policy = attrs.RedrivePolicy ? JSON.parse(attrs.RedrivePolicy) : null; } catch { policy = null; }
    deadLetter.hidden = !policy && !sources.length;
    fill(deadLetter,
      h('h2', { id: 'dl-title' }, 'Dead-letter queues'),
      policy ? h('p', {}, 'Messages received more than ', h('strong', {}, String(policy.maxReceiveCount)),
        policy.maxReceiveCount === 1 ? ' time' : ' times', ' move to ', queueLink(nameOf(policy.deadLetterTargetArn)), '.') : null,
      sources.length ? h('p', { class: 'sources' }, 'Dead-letter queue of ',
        sources.flatMap((s, i) => [i ? ', ' : '', queueLink(s)]), '.') : null,
      sources.length ? h('div', { class: 'tasks' }) : null);
  }

  async function refreshTasks() {
    const box = deadLetter.querySelector('.tasks');
    if (!box || !attrs.QueueArn) return;
    const r = await sqs('ListMessageMoveTasks', { SourceArn: attrs.QueueArn, MaxResults: 10 });
    fill(box, tasksTable(r.Results || []));
  }

  async function refresh() {
    await ready;
    if (gone || !url) return;
    let counts;
    try {
      counts = await admin(`queues/${encodeURIComponent(name)}${query({ region: params.get('region'), account: params.get('account') })}`);
    } catch (e) {
      if (e.status === 404) return missing();
      throw e;
    }
    showIds(counts);
    sample(name, counts);
    for (const [c] of COUNTS) stats[c].textContent = fmtInt(counts[c]);
    fill(chart, sparkline(samples(name), { big: true, label: name }));
    await Promise.all([messages?.refresh(counts), sources.length ? refreshTasks() : null]);
  }

  function showIds(c) {
    if (c.url && urlText.textContent !== c.url) urlText.textContent = c.url;
    if (c.arn && arnText.textContent !== c.arn) arnText.textContent = c.arn;
    const where = c.region ? `${c.region} · ${c.account}` : '';
    if (where && whereText.textContent !== where) whereText.textContent = where;
  }

  /** Copies the URL; where the browser gives no clipboard (plain http off localhost), selects it. */
  async function copyUrl() {
    try {
      await navigator.clipboard.writeText(urlText.textContent);
      toast('Copied the queue URL');
    } catch {
      const range = document.createRange();
      range.selectNodeContents(urlText);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      toast('Selected the queue URL: press Ctrl+C to copy it');
    }
  }

  function editAttribute(key = '') {
    const names = [...EDITABLE, ...(attrs.FifoQueue === 'true' ? EDITABLE_FIFO : [])];
    const select = h('select', { name: 'name', required: true },
      names.map((n) => h('option', { value: n, selected: n === key }, n)));
    const value = h('textarea', { name: 'value', rows: 4, autofocus: true, spellcheck: 'false' });
    const show = () => { value.value = attrs[select.value] ? pretty(attrs[select.value]) : ''; };
    select.addEventListener('change', show);
    show();
    return openDialog({
      title: key ? `Edit ${key}` : 'Set attribute', submit: 'Save',
      body: [field('Attribute', select), field('Value', value, 'JSON policies may span lines. Ctrl+Enter saves.')],
      onSubmit: async (form) => {
        let v = val(form, 'value');
        if (v.startsWith('{')) v = JSON.stringify(JSON.parse(v));
        await sqs('SetQueueAttributes', { QueueUrl: url, Attributes: { [val(form, 'name')]: v } });
        await loadMeta();
        toast(`Set ${val(form, 'name')}`);
      },
    });
  }

  function purge() {
    return confirmDialog(`Purge ${name}?`, 'Deletes every message in the queue, in flight and delayed ones included.', 'Purge', async () => {
      await sqs('PurgeQueue', { QueueUrl: url });
      toast(`Purged ${name}`);
      messages?.refresh(null, true);
      changed();
    });
  }

  function remove() {
    return confirmDialog(`Delete ${name}?`, 'Deletes the queue and all its messages. It cannot be undone.', 'Delete queue', async () => {
      await sqs('DeleteQueue', { QueueUrl: url });
      forget(name);
      toast(`Deleted ${name}`);
      location.hash = '#/';
    });
  }

  return { refresh, clock: (c) => messages?.clock(c), unmount: () => messages?.unmount() };
}

function pretty(v) {
  try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; }
}

function report(err) {
  toast(err.message || String(err), 'error');
}
