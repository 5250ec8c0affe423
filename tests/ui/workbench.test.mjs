// The console as a daily tool, in Debian's Chromium against the built binary: found from the
// server's root, the queue URL clients use, the FIFO group column, search by body and by
// attribute, bulk delete and move, and region and account columns.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, launchBrowser, screenshot, startServer } from './harness.mjs';

let server;
let browser;
let ui;

/** Browser errors other than the failed fetches some tests provoke on purpose. */
const realErrors = () => browser.errors.filter((e) => !/Failed to load resource/.test(e));

/** Sends `n` messages `order <i>` with attribute parity=even|odd to `queue`. */
async function fill(queue, n, extra = {}) {
  for (let start = 0; start < n; start += 10) {
    const Entries = [];
    for (let i = start; i < Math.min(n, start + 10); i++) {
      Entries.push({
        Id: `e${i - start}`,
        MessageBody: `order ${i}`,
        MessageAttributes: { parity: { DataType: 'String', StringValue: i % 2 ? 'odd' : 'even' } },
        ...extra,
      });
    }
    await server.sqs('SendMessageBatch', { QueueUrl: server.url(queue), Entries });
  }
}

const shown = (page) => page.locator('details.msg');
const previews = async (page) => (await page.locator('details.msg .preview').allTextContents());

describe('web console: found, and more than a viewer', () => {
  before(async () => {
    server = await startServer();
    ui = `${server.endpoint}/_localsqs/ui/`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('a browser opening the server or /_localsqs/ lands on the console; an SDK keeps its answers', async () => {
    const html = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    for (const p of ['/', '/_localsqs', '/_localsqs/']) {
      const r = await fetch(`${server.endpoint}${p}`, { headers: html, redirect: 'manual' });
      assert.equal(r.status, 302, p);
      assert.equal(r.headers.get('location'), '/_localsqs/ui/', p);
    }
    const sdk = await fetch(`${server.endpoint}/`, { redirect: 'manual' });
    assert.equal(sdk.status, 404, 'a GET / without text/html is the SQS API’s');
    const query = await fetch(`${server.endpoint}/?Action=ListQueues`, { headers: html, redirect: 'manual' });
    assert.equal(query.status, 200);
    assert.match(await query.text(), /<ListQueuesResponse/);
    const page = await browser.page();
    await page.goto(`${server.endpoint}/`);
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/_localsqs/ui/');
    await page.close();
  });

  test('the queue page shows the URL clients use, the ARN, the region and the account', async () => {
    const { QueueUrl } = await server.sqs('CreateQueue', { QueueName: 'wb-orders' });
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-orders`);
    await eventually(async () => (await page.locator('#queue-url').textContent()) === QueueUrl, { what: 'queue URL' });
    assert.equal((await server.sqs('GetQueueUrl', { QueueName: 'wb-orders' })).QueueUrl, QueueUrl);
    assert.equal(await page.locator('#queue-arn').textContent(), server.arn('wb-orders'));
    assert.equal(await page.locator('#queue-where').textContent(), 'us-east-1 · 000000000000');
    await page.close();
  });

  test('a FIFO queue lists the group of each message in a column', async () => {
    await server.sqs('CreateQueue', { QueueName: 'wb-jobs.fifo', Attributes: { FifoQueue: 'true', ContentBasedDeduplication: 'true' } });
    for (const [group, body] of [['g-alpha', 'first'], ['g-beta', 'second'], ['g-alpha', 'third']]) {
      await server.sqs('SendMessage', { QueueUrl: server.url('wb-jobs.fifo'), MessageBody: body, MessageGroupId: group });
    }
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-jobs.fifo`);
    await eventually(async () => (await shown(page).count()) === 3, { what: 'three messages' });
    assert.deepEqual(await page.locator('details.msg .group').allTextContents(), ['g-alpha', 'g-beta', 'g-alpha']);
    await page.locator('.messages-card').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'fifo-light');
    await server.sqs('CreateQueue', { QueueName: 'wb-plain' });
    await server.sqs('SendMessage', { QueueUrl: server.url('wb-plain'), MessageBody: 'no group' });
    const standard = await browser.page();
    await standard.goto(`${ui}#/queue/wb-plain`);
    await shown(standard).first().waitFor();
    assert.equal(await standard.locator('.msg .group').count(), 0, 'no group column on a standard queue');
    await standard.close();
    await page.close();
  });

  test('search by body and by attribute, on the server', async () => {
    await server.sqs('CreateQueue', { QueueName: 'wb-search' });
    await fill('wb-search', 30);
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-search`);
    await eventually(async () => (await shown(page).count()) === 30, { what: '30 messages' });
    const form = page.getByRole('search', { name: 'Search messages' });
    await form.getByLabel('Body contains').fill('order 1');
    await form.getByLabel('Body contains').press('Enter');
    await eventually(async () => (await shown(page).count()) === 11, { what: '11 matches' });
    assert.deepEqual(await previews(page), ['order 1', ...Array.from({ length: 10 }, (_, i) => `order ${10 + i}`)]);
    assert.match(await page.locator('.messages-card .pager .where').textContent(),
      /11 matches · looked at 30 of 30 messages, to the end of the queue/);
    assert.match(page.url(), /body=order\+1/, 'the search is in the address');
    await page.locator('.messages-card').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'search-light');
    // By attribute name and value, the body left empty.
    await form.getByLabel('Body contains').fill('');
    await form.getByLabel('Attribute').fill('parity');
    await form.getByLabel('Value').fill('odd');
    await form.getByRole('button', { name: 'Search' }).click();
    await eventually(async () => (await shown(page).count()) === 15, { what: '15 odd' });
    assert.ok((await previews(page)).every((p) => /[13579]$/.test(p)));
    await form.getByRole('button', { name: 'Clear' }).click();
    await eventually(async () => (await shown(page).count()) === 30, { what: 'all again' });
    assert.match(await page.locator('.messages-card .pager .where').textContent(), /1–30 of 30/);
    assert.deepEqual(realErrors(), []);
    await page.close();
  });

  test('a search of a large queue looks at a bounded number per step and goes further on request', async () => {
    await server.sqs('CreateQueue', { QueueName: 'wb-large' });
    await fill('wb-large', 12_000 - 1);
    await server.sqs('SendMessage', { QueueUrl: server.url('wb-large'), MessageBody: 'the needle' });
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-large?body=needle`);
    const where = page.locator('.messages-card .pager .where');
    await eventually(async () => /0 matches · looked at 10,000 of 12,000 messages; at most 10,000 per search/.test(await where.textContent()),
      { what: 'first step', timeout: 30_000 });
    await page.getByText('No match yet: search further to look at more of the queue.').waitFor();
    await page.getByRole('button', { name: 'Search further →' }).click();
    await eventually(async () => (await shown(page).count()) === 1, { what: 'found', timeout: 30_000 });
    assert.deepEqual(await previews(page), ['the needle']);
    assert.match(await where.textContent(), /1 match · looked at 2,000 of 12,000 messages \(step 2\), to the end of the queue/);
    assert.equal(await page.getByRole('button', { name: 'Search further →' }).isDisabled(), true);
    await page.getByRole('button', { name: '← Back' }).click();
    await eventually(async () => /looked at 10,000/.test(await where.textContent()), { what: 'back to step 1' });
    await page.close();
  });

  test('select messages and delete them, without receiving any', async () => {
    await server.sqs('CreateQueue', { QueueName: 'wb-bulk' });
    await fill('wb-bulk', 6);
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-bulk`);
    await eventually(async () => (await shown(page).count()) === 6, { what: 'six messages' });
    const del = page.getByRole('button', { name: 'Delete selected' });
    assert.equal(await del.isDisabled(), true, 'nothing selected yet');
    const items = page.locator('.messages li');
    for (const i of [0, 2, 4]) await items.nth(i).locator('input.pick').check();
    assert.equal(await page.locator('.selected-count').textContent(), '3 selected');
    await del.click();
    const confirm = page.getByRole('dialog', { name: 'Delete 3 messages?' });
    await confirm.getByRole('button', { name: 'Delete messages' }).click();
    await confirm.waitFor({ state: 'detached' });
    await eventually(async () => (await shown(page).count()) === 3, { what: 'three left' });
    assert.deepEqual(await previews(page), ['order 1', 'order 3', 'order 5']);
    const left = await server.admin('queues/wb-bulk/messages');
    assert.ok(left.body.messages.every((m) => m.receive_count === 0), 'nothing was received');
    assert.equal(await page.locator('.selected-count').textContent(), 'None selected');
    // The whole page at once.
    await page.getByLabel('Select every message on this page').check();
    assert.equal(await page.locator('.selected-count').textContent(), '3 selected');
    await del.click();
    await page.getByRole('dialog', { name: 'Delete 3 messages?' }).getByRole('button', { name: 'Delete messages' }).click();
    await page.getByText('No messages in this queue.').waitFor();
    await page.close();
  });

  test('move selected messages to a FIFO queue: a group id is asked for, attributes are kept', async () => {
    await server.sqs('CreateQueue', { QueueName: 'wb-move' });
    await server.sqs('CreateQueue', { QueueName: 'wb-target.fifo', Attributes: { FifoQueue: 'true' } });
    await fill('wb-move', 4);
    const page = await browser.page();
    await page.goto(`${ui}#/queue/wb-move`);
    await eventually(async () => (await shown(page).count()) === 4, { what: 'four messages' });
    const items = page.locator('.messages li');
    await items.nth(1).locator('input.pick').check();
    await items.nth(3).locator('input.pick').check();
    await page.getByRole('button', { name: 'Move selected…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Move 2 messages' });
    await dialog.getByLabel('Target queue').fill('wb-target.fifo');
    await dialog.getByRole('button', { name: 'Move' }).click();
    // Standard messages have no group: the server refuses, saying why, and nothing moves.
    await dialog.getByRole('alert').getByText(/FIFO queue.*MessageGroupId/).waitFor();
    assert.equal((await server.counts('wb-move')).visible, 4);
    await screenshot(page, 'move-light');
    await dialog.getByLabel('Group id for messages without one').fill('moved');
    await dialog.getByRole('button', { name: 'Move' }).click();
    await dialog.waitFor({ state: 'detached' });
    await eventually(async () => (await shown(page).count()) === 2, { what: 'two left' });
    assert.deepEqual(await previews(page), ['order 0', 'order 2']);
    const target = await server.admin('queues/wb-target.fifo/messages');
    assert.deepEqual(target.body.messages.map((m) => m.body), ['order 1', 'order 3']);
    assert.ok(target.body.messages.every((m) => m.group_id === 'moved' && m.message_attributes.parity.string_value === 'odd'));
    // The moved messages are ordinary messages of the target: a consumer receives them.
    const got = await server.sqs('ReceiveMessage', { QueueUrl: server.url('wb-target.fifo'), MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] });
    assert.deepEqual(got.Messages.map((m) => m.Body), ['order 1', 'order 3']);
    assert.equal(got.Messages[0].MessageAttributes.parity.StringValue, 'odd');
    await page.close();
  });

  test('with queues in several regions, the list has region and account columns', async () => {
    const page = await browser.page();
    await page.goto(ui);
    await page.locator('tr[data-queue="wb-orders"]').waitFor();
    const regionHead = page.getByRole('columnheader', { name: 'Region' });
    assert.equal(await regionHead.isVisible(), false, 'one region: no column');
    const { QueueUrl } = await server.sqs('CreateQueue', { QueueName: 'wb-far' }, { region: 'eu-west-1' });
    await eventually(async () => regionHead.isVisible(), { what: 'region column' });
    const far = page.locator('tr[data-queue="wb-far"]');
    await far.waitFor();
    assert.equal(await far.locator('td.region').textContent(), 'eu-west-1');
    assert.equal(await far.locator('td.account').textContent(), '000000000000');
    assert.equal(await page.locator('tr[data-queue="wb-orders"] td.region').textContent(), 'us-east-1');
    await screenshot(page, 'regions-light');
    await far.getByRole('link', { name: 'wb-far' }).click();
    await eventually(async () => (await page.locator('#queue-where').textContent()) === 'eu-west-1 · 000000000000', { what: 'scope on the queue page' });
    await server.sqs('DeleteQueue', { QueueUrl }, { region: 'eu-west-1' });
    assert.deepEqual(realErrors(), []);
    await page.close();
  });
});
