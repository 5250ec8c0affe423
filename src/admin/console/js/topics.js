// SNS topics: every topic with its counters and subscriptions, and a form that publishes to one
// through the SNS API of this origin (a Query Publish, as an SDK sends it).

import { h, fill, fmtInt, toast, field, val, changed } from './dom.js';
import { admin } from './api.js';

/** Calls an SNS action over Query; answers the parsed XML document or throws its error text. */
async function snsCall(action, params) {
  const body = new URLSearchParams({ Action: action, Version: '2010-03-31', ...params });
  const resp = await fetch('/', {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=utf-8' },
    body: body.toString(),
  });
  const doc = new DOMParser().parseFromString(await resp.text(), 'application/xml');
  if (!resp.ok) {
    const code = doc.querySelector('Code')?.textContent || resp.status;
    const message = doc.querySelector('Message')?.textContent || resp.statusText;
    throw new Error(`${action}: ${code}: ${message}`);
  }
  return doc;
}

export function topicsPage(main) {
  document.title = 'Topics · localsqs';
  const body = h('tbody');
  const select = h('select', { name: 'topic', required: true });
  const fifoFields = h('div', { class: 'form-inline', hidden: true },
    field('Message group id', h('input', { name: 'group' })),
    field('Deduplication id', h('input', { name: 'dedup', placeholder: 'content-based if empty' })));
  let topics = [];

  const form = h('form', {
    class: 'stack', 'aria-label': 'Publish to a topic',
    onsubmit: async (e) => {
      e.preventDefault();
      const f = e.currentTarget;
      const t = topics.find((x) => x.arn === val(f, 'topic'));
      if (!t) return;
      const params = { TopicArn: t.arn, Message: val(f, 'message') };
      if (val(f, 'subject')) params.Subject = val(f, 'subject');
      if (t.fifo) {
        params.MessageGroupId = val(f, 'group');
        if (val(f, 'dedup')) params.MessageDeduplicationId = val(f, 'dedup');
      }
      try {
        const doc = await snsCall('Publish', params);
        toast(`Published ${doc.querySelector('MessageId')?.textContent} to ${t.name}`);
        changed();
      } catch (err) { toast(err.message, 'error'); }
    },
  },
  field('Topic', select),
  field('Subject', h('input', { name: 'subject' })),
  field('Message', h('textarea', { name: 'message', rows: 4, required: true })),
  fifoFields,
  h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Publish')));
  select.addEventListener('change', () => {
    fifoFields.hidden = !topics.find((x) => x.arn === select.value)?.fifo;
  });

  main.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Topics')),
    h('div', { class: 'stack' },
      h('section', { class: 'card', 'aria-labelledby': 'topics-title' },
        h('h2', { id: 'topics-title' }, 'SNS topics'),
        h('table', { id: 'topics' },
          h('thead', {}, h('tr', {}, ['Topic', 'Region / account', 'Subscriptions', 'Published', 'Delivered']
            .map((t) => h('th', { scope: 'col' }, t)))),
          body)),
      h('section', { class: 'card', 'aria-labelledby': 'publish-title' },
        h('h2', { id: 'publish-title' }, 'Publish'), form)));

  function subscriptionList(t) {
    if (!t.subscriptions.length) return h('span', { class: 'muted' }, 'none');
    return h('ul', { class: 'plain' }, t.subscriptions.map((s) => h('li', {},
      h('code', {}, s.protocol), ' ', s.endpoint,
      s.pending ? h('span', { class: 'badge' }, 'pending') : null,
      s.raw ? h('span', { class: 'badge' }, 'raw') : null,
      s.filter_policy ? h('span', { class: 'badge', title: s.filter_policy }, 'filtered') : null)));
  }

  async function refresh() {
    ({ topics } = await admin('topics'));
    fill(body, topics.length ? topics.map((t) => h('tr', {},
      h('td', {}, h('strong', {}, t.name), t.fifo ? h('span', { class: 'badge fifo' }, 'FIFO') : null),
      h('td', { class: 'muted' }, `${t.region} / ${t.account}`),
      h('td', {}, subscriptionList(t)),
      h('td', {}, fmtInt(t.published)),
      h('td', {}, fmtInt(t.delivered))))
      : h('tr', {}, h('td', { colspan: 5, class: 'muted' }, 'No topics yet: create one with CreateTopic or a [[topic]] in the config file.')));
    const chosen = select.value;
    fill(select, topics.map((t) => h('option', { value: t.arn, selected: t.arn === chosen }, `${t.name} (${t.region})`)));
    fifoFields.hidden = !topics.find((x) => x.arn === select.value)?.fifo;
  }

  return { refresh };
}
