// The queue page's larger forms: sending a message (attributes, delay, FIFO ids) and
// redriving a dead-letter queue, with the table of its move tasks.

import { h, fmtInt, fmtTime, toast, field, openDialog, val, changed } from './dom.js';
import { sqs } from './api.js';

const TYPES = ['String', 'Number', 'Binary'];

/** The dialog that sends one message to the queue at `url`. */
export function sendDialog(url, attrs) {
  const fifo = attrs.FifoQueue === 'true';
  const contentDedup = attrs.ContentBasedDeduplication === 'true';
  const rows = h('div', { class: 'attr-rows' });
  const addRow = () => {
    const row = h('div', { class: 'attr-row' },
      h('input', { name: 'attr-name', placeholder: 'Name', 'aria-label': 'Attribute name', autocomplete: 'off' }),
      h('select', { name: 'attr-type', 'aria-label': 'Attribute type' }, TYPES.map((t) => h('option', {}, t))),
      h('input', { name: 'attr-value', placeholder: 'Value (Binary: base64)', 'aria-label': 'Attribute value', autocomplete: 'off' }),
      h('button', { type: 'button', class: 'small', 'aria-label': 'Remove attribute', onclick: () => row.remove() }, '✕'));
    rows.append(row);
    row.querySelector('input').focus();
  };
  const body = [
    field('Body', h('textarea', { name: 'body', rows: 6, required: true, autofocus: true, spellcheck: 'false' }),
      'Ctrl+Enter sends. JSON bodies are shown pretty-printed.'),
    fifo
      ? h('div', { class: 'row' },
        field('Message group id', h('input', { name: 'group', required: true, autocomplete: 'off', value: 'default' })),
        field('Deduplication id', h('input', {
          name: 'dedup', autocomplete: 'off', required: !contentDedup,
          placeholder: contentDedup ? 'from the body (content-based)' : '',
        })))
      : h('div', { class: 'row' },
        field('Delay (s)', h('input', { name: 'delay', type: 'number', min: 0, max: 900, placeholder: attrs.DelaySeconds || '0' })),
        field('Group id (optional)', h('input', { name: 'group', autocomplete: 'off' }))),
    h('fieldset', {}, h('legend', {}, 'Message attributes'), rows,
      h('button', { type: 'button', class: 'small', onclick: addRow }, 'Add attribute')),
  ];
  return openDialog({
    title: 'Send message', submit: 'Send', body,
    onSubmit: async (form) => {
      const params = { QueueUrl: url, MessageBody: form.elements.namedItem('body').value };
      const delay = val(form, 'delay');
      if (delay) params.DelaySeconds = Number(delay);
      if (val(form, 'group')) params.MessageGroupId = val(form, 'group');
      if (val(form, 'dedup')) params.MessageDeduplicationId = val(form, 'dedup');
      const MessageAttributes = {};
      for (const row of rows.children) {
        const name = row.querySelector('[name="attr-name"]').value.trim();
        if (!name) continue;
        const type = row.querySelector('[name="attr-type"]').value;
        const value = row.querySelector('[name="attr-value"]').value;
        MessageAttributes[name] = type === 'Binary'
          ? { DataType: type, BinaryValue: value }
          : { DataType: type, StringValue: value };
      }
      if (Object.keys(MessageAttributes).length) params.MessageAttributes = MessageAttributes;
      const r = await sqs('SendMessage', params);
      toast(`Sent message ${r.MessageId}`);
      changed();
    },
  });
}

/** The dialog that starts a message move task out of the dead-letter queue `name`. */
export function redriveDialog(name, arn, sources) {
  const dest = h('select', { name: 'dest' },
    h('option', { value: '' }, 'Each message’s source queue'),
    sources.map((s) => h('option', { value: s }, s)));
  const body = [
    h('p', {}, `Moves the messages of ${name} back with StartMessageMoveTask. Progress shows on this page.`),
    field('Destination', dest),
    field('Messages per second (optional)', h('input', { name: 'rate', type: 'number', min: 1, max: 500, placeholder: 'as fast as possible' })),
  ];
  return openDialog({
    title: `Redrive ${name}`, submit: 'Start redrive', body,
    onSubmit: async (form) => {
      const params = { SourceArn: arn };
      const to = val(form, 'dest');
      if (to) params.DestinationArn = arn.replace(/[^:]+$/, to);
      if (val(form, 'rate')) params.MaxNumberOfMessagesPerSecond = Number(val(form, 'rate'));
      await sqs('StartMessageMoveTask', params);
      toast(`Redrive of ${name} started`);
      changed();
    },
  });
}

/** The move tasks of a dead-letter queue, newest first, with progress and Cancel. */
export function tasksTable(results) {
  if (!results.length) return h('p', { class: 'muted' }, 'No redrive has run from this queue yet.');
  return h('table', { class: 'tasks-table' },
    h('thead', {}, h('tr', {},
      ['Status', 'Progress', 'Destination', 'Started', ''].map((t) => h('th', { scope: 'col' }, t)))),
    h('tbody', {}, results.map((t) => {
      const moved = Number(t.ApproximateNumberOfMessagesMoved || 0);
      const total = Number(t.ApproximateNumberOfMessagesToMove || 0);
      return h('tr', { dataset: { status: t.Status } },
        h('td', {}, h('strong', {}, t.Status), t.FailureReason ? h('div', { class: 'muted' }, t.FailureReason) : null),
        h('td', {},
          h('progress', { max: Math.max(total, 1), value: Math.min(moved, Math.max(total, 1)), 'aria-label': 'Messages moved' }),
          ' ', `${fmtInt(moved)} of ${fmtInt(total)}`),
        h('td', {}, t.DestinationArn ? t.DestinationArn.split(':').pop() : 'source queues'),
        h('td', {}, t.StartedTimestamp ? fmtTime(Number(t.StartedTimestamp)) : '—'),
        h('td', { class: 'actions' }, t.Status === 'RUNNING' && t.TaskHandle
          ? h('button', {
            type: 'button', class: 'small danger',
            onclick: async () => {
              try {
                await sqs('CancelMessageMoveTask', { TaskHandle: t.TaskHandle });
                changed();
              } catch (e) { toast(e.message, 'error'); }
            },
          }, 'Cancel')
          : null));
    })));
}
