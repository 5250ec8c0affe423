// The helper itself: finding the binary, starting with options, reset, the clock, stopping, and
// the errors it raises. Everything is imported from the compiled package (dist/).
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import {
  BinaryNotFoundError,
  ServerStartError,
  connectLocalsqs,
  findBinary,
  globalSetup,
  repositoryBinary,
  startLocalsqs,
  type Localsqs,
} from '../dist/index.js';

const pkgDir = path.resolve(__dirname, '..');
const dist = path.join(pkgDir, 'dist');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'localsqs-node-test-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const started: Localsqs[] = [];
async function start(options: Parameters<typeof startLocalsqs>[0] = {}): Promise<Localsqs> {
  const s = await startLocalsqs(options);
  started.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop()));
});

/** An executable shell script in the temp directory. */
function script(name: string, body: string): string {
  const dir = fs.mkdtempSync(path.join(tmp, 'bin-'));
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

const names = async (s: Localsqs) =>
  ((await s.client().send(new ListQueuesCommand({}))).QueueUrls ?? []).map((u) => u.split('/').pop());

describe('startLocalsqs', () => {
  test('starts on a free port, answers /health, and stops', async () => {
    const s = await start();
    expect(s.endpoint).toBe(`http://127.0.0.1:${s.port}`);
    expect(s.running).toBe(true);
    expect(s.pid).toBeGreaterThan(0);
    expect(await s.health()).toMatchObject({ status: 'ok', ready: true, mode: 'memory', queues: 0 });
    expect(s.binary).toBe(findBinary());

    expect(await s.stop()).toBe(0); // SIGTERM is a clean shutdown
    expect(s.running).toBe(false);
    expect(await answers(s.endpoint)).toBe(false);
    expect(await s.stop()).toBe(0); // twice is fine
  });

  test('two servers at once are independent', async () => {
    const [a, b] = await Promise.all([start(), start()]);
    expect(a.port).not.toBe(b.port);
    await a.client().send(new CreateQueueCommand({ QueueName: 'only-in-a' }));
    expect(await names(a)).toEqual(['only-in-a']);
    expect(await names(b)).toEqual([]);
  });

  test('client() fills in endpoint, region and dummy credentials; MD5 checks stay on', async () => {
    const s = await start();
    const client = s.client();
    expect(await client.config.region()).toBe('us-east-1');
    expect(await client.config.credentials()).toMatchObject({ accessKeyId: 'test', secretAccessKey: 'test' });
    expect(typeof client.config.md5).toBe('function'); // false would turn the SDK's checks off
    const endpoint = await client.config.endpoint?.();
    expect(`${endpoint?.protocol}//${endpoint?.hostname}:${endpoint?.port}`).toBe(s.endpoint);
    const other = s.client({ region: 'eu-west-1', maxAttempts: 1 });
    expect(await other.config.region()).toBe('eu-west-1');
    expect(await other.config.maxAttempts()).toBe(1);
  });

  test('region and accountId appear in queue URLs and ARNs', async () => {
    const s = await start({ region: 'ap-south-1', accountId: '111122223333' });
    expect(s.region).toBe('ap-south-1');
    const sqs = s.client();
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: 'q' }));
    expect(QueueUrl).toBe(`${s.endpoint}/111122223333/q`);
    expect(s.queueUrl('q')).toBe(QueueUrl);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn'] }),
    );
    expect(Attributes?.QueueArn).toBe('arn:aws:sqs:ap-south-1:111122223333:q');
  });

  test('reset() drops queues and restores the config file; advance() moves the clock', async () => {
    const config = path.join(tmp, 'queues.toml');
    fs.writeFileSync(config, '[[queue]]\nname = "declared"\nattributes = { VisibilityTimeout = 30 }\n');
    const s = await start({ config });
    const sqs = s.client();
    expect(await names(s)).toEqual(['declared']);
    await sqs.send(new CreateQueueCommand({ QueueName: 'extra' }));
    expect((await names(s)).sort()).toEqual(['declared', 'extra']);
    await s.reset();
    expect(await names(s)).toEqual(['declared']);

    const QueueUrl = s.queueUrl('declared');
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'x' }));
    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    expect(first.Messages).toHaveLength(1);
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl }))).Messages).toBeUndefined();
    const clock = await s.advance(30);
    expect(clock.offset_ms).toBe(30_000);
    const again = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
    );
    expect(again.Messages?.[0].Attributes?.ApproximateReceiveCount).toBe('2');
    expect((await s.advance(0.5)).offset_ms).toBe(30_500);
  });

  test('dataDir keeps queues and messages across a restart', async () => {
    const dataDir = path.join(tmp, 'state', 'nested'); // created if missing
    const first = await start({ dataDir });
    expect((await first.health()).mode).toBe('durable');
    const { QueueUrl } = await first.client().send(new CreateQueueCommand({ QueueName: 'durable' }));
    await first.client().send(new SendMessageCommand({ QueueUrl, MessageBody: 'kept' }));
    await first.stop();

    const second = await start({ dataDir });
    const got = await second
      .client()
      .send(new ReceiveMessageCommand({ QueueUrl: second.queueUrl('durable'), WaitTimeSeconds: 1 }));
    expect(got.Messages?.map((m) => m.Body)).toEqual(['kept']);
  });

  test('args are passed to the binary', async () => {
    const s = await start({ args: ['--max-queues', '1'] });
    const sqs = s.client({ maxAttempts: 1 });
    await sqs.send(new CreateQueueCommand({ QueueName: 'one' }));
    await expect(sqs.send(new CreateQueueCommand({ QueueName: 'two' }))).rejects.toMatchObject({
      name: 'OverLimit',
    });
  });

  test("the environment's LOCALSQS_* settings do not leak into the server", async () => {
    const env = {
      ...process.env,
      LOCALSQS_DATA_DIR: path.join(tmp, 'leak'),
      LOCALSQS_ACCOUNT_ID: '999999999999',
    };
    const s = await start({ env });
    expect((await s.health()).mode).toBe('memory');
    expect(fs.existsSync(path.join(tmp, 'leak'))).toBe(false);
    const { QueueUrl } = await s.client().send(new CreateQueueCommand({ QueueName: 'q' }));
    expect(QueueUrl).toBe(`${s.endpoint}/000000000000/q`);
  });

  test('a fixed port is used as given', async () => {
    const probe = await start();
    const port = probe.port;
    await probe.stop();
    const s = await start({ port });
    expect(s.endpoint).toBe(`http://127.0.0.1:${port}`);
    await expect(startLocalsqs({ port })).rejects.toThrow(/in use/i); // no retry on a given port
  });

  test('output() is the server log', async () => {
    const s = await start({ env: { ...process.env, RUST_LOG: 'debug' } });
    await s.client().send(new CreateQueueCommand({ QueueName: 'logged' }));
    await s.stop();
    expect(s.output()).toMatch(/CreateQueue/);
  });
});

describe('adminToken', () => {
  /** The status of a POST /_localsqs/reset made by hand, with or without a token. */
  async function rawReset(endpoint: string, token?: string): Promise<number> {
    const headers = token === undefined ? undefined : { authorization: `Bearer ${token}` };
    const res = await fetch(`${endpoint}/_localsqs/reset`, { method: 'POST', headers });
    await res.text();
    return res.status;
  }

  test('the option guards the server, and reset(), advance() and health() send it', async () => {
    const s = await start({ adminToken: 's3cret' });
    expect(await rawReset(s.endpoint)).toBe(401); // the server really is guarded
    expect(await rawReset(s.endpoint, 'wrong')).toBe(401);
    await s.client().send(new CreateQueueCommand({ QueueName: 'q' }));
    await s.reset();
    expect(await names(s)).toEqual([]);
    expect((await s.advance(5)).offset_ms).toBe(5000);
    expect((await s.health()).status).toBe('ok');
    expect(await rawReset(s.endpoint, 's3cret')).toBe(200);
    expect(s.adminToken).toBe('s3cret');
  });

  test('a token given only in args is sent too, in either spelling', async () => {
    for (const args of [['--admin-token', 'from-args'], ['--admin-token=from-args']]) {
      const s = await start({ args });
      expect(await rawReset(s.endpoint)).toBe(401);
      await s.reset();
      expect((await s.advance(1)).offset_ms).toBe(1000);
      expect(s.adminToken).toBe('from-args');
    }
  });

  test("LOCALSQS_ADMIN_TOKEN in the child's environment is sent too", async () => {
    const s = await start({ env: { ...process.env, LOCALSQS_ADMIN_TOKEN: 'from-env' } });
    expect(await rawReset(s.endpoint)).toBe(401);
    await s.reset();
    expect(s.adminToken).toBe('from-env');
    // The option wins over the environment, as the flag does for the server.
    const t = await start({ adminToken: 'opt', env: { ...process.env, LOCALSQS_ADMIN_TOKEN: 'from-env' } });
    expect(await rawReset(t.endpoint, 'from-env')).toBe(401);
    await t.reset();
  });

  test('the option and the same token in args are passed once; differing ones are refused', async () => {
    const s = await start({ adminToken: 'same', args: ['--admin-token', 'same'] });
    await s.reset();
    await expect(startLocalsqs({ adminToken: 'a', args: ['--admin-token=b'] })).rejects.toThrow(/differ/);
  });

  test('without the token, reset() names the option in its error; connectLocalsqs takes it', async () => {
    const s = await start({ adminToken: 's3cret' });
    const saved = { ...process.env };
    try {
      delete process.env.LOCALSQS_TEST_ADMIN_TOKEN;
      delete process.env.LOCALSQS_ADMIN_TOKEN;
      await expect(connectLocalsqs(s.endpoint).reset()).rejects.toThrow(/401.*adminToken/);
      await connectLocalsqs(s.endpoint, { adminToken: 's3cret' }).reset();
      process.env.LOCALSQS_TEST_ADMIN_TOKEN = 's3cret'; // what globalSetup exports
      expect((await connectLocalsqs(s.endpoint).advance(2)).offset_ms).toBe(2000);
    } finally {
      process.env = saved;
    }
  });

  test("globalSetup hands the token to the workers' connectLocalsqs()", async () => {
    const saved = { ...process.env };
    try {
      const teardown = await globalSetup({ adminToken: 'global' })();
      try {
        expect(process.env.LOCALSQS_TEST_ADMIN_TOKEN).toBe('global');
        expect(process.env.LOCALSQS_ADMIN_TOKEN).toBe(saved.LOCALSQS_ADMIN_TOKEN); // left alone
        await connectLocalsqs().reset();
      } finally {
        await teardown();
      }
    } finally {
      process.env = saved;
    }
  });
});

describe('errors', () => {
  test('a binary that exits during start-up: its code and output', async () => {
    const bad = script('localsqs', 'echo "cannot start: boom" >&2\nexit 3');
    const err = await startLocalsqs({ binary: bad }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as Error).message).toMatch(/exited with code 3/);
    expect((err as Error).message).toMatch(/cannot start: boom/);
  });

  test('a binary that never answers /health: a timeout, and the process is stopped', async () => {
    const pidFile = path.join(tmp, 'silent.pid');
    const silent = script('localsqs', `echo $$ > ${pidFile}\nexec sleep 30`);
    const t0 = Date.now();
    const err = await startLocalsqs({ binary: silent, startupTimeoutMs: 300 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerStartError);
    expect((err as Error).message).toMatch(/did not answer GET \/health within 300 ms/);
    expect(Date.now() - t0).toBeLessThan(5000);
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    expect(() => process.kill(pid, 0)).toThrow(); // gone
  });

  test('a missing binary', async () => {
    await expect(startLocalsqs({ binary: path.join(tmp, 'no', 'such', 'localsqs') })).rejects.toThrow(
      BinaryNotFoundError,
    );
    await expect(startLocalsqs({ binary: path.join(tmp, 'no', 'such', 'localsqs') })).rejects.toThrow(
      /not an executable file/,
    );
  });

  test('reset() on a stopped server rejects', async () => {
    const s = await start();
    await s.stop();
    await expect(s.reset()).rejects.toThrow();
  });
});

describe('findBinary', () => {
  const real = findBinary();
  const env = (extra: NodeJS.ProcessEnv) => ({ PATH: '', ...extra });

  test('the option, then LOCALSQS_BIN, then LOCALSQS_BINARY, then PATH, then target/release', () => {
    const opt = script('localsqs', 'exit 0');
    const bin = script('localsqs', 'exit 0');
    const binary = script('localsqs', 'exit 0');
    const onPath = script('localsqs', 'exit 0');
    const pathDir = path.dirname(onPath);
    const all = env({ LOCALSQS_BIN: bin, LOCALSQS_BINARY: binary, PATH: `/nonexistent:${pathDir}` });
    expect(findBinary(opt, all)).toBe(opt);
    expect(findBinary(undefined, all)).toBe(bin);
    expect(findBinary(undefined, { ...all, LOCALSQS_BIN: '' })).toBe(binary);
    expect(findBinary(undefined, env({ PATH: pathDir }))).toBe(onPath);
    // Nothing else: the repository's release build (which `npm test` runs against in CI).
    if (fs.existsSync(repositoryBinary())) expect(findBinary(undefined, env({}))).toBe(repositoryBinary());
    expect(real).toMatch(/localsqs$/);
  });

  test('a bare name in LOCALSQS_BIN is looked up on PATH', () => {
    const tool = script('my-localsqs', 'exit 0');
    expect(findBinary(undefined, env({ LOCALSQS_BIN: 'my-localsqs', PATH: path.dirname(tool) }))).toBe(tool);
  });

  test('a LOCALSQS_BIN that is not executable is an error, not a fallback', () => {
    const notExec = path.join(tmp, 'plain-file');
    fs.writeFileSync(notExec, 'x', { mode: 0o644 });
    expect(() => findBinary(undefined, env({ LOCALSQS_BIN: notExec }))).toThrow(
      /\$LOCALSQS_BIN is not an executable/,
    );
  });

  test('nothing found: the error says what was tried', () => {
    if (fs.existsSync(repositoryBinary())) return; // the repository's build would be found
    expect(() => findBinary(undefined, env({}))).toThrow(/LOCALSQS_BIN, PATH/);
  });
});

describe('connectLocalsqs', () => {
  let s: Localsqs;
  beforeAll(async () => {
    s = await startLocalsqs({ region: 'eu-west-1' });
  });
  afterAll(() => s.stop());

  test('talks to a running server without owning it', async () => {
    const c = connectLocalsqs(s.endpoint + '/', { region: 'eu-west-1' });
    expect(c.endpoint).toBe(s.endpoint);
    await c.client().send(new CreateQueueCommand({ QueueName: 'via-connect' }));
    expect((await s.health()).queues).toBe(1);
    const { QueueUrl } = await s.client().send(new GetQueueUrlCommand({ QueueName: 'via-connect' }));
    expect(QueueUrl).toBe(c.queueUrl('via-connect'));
    await c.reset();
    expect((await s.health()).queues).toBe(0);
    expect((await c.advance(1)).offset_ms).toBe(1000);
    expect(s.running).toBe(true);
  });

  test('needs an endpoint', () => {
    const saved = process.env.LOCALSQS_ENDPOINT;
    delete process.env.LOCALSQS_ENDPOINT;
    try {
      expect(() => connectLocalsqs()).toThrow(/LOCALSQS_ENDPOINT/);
    } finally {
      if (saved !== undefined) process.env.LOCALSQS_ENDPOINT = saved;
    }
  });
});

describe('as a package', () => {
  const run = promisify(execFile);

  test('require() and import both work, by package name (the exports map)', async () => {
    const req = createRequire(path.join(pkgDir, 'package.json'));
    const cjs = req('localsqs');
    expect(typeof cjs.startLocalsqs).toBe('function');
    expect(req.resolve('localsqs/global-setup')).toBe(path.join(dist, 'global-setup.js'));
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { startLocalsqs, globalSetup } from 'localsqs';
         import setup, { teardown } from 'localsqs/global-setup';
         console.log(typeof startLocalsqs, typeof globalSetup, typeof setup, typeof teardown);`,
      ],
      { cwd: pkgDir },
    );
    expect(stdout.trim()).toBe('function function function function');
  });

  test('a forgotten stop() neither keeps the process alive nor leaves the server running', () => {
    const code = `const { startLocalsqs } = require(${JSON.stringify(path.join(dist, 'index.js'))});
      startLocalsqs().then((s) => console.log(s.pid));`;
    const t0 = Date.now();
    const res = spawnSync(process.execPath, ['-e', code], { encoding: 'utf8', timeout: 20_000 });
    expect(res.status).toBe(0);
    expect(Date.now() - t0).toBeLessThan(10_000);
    const pid = Number(res.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    let alive = true;
    for (let i = 0; i < 50 && alive; i += 1) {
      try {
        process.kill(pid, 0);
        spawnSync('sleep', ['0.1']);
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  });

  test("Jest's contract: globalSetup and globalTeardown modules export functions", async () => {
    // What Jest does with `globalSetup`/`globalTeardown`: require the module, take its default
    // export (interop), call it; both run in one process.
    const req = createRequire(__filename);
    const interop = (m: { __esModule?: boolean; default?: unknown }) => (m.__esModule ? m.default : m);
    const setup = interop(req(path.join(dist, 'global-setup.js'))) as () => Promise<unknown>;
    const teardown = interop(req(path.join(dist, 'global-teardown.js'))) as () => Promise<void>;
    const saved = { ...process.env };
    try {
      await setup();
      const endpoint = process.env.LOCALSQS_ENDPOINT as string;
      expect(endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(process.env.AWS_ENDPOINT_URL_SQS).toBe(endpoint);
      expect(await answers(endpoint)).toBe(true);
      await teardown();
      expect(await answers(endpoint)).toBe(false);
    } finally {
      process.env = saved;
    }
  });
});
