// Small DOM helpers: element builders, formatting, toasts and dialogs.

const SVG_NS = 'http://www.w3.org/2000/svg';

function assign(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.setAttribute('class', v);
    else if (k === 'text') el.textContent = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'value' || k === 'checked' || k === 'selected') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An HTML element: h('a', { href: '#/' }, 'text', child). */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  assign(el, props);
  append(el, children);
  return el;
}

/** An SVG element. */
export function svg(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  assign(el, props);
  append(el, children);
  return el;
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const fmtInt = (n) => Number(n ?? 0).toLocaleString('en-US');

/** 1234 ms → "1.2 s"; 95 s → "1 min 35 s"; and so on up to days. */
export function fmtDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (ms < 10_000 && ms > 0 && s < 10) return `${(ms / 1000).toFixed(1)} s`;
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const hours = Math.floor(m / 60);
  if (hours < 48) return m % 60 ? `${hours} h ${m % 60} min` : `${hours} h`;
  const d = Math.floor(hours / 24);
  return hours % 24 ? `${d} d ${hours % 24} h` : `${d} d`;
}

const pad = (n) => String(n).padStart(2, '0');

/** Epoch ms → "2024-05-01 13:04:05" in local time. */
export function fmtTime(ms) {
  if (ms == null || Number.isNaN(Number(ms))) return '—';
  const d = new Date(Number(ms));
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** Epoch ms → "13:04:05". */
export function fmtClock(ms) {
  const d = new Date(Number(ms));
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A short-lived message in the corner; errors are announced assertively. */
export function toast(text, kind = 'ok') {
  const box = document.getElementById('toasts');
  const t = h('div', { class: `toast ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
  box.append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 9000 : 4000);
  return t;
}

let fieldCount = 0;

/** A labelled form field: field('Name', input, 'hint'); the hint describes the control. */
export function field(label, control, hint) {
  if (!control.id) control.id = `field-${++fieldCount}`;
  const note = hint ? h('span', { class: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (note) control.setAttribute('aria-describedby', note.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, note);
}

let dialogCount = 0;

/**
 * Opens a modal form. `onSubmit(form)` runs on submit (Enter in a field, or Ctrl+Enter in a
 * text area); when it throws, its message shows in the dialog, which stays open. Escape and
 * Cancel close it. Resolves with what onSubmit returned, or null when cancelled.
 */
export function openDialog({ title, body, submit = 'Save', danger = false, onSubmit }) {
  const id = `dlg-title-${++dialogCount}`;
  const error = h('p', { class: 'error', role: 'alert', hidden: true });
  const ok = h('button', { type: 'submit', class: danger ? 'danger solid' : 'primary' }, submit);
  const cancel = h('button', { type: 'button', value: 'cancel' }, 'Cancel');
  const form = h('form', {},
    h('h2', { id }, title), body, error, h('div', { class: 'buttons' }, cancel, ok));
  const dlg = h('dialog', { 'aria-labelledby': id }, form);
  document.body.append(dlg);
  return new Promise((resolve) => {
    let result = null;
    cancel.addEventListener('click', () => dlg.close());
    dlg.addEventListener('close', () => { dlg.remove(); resolve(result); });
    form.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); }
    });
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      ok.disabled = true;
      error.hidden = true;
      try {
        result = (await onSubmit(form)) ?? true;
        dlg.close();
      } catch (err) {
        error.textContent = err.message || String(err);
        error.hidden = false;
      } finally {
        ok.disabled = false;
      }
    });
    dlg.showModal();
    const first = form.querySelector('[autofocus]') || form.querySelector('input, select, textarea');
    (first || ok).focus();
  });
}

/** Asks before something that cannot be undone. Resolves true when confirmed. */
export function confirmDialog(title, text, action = 'Delete', run = async () => {}) {
  return openDialog({ title, body: h('p', {}, text), submit: action, danger: true, onSubmit: run })
    .then((r) => r !== null);
}

/** Asks for a refresh of what is on screen now, after a change. */
export const changed = () => document.dispatchEvent(new Event('localsqs:changed'));

/** The value of a named form control, trimmed; '' when absent. */
export const val = (form, name) => (form.elements.namedItem(name)?.value ?? '').trim();
