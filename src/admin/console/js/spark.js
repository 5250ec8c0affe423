// Counts sampled while the console is open, kept for the last few minutes (in sessionStorage,
// so moving between pages keeps them), and drawn as inline SVG sparklines.

import { svg, fmtInt } from './dom.js';

export const WINDOW_MS = 5 * 60 * 1000;
const KEY = 'localsqs-history-v1';
const MAX_QUEUES = 400;
const SERIES = ['visible', 'in_flight', 'delayed'];

/** name → [[t, visible, in_flight, delayed], …], oldest first. */
let store = new Map();
try {
  store = new Map(JSON.parse(sessionStorage.getItem(KEY) || '[]'));
} catch {
  store = new Map();
}

let saveTimer = null;
function save() {
  if (saveTimer) return;
  saveTimer = setTimeout(() => {
    saveTimer = null;
    try {
      sessionStorage.setItem(KEY, JSON.stringify([...store]));
    } catch {
      // Full or disabled storage: history lives for this page only.
    }
  }, 500);
}

/** Records one sample of a queue's counts. */
export function sample(name, counts, t = Date.now()) {
  let points = store.get(name);
  if (!points) {
    points = [];
    if (store.size >= MAX_QUEUES) store.delete(store.keys().next().value);
  } else {
    store.delete(name); // re-insert: the map's order is least recently sampled first
  }
  store.set(name, points);
  const last = points[points.length - 1];
  const row = [t, counts.visible, counts.in_flight, counts.delayed];
  if (last && t - last[0] < 900) points[points.length - 1] = row;
  else points.push(row);
  while (points.length && points[0][0] < t - WINDOW_MS) points.shift();
  save();
}

/** The samples of a queue, oldest first. */
export const samples = (name) => store.get(name) || [];

/** Forgets a deleted queue. */
export function forget(name) {
  store.delete(name);
  save();
}

/** The shortest time a chart spans, so the first samples do not fill it edge to edge. */
const MIN_SPAN_MS = 20 * 1000;

/**
 * A sparkline of the samples of the last WINDOW_MS: an area for visible messages, lines for
 * in-flight and delayed ones. The time axis ends now and reaches back to the oldest sample
 * (at least MIN_SPAN_MS, at most WINDOW_MS), so new samples enter on the right.
 */
export function sparkline(points, { big = false, label = '' } = {}) {
  const w = big ? 600 : 128;
  const hgt = big ? 90 : 30;
  const now = Date.now();
  const max = Math.max(1, ...points.map((p) => Math.max(p[1], p[2], p[3])));
  const span = Math.min(WINDOW_MS, Math.max(MIN_SPAN_MS, now - (points[0]?.[0] ?? now)));
  const x = (t) => Math.max(0, (t - (now - span)) / span) * w;
  const y = (v) => hgt - 2 - (v / max) * (hgt - 4);
  const el = svg('svg', {
    class: big ? 'spark big' : 'spark',
    viewBox: `0 0 ${w} ${hgt}`,
    preserveAspectRatio: 'none',
    role: 'img',
    'aria-label': describe(points, label),
  });
  el.append(svg('title', {}, describe(points, label)));
  el.append(svg('line', { class: 'base', x1: 0, x2: w, y1: hgt - 1.5, y2: hgt - 1.5 }));
  if (!points.length) return el;
  const xs = points.map((p) => x(p[0]).toFixed(1));
  SERIES.forEach((name, i) => {
    if (i > 0 && points.every((p) => p[i + 1] === 0)) return;
    const coords = points.map((p, j) => `${xs[j]},${y(p[i + 1]).toFixed(1)}`);
    if (coords.length === 1) coords.push(`${(Number(xs[0]) + 2).toFixed(1)},${y(points[0][i + 1]).toFixed(1)}`);
    if (i === 0) {
      const first = coords[0].split(',')[0];
      const last = coords[coords.length - 1].split(',')[0];
      el.append(svg('polygon', { class: 'area', points: `${first},${hgt} ${coords.join(' ')} ${last},${hgt}` }));
    }
    el.append(svg('polyline', { class: name, points: coords.join(' ') }));
  });
  return el;
}

function describe(points, label) {
  if (!points.length) return `${label}: no samples yet`;
  const [, v, f, d] = points[points.length - 1];
  const minutes = Math.max(1, Math.round((points[points.length - 1][0] - points[0][0]) / 60000));
  const peak = Math.max(...points.map((p) => p[1]));
  return `${label}: ${fmtInt(v)} visible, ${fmtInt(f)} in flight, ${fmtInt(d)} delayed now; `
    + `at most ${fmtInt(peak)} visible over the last ${minutes} min`;
}
