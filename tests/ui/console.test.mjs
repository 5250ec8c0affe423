// End-to-end tests of the web console in Debian's Chromium, against the built binary.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CHROMIUM, CHROMIUM_FLAGS, eventually, launchBrowser, screenshot, startServer,
} from './harness.mjs';

let server;
let browser;
let ui;

/** A little real traffic over a few seconds, sampled by the open page's live updates. */
async function traffic() {
  for (let round = 0; round < 6; round++) {
    const entries = Array.from({ length: Math.min(10, 2 + round * 2) }, (_, i) => ({ Id: `e${i}`, MessageBody: JSON.stringify({ round, i }) }));
    await server.sqs('SendMessageBatch', { QueueUrl: server.url('ui-orders'), Entries: entries });
    if (round % 2) await server.sqs('ReceiveMessage', { QueueUrl: server.url('ui-orders'), MaxNumberOfMessages: 5 });
    await server.sqs('SendMessage', { QueueUrl: server.url('rd-src'), MessageBody: JSON.stringify({ order: round, items: ['tea', 'cake'] }) });
    await new Promise((r) => setTimeout(r, 1600));
  }
}

/** Browser errors other than the failed fetches some tests provoke on purpose. */
const realErrors = () => browser.errors.filter((e) => !/Failed to load resource/.test(e));

describe('web console', () => {
  before(async () => {
    server = await startServer();
    ui = `${server.endpoint}/_localsqs/ui/`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('assets are served with their types, no-cache and a strict CSP', async () => {
    const bare = await fetch(`${server.endpoint}/_localsqs/ui`, { redirect: 'manual' });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get('location'), '/_localsqs/ui/');
    const page = await fetch(ui);
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type'), /^text\/html/);
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    assert.match(page.headers.get('content-security-policy'), /^default-src 'self'/);
    for (const [file, type] of [['style.css', /^text\/css/], ['js/main.js', /^text\/javascript/], ['favicon.svg', /^image\/svg\+xml/]]) {
      const r = await fetch(ui + file);
      assert.equal(r.status, 200, file);
      assert.match(r.headers.get('content-type'), type, file);
    }
    assert.equal((await fetch(`${ui}nope.js`)).status, 404);
  });

  test('chromium --dump-dom of the console lists the queues that exist', async () => {
    for (const name of ['dump-alpha', 'dump-beta.fifo']) {
      await server.sqs('CreateQueue', { QueueName: name, Attributes: name.endsWith('.fifo') ? { FifoQueue: 'true' } : {} });
    }
    const profile = mkdtempSync(path.join(tmpdir(), 'localsqs-dump-'));
    try {
      const { stdout } = await promisify(execFile)(CHROMIUM,
        [...CHROMIUM_FLAGS, `--user-data-dir=${profile}`, '--dump-dom', ui],
        { timeout: 60_000, maxBuffer: 16 << 20 });
      assert.match(stdout, /data-queue="dump-alpha"/);
      assert.match(stdout, /data-queue="dump-beta\.fifo"/);
      assert.match(stdout, />dump-alpha</);
    } finally {
      rmSync(profile, { recursive: true, force: true });
    }
  });

  test('create a queue, send messages, watch the counts change live', async () => {
    const page = await browser.page();
    await page.goto(ui);
    await page.getByRole('button', { name: 'Create queue' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create queue' });
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Create queue' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('ui-orders');
    await dialog.getByLabel('Visibility timeout (s)').fill('45');
    await dialog.getByLabel('Name', { exact: true }).press('Enter');
    const row = page.locator('tr[data-queue="ui-orders"]');
    await row.waitFor();
    assert.equal(await row.locator('[data-count="visible"]').textContent(), '0');
    assert.equal(await row.locator('.badge.standard').textContent(), 'Standard');
    // A message sent by another client shows up without a reload.
    await server.sqs('SendMessage', { QueueUrl: server.url('ui-orders'), MessageBody: 'from an SDK' });
    await eventually(async () => (await row.locator('[data-count="visible"]').textContent()) === '1', { what: 'live count 1' });
    // Filter by name.
    await page.getByRole('searchbox', { name: 'Filter queues by name' }).fill('ui-ord');
    await eventually(async () => (await page.locator('tbody tr[data-queue]').count()) === 1, { what: 'filtered list' });
    // Send from the queue page, with an attribute; Ctrl+Enter submits the body.
    await row.getByRole('link', { name: 'ui-orders' }).click();
    await page.getByRole('heading', { name: 'ui-orders', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Send message' }).click();
    const send = page.getByRole('dialog', { name: 'Send message' });
    await send.getByRole('button', { name: 'Add attribute' }).click();
    await send.getByLabel('Attribute name').fill('kind');
    await send.getByLabel('Attribute value').fill('order');
    await send.getByLabel('Body').fill('{"order":42,"items":["tea","cake"]}');
    await send.getByLabel('Body').press('Control+Enter');
    await send.waitFor({ state: 'detached' });
    await eventually(async () => (await page.locator('[data-count="visible"]').textContent()) === '2', { what: 'queue page count 2' });
    assert.equal(await page.getByRole('row', { name: /VisibilityTimeout/ }).locator('td').nth(1).textContent(), '45');
    await screenshot(page, 'queue-light');
    assert.deepEqual(realErrors(), []);
    await page.close();
  });

  test('attributes and tags are editable; a queue is deleted from the list', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/queue/ui-orders`);
    await page.getByRole('button', { name: 'Edit VisibilityTimeout' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit VisibilityTimeout' });
    await edit.getByLabel('Value').fill('60');
    await edit.getByLabel('Value').press('Control+Enter');
    await edit.waitFor({ state: 'detached' });
    const vt = page.locator('tr[data-attribute="VisibilityTimeout"] td').nth(1);
    await eventually(async () => (await vt.textContent()) === '60', { what: 'new VisibilityTimeout' });
    const attrs = await server.sqs('GetQueueAttributes', { QueueUrl: server.url('ui-orders'), AttributeNames: ['VisibilityTimeout'] });
    assert.equal(attrs.Attributes.VisibilityTimeout, '60');
    const tags = page.getByRole('form', { name: 'Add a tag' });
    await tags.getByLabel('Key').fill('team');
    await tags.getByLabel('Value').fill('shop');
    await tags.getByLabel('Value').press('Enter');
    await page.locator('tr[data-tag="team"]').waitFor();
    assert.deepEqual((await server.sqs('ListQueueTags', { QueueUrl: server.url('ui-orders') })).Tags, { team: 'shop' });
    await page.getByRole('button', { name: 'Remove tag team' }).click();
    await page.getByText('No tags.').waitFor();

    await server.sqs('CreateQueue', { QueueName: 'ui-doomed' });
    await page.goto(ui);
    const row = page.locator('tr[data-queue="ui-doomed"]');
    await row.getByRole('button', { name: 'Delete queue ui-doomed' }).click();
    await page.getByRole('dialog', { name: 'Delete ui-doomed?' }).getByRole('button', { name: 'Delete queue' }).click();
    await row.waitFor({ state: 'detached' });
    await assert.rejects(server.sqs('GetQueueUrl', { QueueName: 'ui-doomed' }), /QueueDoesNotExist/);
    await page.close();
  });

  test('a FIFO queue: created with content-based deduplication, sent to with group and dedup ids', async () => {
    const page = await browser.page();
    await page.goto(ui);
    await page.getByRole('button', { name: 'Create queue' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create queue' });
    const name = dialog.getByLabel('Name', { exact: true });
    await name.fill('bad name!');
    await name.press('Enter');
    assert.equal(await name.evaluate((el) => el.validity.patternMismatch), true, 'the name pattern applies');
    await name.fill('ui-jobs');
    await dialog.getByLabel('FIFO queue').check();
    await dialog.getByLabel('Content-based deduplication').check();
    await dialog.getByRole('button', { name: 'Create queue' }).click();
    const row = page.locator('tr[data-queue="ui-jobs.fifo"]');
    await row.waitFor();
    assert.equal(await row.locator('.badge.fifo').textContent(), 'FIFO');
    await row.getByRole('link', { name: 'ui-jobs.fifo' }).click();
    await page.getByRole('button', { name: 'Send message' }).click();
    const send = page.getByRole('dialog', { name: 'Send message' });
    await send.getByLabel('Body').fill('job one');
    await send.getByLabel('Message group id').fill('g-7');
    await send.getByLabel('Deduplication id').fill('d-7');
    await send.getByRole('button', { name: 'Send' }).click();
    const msg = page.locator('details.msg', { hasText: 'job one' });
    await msg.locator('summary').click();
    assert.equal(await msg.locator('summary .group').textContent(), 'g-7', 'the group column');
    await msg.locator('.detail').getByText('g-7').waitFor();
    await msg.getByText('d-7').waitFor();
    assert.match(await msg.textContent(), /Sequence number\d{20}/);
    await page.close();
  });

  test('queues of another region are listed with their region and open on their own page', async () => {
    const { QueueUrl } = await server.sqs('CreateQueue', { QueueName: 'ui-far' }, { region: 'eu-west-1' });
    await server.sqs('SendMessage', { QueueUrl, MessageBody: 'from Ireland' }, { region: 'eu-west-1' });
    const page = await browser.page();
    await page.goto(`${ui}#/`);
    const row = page.locator('tr[data-queue="ui-far"]');
    await row.waitFor();
    assert.equal(await row.locator('td.region').textContent(), 'eu-west-1');
    assert.equal(await row.locator('td.account').textContent(), '000000000000');
    await row.getByRole('link', { name: 'ui-far' }).click();
    await page.getByRole('heading', { name: 'ui-far', level: 1 }).waitFor();
    const msg = page.locator('details.msg', { hasText: 'from Ireland' });
    await msg.waitFor();
    await page.close();
    await server.sqs('DeleteQueue', { QueueUrl }, { region: 'eu-west-1' });
  });

  test('a queue that does not exist says so', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/queue/no-such-queue`);
    await page.getByRole('alert').getByText('There is no queue named no-such-queue.').waitFor();
    await page.getByRole('link', { name: 'Back to the queues' }).click();
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    await page.close();
  });

  test('peek a message without receiving it, then delete it', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/queue/ui-orders`);
    const msg = page.locator('details.msg', { hasText: '"order":42' });
    await msg.waitFor();
    await msg.locator('summary').click();
    await msg.locator('pre.body').waitFor();
    assert.match(await msg.locator('pre.body').textContent(), /"order": 42,\n {2}"items": \[/, 'pretty-printed JSON');
    assert.match(await msg.textContent(), /kind \(String\)order/);
    assert.equal(await msg.locator('.pill').textContent(), 'Visible');
    const before = await server.admin('queues/ui-orders/messages');
    assert.ok(before.body.messages.every((m) => m.receive_count === 0), 'peeking receives nothing');
    await msg.getByRole('button', { name: 'Delete message' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete this message?' });
    await confirm.getByRole('button', { name: 'Delete message' }).click();
    await confirm.waitFor({ state: 'detached' });
    // Deleted by id, without a receive: the other message is untouched and was never received.
    await eventually(async () => (await server.counts('ui-orders')).visible === before.body.messages.length - 1, { what: 'deleted' });
    const after = await server.admin('queues/ui-orders/messages');
    assert.ok(after.body.messages.every((m) => !/"order":\s*42/.test(m.body)), 'the clicked message is gone');
    assert.ok(after.body.messages.every((m) => m.receive_count === 0), 'nothing was received');
    await msg.waitFor({ state: 'detached' });
    await page.close();
  });

  test('purge empties the queue', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/queue/ui-orders`);
    await page.locator('details.msg').first().waitFor();
    await page.getByRole('button', { name: 'Purge' }).click();
    await page.getByRole('dialog', { name: 'Purge ui-orders?' }).getByRole('button', { name: 'Purge' }).click();
    await eventually(async () => (await page.locator('[data-count="visible"]').textContent()) === '0', { what: 'purged count' });
    await page.getByText('No messages in this queue.').waitFor();
    assert.equal((await server.counts('ui-orders')).visible, 0);
    await page.close();
  });

  test('redrive a dead-letter queue back to its source and watch the progress', async () => {
    await server.sqs('CreateQueue', { QueueName: 'rd-dlq' });
    const RedrivePolicy = JSON.stringify({ deadLetterTargetArn: server.arn('rd-dlq'), maxReceiveCount: 1 });
    await server.sqs('CreateQueue', { QueueName: 'rd-src', Attributes: { RedrivePolicy, VisibilityTimeout: '0' } });
    for (let i = 0; i < 3; i++) await server.sqs('SendMessage', { QueueUrl: server.url('rd-src'), MessageBody: `poison ${i}` });
    for (let i = 0; i < 2; i++) await server.sqs('ReceiveMessage', { QueueUrl: server.url('rd-src'), MaxNumberOfMessages: 10 });
    await eventually(async () => (await server.counts('rd-dlq')).visible === 3, { what: 'messages dead-lettered' });

    const page = await browser.page();
    await page.goto(ui);
    await page.locator('tr[data-queue="rd-dlq"] .badge.dlq').waitFor();
    assert.equal(await page.locator('tr[data-queue="rd-src"] .badge.dlq').isVisible(), false);
    await page.locator('tr[data-queue="rd-dlq"]').getByRole('link', { name: 'rd-dlq' }).click();
    await page.locator('.sources').getByRole('link', { name: 'rd-src' }).waitFor();
    await page.getByText('No redrive has run from this queue yet.').waitFor();
    await page.getByRole('button', { name: 'Redrive…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Redrive rd-dlq' });
    await dialog.getByRole('button', { name: 'Start redrive' }).click();
    await page.locator('.tasks-table tr[data-status="COMPLETED"]').waitFor();
    assert.match(await page.locator('.tasks-table tbody tr').first().textContent(), /3 of 3/);
    await eventually(async () => (await page.locator('[data-count="visible"]').textContent()) === '0', { what: 'dlq drained' });
    await page.locator('.sources').getByRole('link', { name: 'rd-src' }).click();
    await page.getByRole('heading', { name: 'rd-src', level: 1 }).waitFor();
    await eventually(async () => (await page.locator('[data-count="visible"]').textContent()) === '3', { what: 'source refilled' });
    await page.getByText(/move to rd-dlq/).waitFor();
    await page.close();
  });

  test('the clock: advance, freeze and resume; a delayed message becomes visible', async () => {
    await server.sqs('CreateQueue', { QueueName: 'clock-q' });
    const page = await browser.page();
    await page.goto(`${ui}#/queue/clock-q`);
    await page.getByRole('button', { name: 'Send message' }).click();
    const send = page.getByRole('dialog', { name: 'Send message' });
    await send.getByLabel('Body').fill('later');
    await send.getByLabel('Delay (s)').fill('600');
    await send.getByLabel('Delay (s)').press('Enter');
    const pill = page.locator('details.msg .pill');
    await eventually(async () => /^Delayed/.test(await pill.textContent()), { what: 'delayed pill' });
    await page.getByRole('link', { name: 'Clock & faults' }).click();
    await page.getByRole('heading', { name: 'Server clock' }).waitFor();
    await page.getByLabel('Advance by (seconds)').fill('601');
    await page.getByLabel('Advance by (seconds)').press('Enter');
    await eventually(async () => /\+10 min 1 s/.test(await page.locator('#clock-badge').textContent()), { what: 'badge offset' });
    await page.getByRole('button', { name: 'Freeze' }).click();
    await eventually(async () => /frozen/.test(await page.locator('#clock-badge').textContent()), { what: 'frozen badge' });
    assert.equal((await server.admin('clock')).body.frozen, true);
    await page.getByRole('button', { name: 'Resume' }).click();
    await eventually(async () => (await server.admin('clock')).body.frozen === false, { what: 'resumed' });
    await page.goBack();
    await eventually(async () => (await pill.textContent()) === 'Visible', { what: 'delay passed' });
    await server.admin('clock', { method: 'POST', body: { reset: true } });
    await page.close();
  });

  test('fault rules: add one, see it bite, remove it', async () => {
    const page = await browser.page();
    await page.goto(`${ui}#/tools`);
    await page.getByText('No fault rules').waitFor();
    await page.getByLabel('Queue', { exact: true }).fill('ui-orders');
    await page.getByLabel('Actions', { exact: true }).fill('SendMessage');
    await page.getByLabel('Error', { exact: true }).selectOption('RequestThrottled');
    await page.getByLabel('Seed').fill('7');
    await page.getByLabel('Seed').press('Enter');
    const rule = page.locator('#faults tr[data-fault]');
    await rule.waitFor();
    assert.match(await rule.textContent(), /ui-orders.*SendMessage.*RequestThrottled/);
    await assert.rejects(server.sqs('SendMessage', { QueueUrl: server.url('ui-orders'), MessageBody: 'x' }), /403.*RequestThrottled/);
    await screenshot(page, 'tools-light');
    await rule.getByRole('button', { name: /Remove rule/ }).click();
    await page.getByText('No fault rules').waitFor();
    await server.sqs('SendMessage', { QueueUrl: server.url('ui-orders'), MessageBody: 'x' });
    await page.close();
  });

  test('the theme toggle switches to dark and is remembered', async () => {
    const page = await browser.page();
    await page.goto(ui);
    await page.locator('tr[data-queue="ui-orders"]').waitFor();
    const bg = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor || getComputedStyle(document.documentElement).backgroundColor);
    const light = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    await traffic(); // something for the sparklines to show
    await screenshot(page, 'queues-light');
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
    const dark = await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
    assert.notEqual(dark, light);
    await new Promise((r) => setTimeout(r, 400)); // let the buttons' colour transitions finish
    await screenshot(page, 'queues-dark');
    await page.reload();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark', 'remembered');
    await page.goto(`${ui}#/queue/rd-src`);
    await page.locator('details.msg', { hasText: '"order":0' }).locator('summary').click();
    await page.locator('details.msg[open] pre.body').waitFor();
    await page.locator('.messages-card').evaluate((el) => el.scrollIntoView());
    await screenshot(page, 'queue-dark');
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'light');
    assert.ok(await bg());
    assert.deepEqual(realErrors(), []);
    await page.close();
  });
});
