// The console with 10,000 queues and a queue of 100,000 messages: pages load, page correctly,
// the DOM holds one page rather than everything, and a search goes through the queue in bounded
// steps. No timing assertions.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, launchBrowser, pool, startServer } from './harness.mjs';

const QUEUES = 10_000;
const MESSAGES = 100_000;
const name = (i) => `scale-${String(i).padStart(5, '0')}`;
const body = (i) => `m-${String(i).padStart(6, '0')}`;

let server;
let browser;
let ui;

describe('web console at scale', () => {
  before(async () => {
    server = await startServer();
    ui = `${server.endpoint}/_localsqs/ui/`;
    const ids = Array.from({ length: QUEUES }, (_, i) => i);
    await pool(ids, 32, (i) => server.sqs('CreateQueue', { QueueName: name(i) }));
    await server.sqs('CreateQueue', { QueueName: 'big' });
    const batches = Array.from({ length: MESSAGES / 10 }, (_, b) => b);
    // Batches in parallel land in any order; the bodies carry their number for the checks.
    await pool(batches, 32, (b) => server.sqs('SendMessageBatch', {
      QueueUrl: server.url('big'),
      Entries: Array.from({ length: 10 }, (_, j) => ({ Id: `e${j}`, MessageBody: body(b * 10 + j) })),
    }));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('10,000 queues: one page of 50 in the DOM, paging and filtering on the server', async () => {
    const list = await server.admin(`queues?offset=${QUEUES - 5}&limit=50`);
    assert.equal(list.body.all, QUEUES + 1);
    // Sorted by name: 'big' first, then scale-00000…; so offset 9,995 holds the last six.
    assert.deepEqual(list.body.queues.map((q) => q.name), [9994, 9995, 9996, 9997, 9998, 9999].map(name));
    const page = await browser.page();
    await page.goto(ui);
    const rows = page.locator('#queues tbody tr[data-queue]');
    await eventually(async () => (await rows.count()) === 50, { what: '50 rows' });
    assert.match(await page.locator('#queue-summary').textContent(), /10,001 queues/);
    assert.match(await page.locator('.pager .where').textContent(), /1–50 of 10,001 · page 1 of 201/);
    assert.equal(await rows.first().getAttribute('data-queue'), 'big');
    await page.getByRole('button', { name: 'Next →' }).click();
    await eventually(async () => (await rows.first().getAttribute('data-queue')) === name(49), { what: 'page 2' });
    assert.equal(await rows.count(), 50);
    assert.match(await page.locator('.pager .where').textContent(), /51–100 of 10,001/);
    // The last page, by address.
    await page.goto(`${ui}#/?page=201`);
    await eventually(async () => (await rows.count()) === 1, { what: 'last page' });
    assert.equal(await rows.first().getAttribute('data-queue'), name(QUEUES - 1));
    // A filter narrows on the server and starts again at page 1.
    await page.goto(ui);
    await page.getByRole('searchbox', { name: 'Filter queues by name' }).fill('scale-0999');
    await eventually(async () => (await rows.count()) === 10, { what: 'filtered rows' });
    assert.match(await page.locator('#queue-summary').textContent(), /10 of 10,001 queues match/);
    assert.equal(await page.locator('#queues tbody tr').count(), 10, 'the DOM holds the page only');
    await page.close();
  });

  test('100,000 messages: one page of 50 in the DOM, pages through the whole queue', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/queue/big`);
    const items = page.locator('details.msg');
    await eventually(async () => (await items.count()) === 50, { what: '50 messages', timeout: 60_000 });
    assert.equal(await page.locator('[data-count="visible"]').textContent(), '100,000');
    assert.match(await page.locator('.messages-card .pager .where').textContent(), /1–50 of 100,000 · page 1 of 2,000/);
    const first = await items.first().getAttribute('data-id');
    await page.locator('.messages-card').getByRole('button', { name: 'Next →' }).click();
    await eventually(async () => (await items.first().getAttribute('data-id')) !== first, { what: 'page 2', timeout: 60_000 });
    assert.equal(await items.count(), 50);
    assert.match(await page.locator('.messages-card .pager .where').textContent(), /51–100 of 100,000/);
    await page.goto(`${ui}#/queue/big?page=2000`);
    await eventually(async () => /99,951–100,000/.test(await page.locator('.messages-card .pager .where').textContent()),
      { what: 'last page', timeout: 60_000 });
    assert.equal(await items.count(), 50);
    assert.equal(await page.locator('li > details').count(), 50, 'the DOM holds the page only');
    // The server's pages agree: every message exactly once across them.
    const seen = new Set();
    for (const offset of [0, 50_000, 99_950]) {
      const r = await server.admin(`queues/big/messages?offset=${offset}&limit=500`);
      assert.equal(r.body.total, MESSAGES);
      for (const m of r.body.messages) seen.add(m.body);
    }
    assert.equal(seen.size, 1_050);
    // A search looks at no more than 10,000 messages per request and says where to go on.
    let from = 0;
    let steps = 0;
    let found = [];
    for (;;) {
      const r = await server.admin(`queues/big/messages?body=${body(MESSAGES - 1)}&from=${from}`);
      steps += 1;
      assert.ok(r.body.search.scanned <= 10_000 && r.body.search.scan_limit === 10_000, JSON.stringify(r.body.search));
      found = found.concat(r.body.messages.map((m) => m.body));
      if (r.body.search.next === null) break;
      from = r.body.search.next;
    }
    assert.deepEqual(found, [body(MESSAGES - 1)]);
    assert.equal(steps, MESSAGES / 10_000, 'ten steps cover the queue');
    const counts = await server.counts('big');
    assert.equal(counts.visible, MESSAGES, 'looking changed nothing');
    await page.close();
  });
});
