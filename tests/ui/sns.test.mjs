// The console's Topics page in Debian's Chromium, against the built binary: topics with their
// subscriptions and counters, and the publish form delivering into a subscribed queue.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually, launchBrowser, screenshot, startServer } from './harness.mjs';

let server;
let browser;

/** An SNS action over unsigned Query (SNS's Version routes it), answering the XML text. */
async function sns(action, params) {
  const body = new URLSearchParams({ Action: action, Version: '2010-03-31', ...params });
  const resp = await fetch(`${server.endpoint}/`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
  const text = await resp.text();
  assert.equal(resp.status, 200, `${action}: ${text}`);
  return text;
}

describe('console: SNS topics', () => {
  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('topics list their subscriptions; the publish form delivers into the queue', async () => {
    await server.sqs('CreateQueue', { QueueName: 'ui-billing' });
    await sns('CreateTopic', { Name: 'ui-orders' });
    const topic = 'arn:aws:sns:us-east-1:000000000000:ui-orders';
    await sns('Subscribe', {
      TopicArn: topic, Protocol: 'sqs', Endpoint: server.arn('ui-billing'),
      'Attributes.entry.1.key': 'RawMessageDelivery', 'Attributes.entry.1.value': 'true',
    });
    const page = await browser.page();
    await page.goto(`${server.endpoint}/_localsqs/ui/#/topics`);
    await page.getByRole('heading', { name: 'SNS topics' }).waitFor();
    const row = page.locator('#topics tbody tr', { hasText: 'ui-orders' });
    await eventually(async () => /ui-billing/.test(await row.textContent()), { what: 'subscription listed' });
    assert.match(await row.textContent(), /raw/);
    await page.getByLabel('Message', { exact: true }).fill('hello from the console');
    await page.getByRole('button', { name: 'Publish' }).click();
    await page.getByText(/Published .* to ui-orders/).waitFor();
    await eventually(async () => (await server.counts('ui-billing')).visible === 1, { what: 'delivered into the queue' });
    const got = await server.sqs('ReceiveMessage', { QueueUrl: server.url('ui-billing') });
    assert.equal(got.Messages[0].Body, 'hello from the console');
    const cells = row.locator('td');
    await eventually(async () => (await cells.nth(3).textContent()) === '1' && (await cells.nth(4).textContent()) === '1',
      { what: 'published and delivered counters' });
    await screenshot(page, 'topics-light');
    assert.deepEqual(browser.errors.filter((e) => !/Failed to load resource/.test(e)), []);
    await page.close();
  });
});
