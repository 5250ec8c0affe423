// Clock and faults: move the server's time (/_localsqs/clock) and manage fault-injection rules
// (/_localsqs/faults).

import { h, fill, fmtTime, fmtDuration, toast, field, val, changed } from './dom.js';
import { admin } from './api.js';

const ERRORS = ['RequestThrottled', 'OverLimit', 'KmsThrottled', 'InternalError', 'ServiceUnavailable'];

export function toolsPage(main) {
  document.title = 'Clock & faults · localsqs';
  const now = h('output', { class: 'clock-now', 'aria-live': 'off' }, '…');
  const offset = h('span', { class: 'muted' });
  const freeze = h('button', { type: 'button', onclick: () => toggleFreeze() }, 'Freeze');
  let frozen = false;
  const rulesBody = h('tbody');

  const advanceForm = h('form', {
    class: 'form-inline', 'aria-label': 'Advance the clock',
    onsubmit: (e) => {
      e.preventDefault();
      const s = Number(val(e.currentTarget, 'seconds'));
      if (s > 0) move({ advance_seconds: s }, `Advanced the clock by ${fmtDuration(s * 1000)}`);
    },
  },
  field('Advance by (seconds)', h('input', { name: 'seconds', type: 'number', min: 0, step: 'any', value: 30, required: true })),
  h('button', { type: 'submit', class: 'primary' }, 'Advance'),
  [30, 300, 3600].map((s) => h('button', {
    type: 'button', onclick: () => move({ advance_seconds: s }, `Advanced the clock by ${fmtDuration(s * 1000)}`),
  }, `+${fmtDuration(s * 1000)}`)));

  main.append(
    h('div', { class: 'page-head' }, h('h1', {}, 'Clock & faults')),
    h('div', { class: 'stack' },
      h('section', { class: 'card', 'aria-labelledby': 'clock-title' },
        h('h2', { id: 'clock-title' }, 'Server clock'),
        h('p', {}, 'Visibility timeouts, delays, retention, deduplication windows and move tasks follow this clock. ',
          'Time never moves backwards; parked long polls see an advance at once.'),
        h('p', { class: 'clock-line' }, h('strong', {}, 'Now: '), now, ' ', offset),
        advanceForm,
        h('div', { class: 'toolbar clock-actions' }, freeze,
          h('button', { type: 'button', onclick: () => move({ reset: true }, 'Back to real time') }, 'Back to real time'))),
      h('section', { class: 'card', 'aria-labelledby': 'faults-title' },
        h('div', { class: 'toolbar' }, h('h2', { id: 'faults-title', class: 'grow' }, 'Fault rules'),
          h('button', { type: 'button', class: 'small danger', onclick: clearAll }, 'Remove all')),
        h('table', { id: 'faults' },
          h('thead', {}, h('tr', {}, ['Id', 'Queue', 'Actions', 'Effect', 'Seed', ''].map((t) => h('th', { scope: 'col' }, t)))),
          rulesBody),
        faultForm())));

  function showClock(c) {
    frozen = c.frozen;
    now.textContent = fmtTime(c.now_ms);
    const parts = [];
    if (c.offset_ms) parts.push(`${c.offset_ms > 0 ? 'ahead of' : 'behind'} real time by ${fmtDuration(Math.abs(c.offset_ms))}`);
    else parts.push('real time');
    if (c.frozen) parts.push('frozen');
    offset.textContent = `(${parts.join(', ')})`;
    freeze.textContent = c.frozen ? 'Resume' : 'Freeze';
    freeze.setAttribute('aria-pressed', String(c.frozen));
  }

  async function move(change, message) {
    try {
      showClock(await admin('clock', { method: 'POST', body: change }));
      toast(message);
      changed();
    } catch (e) { toast(e.message, 'error'); }
  }

  function toggleFreeze() {
    return move({ freeze: !frozen }, frozen ? 'The clock runs again' : 'The clock is frozen');
  }

  async function refresh() {
    const { faults } = await admin('faults');
    fill(rulesBody, faults.length ? faults.map(ruleRow)
      : h('tr', {}, h('td', { colspan: 6, class: 'muted' }, 'No fault rules: every request is served normally.')));
  }

  function ruleRow(r) {
    const effect = [];
    if (r.error) effect.push(`${r.error}${r.error_rate != null && r.error_rate !== 1 ? ` × ${r.error_rate}` : ''}`);
    if (r.latency_ms != null) effect.push(`latency ${Array.isArray(r.latency_ms) ? r.latency_ms.join('–') : r.latency_ms} ms`);
    if (r.duplicate_rate) effect.push(`duplicates × ${r.duplicate_rate}`);
    if (r.empty_receive_rate) effect.push(`empty receives × ${r.empty_receive_rate}`);
    if (r.reorder) effect.push('reorder');
    return h('tr', { dataset: { fault: r.id } },
      h('td', { class: 'mono' }, r.id),
      h('td', {}, r.queue || h('span', { class: 'muted' }, 'every queue')),
      h('td', {}, r.actions?.length ? r.actions.join(', ') : h('span', { class: 'muted' }, 'all')),
      h('td', {}, effect.join('; ') || '—'),
      h('td', { class: 'mono' }, r.seed ?? '—'),
      h('td', { class: 'actions' }, h('button', {
        type: 'button', class: 'small danger', 'aria-label': `Remove rule ${r.id}`,
        onclick: async () => {
          try { await admin(`faults/${encodeURIComponent(r.id)}`, { method: 'DELETE' }); toast(`Removed ${r.id}`); changed(); } catch (e) { toast(e.message, 'error'); }
        },
      }, 'Remove')));
  }

  async function clearAll() {
    await admin('faults', { method: 'DELETE' });
    toast('Removed every fault rule');
    changed();
  }

  function faultForm() {
    const error = h('p', { class: 'error', role: 'alert', hidden: true });
    const num = (name, placeholder, extra = {}) => h('input', { name, type: 'number', min: 0, step: 'any', placeholder, ...extra });
    return h('form', {
      class: 'fault-form', 'aria-labelledby': 'fault-add-title',
      onsubmit: async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        error.hidden = true;
        const rule = {};
        if (val(form, 'queue')) rule.queue = val(form, 'queue');
        const actions = val(form, 'actions').split(/[\s,]+/).filter(Boolean);
        if (actions.length) rule.actions = actions;
        if (val(form, 'error')) rule.error = val(form, 'error');
        for (const k of ['error_rate', 'duplicate_rate', 'empty_receive_rate', 'seed']) {
          if (val(form, k)) rule[k] = Number(val(form, k));
        }
        const lat = val(form, 'latency');
        if (lat) rule.latency_ms = lat.includes('-') ? lat.split('-').map(Number) : Number(lat);
        try {
          const { id } = await admin('faults', { method: 'POST', body: rule });
          toast(`Added fault rule ${id}`);
          form.reset();
          changed();
        } catch (err) {
          error.textContent = err.message;
          error.hidden = false;
        }
      },
    },
    h('h3', { id: 'fault-add-title' }, 'Add a rule'),
    h('div', { class: 'row' },
      field('Queue', h('input', { name: 'queue', placeholder: 'every queue', autocomplete: 'off' })),
      field('Actions', h('input', { name: 'actions', placeholder: 'all, or e.g. SendMessage, ReceiveMessage', autocomplete: 'off' })),
      field('Error', h('select', { name: 'error' }, h('option', { value: '' }, 'none'), ERRORS.map((e) => h('option', {}, e))))),
    h('div', { class: 'row' },
      field('Error rate (0–1)', num('error_rate', '1', { max: 1 })),
      field('Latency (ms or a-b)', h('input', { name: 'latency', placeholder: 'e.g. 250 or 50-500', autocomplete: 'off', pattern: '\\d+(-\\d+)?' })),
      field('Duplicate rate', num('duplicate_rate', '0', { max: 1 })),
      field('Empty receive rate', num('empty_receive_rate', '0', { max: 1 })),
      field('Seed', num('seed', 'random', { step: 1 }))),
    error,
    h('button', { type: 'submit', class: 'primary' }, 'Add rule'));
  }

  return { refresh, clock: showClock, unmount() {} };
}
