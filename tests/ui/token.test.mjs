// The console of a server started with --admin-token: the page loads without data, asks for the
// token once, then shows the queues; a reload in the same tab does not ask again.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, startServer } from './harness.mjs';

const TOKEN = 'ui-admin-token';

let server;
let browser;

describe('console behind --admin-token', () => {
  before(async () => {
    server = await startServer(['--admin-token', TOKEN]);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('the admin endpoints refuse requests without the token', async () => {
    const r = await fetch(`${server.endpoint}/_localsqs/queues`);
    assert.equal(r.status, 401);
    const ok = await fetch(`${server.endpoint}/_localsqs/queues`, { headers: { Authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    const page = await (await fetch(`${server.endpoint}/_localsqs/ui/`)).text();
    assert.ok(page.includes('{"initial":null}'), 'no queue data in the page without the token');
  });

  test('the console asks for the token once per tab and then shows the queues', async () => {
    await server.sqs('CreateQueue', { QueueName: 'token-guarded' });
    const page = await browser.page();
    const prompts = [];
    page.on('dialog', async (d) => {
      prompts.push(d.message());
      await d.accept(TOKEN);
    });
    await page.goto(`${server.endpoint}/_localsqs/ui/`);
    await page.locator('tr[data-queue="token-guarded"]').waitFor();
    assert.equal(prompts.length, 1, `asked once: ${prompts}`);
    assert.match(prompts[0], /admin token/);
    await page.reload();
    await page.locator('tr[data-queue="token-guarded"]').waitFor();
    assert.equal(prompts.length, 1, 'kept for the tab: not asked again');
    await page.close();
  });
});
