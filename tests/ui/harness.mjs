// Shared pieces of the browser tests: start the built localsqs binary on a free port, call its
// SQS API (AWS JSON 1.0) and admin endpoints, and drive Debian's Chromium through
// playwright-core (no downloaded browser).

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '../..');
export const SCREENSHOTS = path.join(HERE, 'screenshots');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

/** Flags for a browser on a machine without a network: nothing phones home. */
export const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** The binary under test: $LOCALSQS_BIN, else the release build, else the debug build. */
export function binary() {
  const candidates = [
    process.env.LOCALSQS_BIN,
    path.join(ROOT, 'target/release/localsqs'),
    path.join(ROOT, 'target/debug/localsqs'),
  ].filter(Boolean);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no localsqs binary (looked at ${candidates.join(', ')}); run scripts/ui-test.sh`);
  return found;
}

/** Starts localsqs on a free port; resolves once it serves. */
export async function startServer(extraArgs = []) {
  const child = spawn(binary(), ['--port', '0', '--log-format', 'json', ...extraArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, RUST_LOG: 'info' },
  });
  let log = '';
  const endpoint = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`localsqs did not start:\n${log}`)), 15_000);
    child.stderr.on('data', (chunk) => {
      log += chunk;
      const m = log.match(/http:\/\/127\.0\.0\.1:\d+/);
      if (m) { clearTimeout(timer); resolve(m[0]); }
    });
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`localsqs exited (${code}):\n${log}`)); });
  });
  child.stderr.resume();
  const client = apiClient(endpoint);
  return {
    endpoint,
    ...client,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

export class SqsError extends Error {}

/** The SQS API and the admin endpoints of a server, from Node (no Origin: like an SDK). */
export function apiClient(endpoint) {
  const account = '000000000000';
  async function sqs(action, params = {}, { region } = {}) {
    const headers = { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': `AmazonSQS.${action}` };
    // An SDK signing for another region names it in its credential scope.
    if (region) headers.Authorization = `AWS4-HMAC-SHA256 Credential=test/20261201/${region}/sqs/aws4_request, SignedHeaders=host, Signature=0`;
    const resp = await fetch(`${endpoint}/`, {
      method: 'POST',
      headers,
      body: JSON.stringify(params),
    });
    const text = await resp.text();
    const data = text ? JSON.parse(text) : {};
    if (!resp.ok) throw new SqsError(`${action} ${resp.status}: ${data.__type} ${data.message}`);
    return data;
  }
  async function admin(p, { method = 'GET', body } = {}) {
    const resp = await fetch(`${endpoint}/_localsqs/${p}`, { method, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: resp.status, headers: resp.headers, body: await resp.json() };
  }
  const url = (name) => `${endpoint}/${account}/${name}`;
  const arn = (name) => `arn:aws:sqs:us-east-1:${account}:${name}`;
  async function counts(name) {
    return (await admin(`queues/${encodeURIComponent(name)}`)).body;
  }
  return { sqs, admin, url, arn, counts };
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function pool(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Launches Chromium with a fresh profile; `close()` removes the profile. */
export async function launchBrowser({ colorScheme = 'light' } = {}) {
  const profile = mkdtempSync(path.join(tmpdir(), 'localsqs-ui-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS.filter((f) => f !== '--headless'),
    viewport: { width: 1280, height: 800 },
    colorScheme,
    timeout: 60_000,
  });
  context.setDefaultTimeout(15_000);
  const errors = [];
  context.on('weberror', (e) => errors.push(String(e.error())));
  context.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return {
    context,
    errors,
    async page() {
      const p = await context.newPage();
      p.on('pageerror', (e) => errors.push(String(e)));
      return p;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a screenshot under tests/ui/screenshots/. */
export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** Polls `fn` until it returns a truthy value. */
export async function eventually(fn, { timeout = 15_000, interval = 100, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, interval));
  }
}
