/**
 * Start, use and stop a localsqs server (a single-binary Amazon SQS emulator) from Node tests.
 *
 * ```ts
 * import { startLocalsqs } from 'localsqs';
 * const sqs = await startLocalsqs();          // a free port, waits for GET /health
 * const client = sqs.client();                // @aws-sdk/client-sqs SQSClient for it
 * await sqs.reset();                          // drop every queue and message
 * await sqs.advance(30);                      // move the server's clock 30 s forward
 * await sqs.stop();
 * ```
 *
 * A server that guards its admin endpoints (`--admin-token`) is started with
 * `startLocalsqs({ adminToken: 's3cret' })`; `reset()`, `advance()` and `health()` then send it.
 *
 * Only Node's standard library is used at run time; `@aws-sdk/client-sqs` (a peer dependency)
 * is loaded when `client()` is first called.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { SQSClient, SQSClientConfig } from '@aws-sdk/client-sqs';

/** Options of {@link startLocalsqs}. Every one is optional. */
export interface LocalsqsOptions {
  /** The executable to run. Default: see {@link findBinary}. */
  binary?: string;
  /** Port to listen on. Default: a free one, picked for you (retried if taken meanwhile). */
  port?: number;
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Keep state durably in this directory (`--data-dir`, created if missing). Default: in memory. */
  dataDir?: string;
  /** A TOML file of queues, fault rules and clock settings to apply at start (`--config`). */
  config?: string;
  /** Region in queue ARNs and the client's region (`--region`). Default `us-east-1`. */
  region?: string;
  /** Account id in queue URLs and ARNs (`--account-id`). Default `000000000000`. */
  accountId?: string;
  /** More command-line arguments, appended as given (e.g. `['--enforce-cooloffs']`). */
  args?: string[];
  /**
   * Guard the admin endpoints with this token (`--admin-token`): the server answers 401 to
   * admin requests without `Authorization: Bearer <token>`, which `reset()`, `advance()` and
   * `health()` send. Without this option they send the token the server gets anyway: an
   * `--admin-token` in `args`, else `LOCALSQS_ADMIN_TOKEN` in `env` (or in this process's
   * environment). An empty token guards nothing, as for the server.
   */
  adminToken?: string;
  /** The child's environment. Default: this process's, without the `LOCALSQS_*` settings above. */
  env?: NodeJS.ProcessEnv;
  /** How long to wait for `GET /health`, in milliseconds. Default 30 000. */
  startupTimeoutMs?: number;
  /** How long `stop()` waits after SIGTERM before SIGKILL, in milliseconds. Default 10 000. */
  stopTimeoutMs?: number;
}

/** The answer of `POST /_localsqs/clock`. */
export interface ClockState {
  now_ms: number;
  offset_ms: number;
  frozen: boolean;
}

/** The answer of `GET /health`. */
export interface Health {
  status: string;
  live: boolean;
  ready: boolean;
  mode: 'memory' | 'durable' | string;
  queues: number;
  [key: string]: unknown;
}

/** Talks to a running server: what both a started and a connected server offer. */
export interface LocalsqsConnection {
  /** `http://host:port`, for an SDK's `endpoint`. */
  readonly endpoint: string;
  /** The region clients are given. */
  readonly region: string;
  /** The admin token sent as `Authorization: Bearer <token>` on admin calls, if there is one. */
  readonly adminToken: string | undefined;
  /**
   * A new `@aws-sdk/client-sqs` SQSClient for this server: endpoint, region and dummy
   * credentials (`test`/`test`) filled in; anything in `config` overrides them. The SDK's
   * MD5 checks stay on (its default).
   */
  client(config?: SQSClientConfig): SQSClient;
  /** The URL of a queue of this server's account, whether or not it exists. */
  queueUrl(name: string): string;
  /**
   * Back to the starting state (`POST /_localsqs/reset`): every queue and message is dropped,
   * then the queues, fault rules and clock of the `config` file are restored.
   */
  reset(): Promise<void>;
  /** Move the server's clock forward (`POST /_localsqs/clock`); fractions of seconds work. */
  advance(seconds: number): Promise<ClockState>;
  /** `GET /health`. */
  health(): Promise<Health>;
}

/** A server started by {@link startLocalsqs}. */
export interface Localsqs extends LocalsqsConnection {
  readonly port: number;
  readonly host: string;
  readonly accountId: string;
  /** The executable that runs. */
  readonly binary: string;
  /** The child's process id. */
  readonly pid: number;
  /** True until the process exits. */
  readonly running: boolean;
  /** Everything the server wrote to stdout and stderr (its log), the last 1 MiB of it. */
  output(): string;
  /**
   * SIGTERM, then SIGKILL after `stopTimeoutMs`; destroys the clients `client()` made.
   * Resolves to the exit code (`null` when killed by a signal). Safe to call twice.
   */
  stop(): Promise<number | null>;
}

/** The executable could not be found, or is not executable. */
export class BinaryNotFoundError extends Error {
  override name = 'BinaryNotFoundError';
}

/** The server exited during start-up or did not answer `GET /health` in time. */
export class ServerStartError extends Error {
  override name = 'ServerStartError';
}

/** A `/_localsqs` endpoint answered with an error (401: a missing or wrong admin token). */
export class LocalsqsError extends Error {
  override name = 'LocalsqsError';
}

const DEFAULT_REGION = 'us-east-1';
const DEFAULT_ACCOUNT_ID = '000000000000';
const OUTPUT_LIMIT = 1 << 20;
const QUIET_GRACE_MS = 500;

/** Environment variables that name the binary, the first one set wins. */
export const BINARY_ENV = ['LOCALSQS_BIN', 'LOCALSQS_BINARY'] as const;

// Settings the binary reads from the environment that a start passes explicitly: removed from
// the child's environment so that `startLocalsqs()` means "in memory, defaults" even in a shell
// that exports, say, LOCALSQS_DATA_DIR for a long-running instance.
const MANAGED_ENV = [
  'LOCALSQS_HOST',
  'LOCALSQS_PORT',
  'LOCALSQS_DATA_DIR',
  'LOCALSQS_REGION',
  'LOCALSQS_ACCOUNT_ID',
  'LOCALSQS_CONFIG',
];

const ADMIN_TOKEN_FLAG = '--admin-token';
const ADMIN_TOKEN_ENV = 'LOCALSQS_ADMIN_TOKEN';

const exeName = process.platform === 'win32' ? 'localsqs.exe' : 'localsqs';

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `target/release/localsqs` of the repository this package sits in (node/dist/ → ../..). */
export function repositoryBinary(): string {
  return path.resolve(__dirname, '..', '..', 'target', 'release', exeName);
}

/**
 * The path of the localsqs executable to run: `binary` if given, then `$LOCALSQS_BIN` (or
 * `$LOCALSQS_BINARY`, the Python package's name for it), then `localsqs` on `PATH`, then the
 * repository's `target/release/localsqs` (when this package is used from a checkout). Throws
 * {@link BinaryNotFoundError} naming what was tried.
 */
export function findBinary(binary?: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = BINARY_ENV.find((name) => env[name]);
  if (binary !== undefined || fromEnv !== undefined) {
    const raw = binary ?? (env[fromEnv as string] as string);
    const source = binary !== undefined ? 'the binary option' : `$${fromEnv}`;
    if (!raw.includes(path.sep) && !path.isAbsolute(raw)) {
      const found = searchPath(raw, env);
      if (found) return found;
    }
    const resolved = path.resolve(raw);
    if (isExecutable(resolved)) return resolved;
    throw new BinaryNotFoundError(
      `localsqs binary given by ${source} is not an executable file: ${JSON.stringify(raw)}`,
    );
  }
  const onPath = searchPath(exeName, env);
  if (onPath) return onPath;
  const repo = repositoryBinary();
  if (isExecutable(repo)) return repo;
  throw new BinaryNotFoundError(
    `cannot find the localsqs binary (tried: $LOCALSQS_BIN, PATH, ${repo}). ` +
      'Put it on PATH, set LOCALSQS_BIN to its path, pass { binary }, ' +
      'or build it in the repository with `cargo build --release`.',
  );
}

function searchPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** A TCP port that was free a moment ago on `host`. */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen({ host, port: 0, exclusive: true }, () => {
      const address = srv.address();
      srv.close(() => {
        if (address && typeof address === 'object') resolve(address.port);
        else reject(new Error('no port assigned'));
      });
    });
  });
}

function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function request(
  url: string,
  method: string,
  { body, timeoutMs = 10_000, token }: { body?: unknown; timeoutMs?: number; token?: string } = {},
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, text: await res.text() };
}

async function admin<T>(
  to: { endpoint: string; adminToken: string | undefined },
  method: string,
  pathName: string,
  body?: unknown,
): Promise<T> {
  const token = to.adminToken;
  const { status, text } = await request(to.endpoint + pathName, method, { body, token });
  if (status === 404) {
    throw new LocalsqsError(
      `${method} ${pathName} is not supported by this localsqs binary (404); it may be older than this package`,
    );
  }
  if (status === 401) {
    const wanted = token ? 'another admin token than the one sent' : 'an admin token';
    throw new LocalsqsError(
      `${method} ${pathName} answered 401: the server wants ${wanted}; ` +
        `pass it as { adminToken } (${text})`,
    );
  }
  if (status !== 200) throw new LocalsqsError(`${method} ${pathName} answered ${status}: ${text}`);
  return JSON.parse(text) as T;
}

/** The value of an `--admin-token X` or `--admin-token=X` among command-line arguments. */
function tokenInArgs(args: readonly string[]): string | undefined {
  for (let i = 0; i < args.length; i += 1) {
    if (args[i] === ADMIN_TOKEN_FLAG) return args[i + 1];
    if (args[i].startsWith(`${ADMIN_TOKEN_FLAG}=`)) return args[i].slice(ADMIN_TOKEN_FLAG.length + 1);
  }
  return undefined;
}

/**
 * The token the started server will demand, by its own precedence: the flag (the option's,
 * else one in `args`) over the variable in the child's environment. Empty is none: the server
 * ignores an empty token.
 */
function serverToken(opts: LocalsqsOptions, env: NodeJS.ProcessEnv): string | undefined {
  return (opts.adminToken ?? tokenInArgs(opts.args ?? []) ?? env[ADMIN_TOKEN_ENV]) || undefined;
}

class Connection implements LocalsqsConnection {
  protected readonly clients = new Set<SQSClient>();

  constructor(
    readonly endpoint: string,
    readonly region: string,
    protected readonly account: string,
    readonly adminToken: string | undefined,
  ) {}

  client(config: SQSClientConfig = {}): SQSClient {
    // Loaded here, not at the top: the peer dependency is needed only by those who call this.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const sdk = require('@aws-sdk/client-sqs') as typeof import('@aws-sdk/client-sqs');
    const client = new sdk.SQSClient({
      endpoint: this.endpoint,
      region: this.region,
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      ...config,
    });
    this.clients.add(client);
    return client;
  }

  queueUrl(name: string): string {
    return `${this.endpoint}/${this.account}/${name}`;
  }

  async reset(): Promise<void> {
    const answer = await admin<{ reset?: boolean }>(this, 'POST', '/_localsqs/reset');
    if (answer.reset !== true) throw new LocalsqsError(`reset failed: ${JSON.stringify(answer)}`);
  }

  advance(seconds: number): Promise<ClockState> {
    return admin<ClockState>(this, 'POST', '/_localsqs/clock', { advance_seconds: seconds });
  }

  health(): Promise<Health> {
    // /health is open either way; the token does no harm there.
    return admin<Health>(this, 'GET', '/health');
  }
}

/**
 * A connection to a server someone else started, such as the one of the `localsqs/global-setup`
 * module: `endpoint` defaults to `$LOCALSQS_ENDPOINT`, `adminToken` to
 * `$LOCALSQS_TEST_ADMIN_TOKEN` (set by {@link globalSetup}), else `$LOCALSQS_ADMIN_TOKEN` (the
 * server's own variable). Offers `client()`, `reset()`, `advance()` and `health()`, but no `stop()`.
 */
export function connectLocalsqs(
  endpoint: string | undefined = process.env.LOCALSQS_ENDPOINT,
  options: { region?: string; accountId?: string; adminToken?: string } = {},
): LocalsqsConnection {
  if (!endpoint) {
    throw new LocalsqsError(
      'no endpoint: pass one, or set LOCALSQS_ENDPOINT (the localsqs/global-setup module does)',
    );
  }
  const token = options.adminToken ?? process.env.LOCALSQS_TEST_ADMIN_TOKEN ?? process.env[ADMIN_TOKEN_ENV];
  return new Connection(
    endpoint.replace(/\/+$/, ''),
    options.region ?? process.env.LOCALSQS_TEST_REGION ?? DEFAULT_REGION,
    options.accountId ?? process.env.LOCALSQS_TEST_ACCOUNT_ID ?? DEFAULT_ACCOUNT_ID,
    token || undefined,
  );
}

// Servers still running when this process exits are killed, so a forgotten stop() leaves no
// orphan behind. (The child and its pipes are unref'd: they never keep the process alive.)
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackChild(child: ChildProcess): void {
  live.add(child);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // First in line: a listener that calls process.exit() (Vitest's does) ends the others.
    process.prependListener('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
}

class Server extends Connection implements Localsqs {
  private readonly chunks: Buffer[] = [];
  private outputBytes = 0;
  private exitCode: number | null | undefined = undefined;
  private readonly exited: Promise<number | null>;

  constructor(
    private readonly child: ChildProcess,
    readonly binary: string,
    readonly host: string,
    readonly port: number,
    region: string,
    readonly accountId: string,
    adminToken: string | undefined,
    private readonly stopTimeoutMs: number,
  ) {
    super(`http://${urlHost(connectHost(host))}:${port}`, region, accountId, adminToken);
    const keep = (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.outputBytes += chunk.length;
      while (this.outputBytes > OUTPUT_LIMIT && this.chunks.length > 1) {
        this.outputBytes -= (this.chunks.shift() as Buffer).length;
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code) => {
        this.exitCode = code;
        live.delete(child);
        resolve(code);
      });
      child.once('error', () => {
        if (this.exitCode === undefined) this.exitCode = null;
        live.delete(child);
        resolve(null);
      });
    });
  }

  get pid(): number {
    return this.child.pid as number;
  }

  get running(): boolean {
    return this.exitCode === undefined;
  }

  output(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }

  async stop(): Promise<number | null> {
    for (const c of this.clients) c.destroy();
    this.clients.clear();
    if (this.exitCode !== undefined) return this.exitCode;
    // The child is unref'd so that it never keeps this process alive; while stopping, it must.
    this.child.ref();
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), this.stopTimeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

function command(opts: LocalsqsOptions, host: string, port: number): string[] {
  const args = ['--host', host, '--port', String(port)];
  if (opts.dataDir !== undefined) args.push('--data-dir', opts.dataDir);
  if (opts.config !== undefined) args.push('--config', opts.config);
  if (opts.region !== undefined) args.push('--region', opts.region);
  if (opts.accountId !== undefined) args.push('--account-id', opts.accountId);
  // Once only: the server refuses a second --admin-token (startLocalsqs rejects two that differ).
  if (opts.adminToken !== undefined && tokenInArgs(opts.args ?? []) === undefined) {
    args.push(ADMIN_TOKEN_FLAG, opts.adminToken);
  }
  return [...args, ...(opts.args ?? [])];
}

async function launch(opts: LocalsqsOptions, binary: string, port: number): Promise<Server> {
  const host = opts.host ?? '127.0.0.1';
  const env: NodeJS.ProcessEnv = { ...(opts.env ?? process.env) };
  for (const key of MANAGED_ENV) delete env[key];
  env.NO_COLOR ??= '1';
  if (opts.dataDir !== undefined) fs.mkdirSync(opts.dataDir, { recursive: true });
  const args = command(opts, host, port);
  const spawnedAt = Date.now();
  const child = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  trackChild(child);
  child.unref();
  (child.stdout as unknown as net.Socket | null)?.unref?.();
  (child.stderr as unknown as net.Socket | null)?.unref?.();
  const server = new Server(
    child,
    binary,
    host,
    port,
    opts.region ?? DEFAULT_REGION,
    opts.accountId ?? DEFAULT_ACCOUNT_ID,
    serverToken(opts, env),
    opts.stopTimeoutMs ?? 10_000,
  );
  let spawnFailure: Error | undefined;
  child.once('error', (e) => (spawnFailure = e));
  const timeoutMs = opts.startupTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  const describe = () =>
    `(command: ${binary} ${args.join(' ')}). Its output:\n${server.output().trimEnd() || '(nothing)'}`;
  for (;;) {
    if (spawnFailure) {
      throw new BinaryNotFoundError(`cannot run the localsqs binary ${binary}: ${spawnFailure.message}`);
    }
    if (!server.running) {
      await sleep(20); // let the pipes drain, so that the error shows what the server said
      const code = await server.stop();
      throw new ServerStartError(`localsqs exited with code ${code} during start-up ${describe()}`);
    }
    try {
      const { status, text } = await request(`${server.endpoint}/health`, 'GET', { timeoutMs: 1000 });
      // The answer must come from this child: another process may hold the port (a server
      // left over on a fixed port), and this one is then about to fail to bind it. The
      // child logs "localsqs is serving" once it listens; when its log level hides that
      // line, it must have lived for a moment instead.
      const ours = server.output().includes('localsqs is serving') || Date.now() - spawnedAt > QUIET_GRACE_MS;
      if (status === 200 && (JSON.parse(text) as Health).ready !== false && ours && server.running) {
        return server;
      }
    } catch (e) {
      lastError = e; // refused, reset, not JSON yet
    }
    if (Date.now() >= deadline) {
      await server.stop();
      throw new ServerStartError(
        `localsqs did not answer GET /health within ${timeoutMs} ms on ${server.endpoint} ` +
          `(last error: ${String(lastError)}) ${describe()}`,
      );
    }
    await sleep(20);
  }
}

/**
 * Starts a localsqs server and resolves once `GET /health` answers. Without `port`, a free one
 * is picked (and another one tried, up to three times, if the server could not bind it).
 */
export async function startLocalsqs(options: LocalsqsOptions = {}): Promise<Localsqs> {
  const inArgs = tokenInArgs(options.args ?? []);
  if (options.adminToken !== undefined && inArgs !== undefined && inArgs !== options.adminToken) {
    throw new Error('adminToken and the --admin-token in args differ: give the token once');
  }
  const binary = findBinary(options.binary, options.env ?? process.env);
  const attempts = options.port === undefined ? 3 : 1;
  for (let attempt = 1; ; attempt += 1) {
    const port = options.port ?? (await freePort(connectHost(options.host ?? '127.0.0.1')));
    try {
      return await launch(options, binary, port);
    } catch (e) {
      if (attempt < attempts && e instanceof ServerStartError && /in use/i.test(e.message)) continue;
      throw e;
    }
  }
}

// The server of globalSetup(), kept on globalThis: the teardown may come from another copy of
// this module (Jest loads globalTeardown separately; a bundler may inline one of them).
const GLOBAL_KEY = Symbol.for('localsqs.globalServer');
const globalSlot = globalThis as { [GLOBAL_KEY]?: Localsqs };

/**
 * A Vitest or Jest `globalSetup` function: starts one server for the whole run and exports
 * `LOCALSQS_ENDPOINT` and `AWS_ENDPOINT_URL_SQS` (which @aws-sdk/client-sqs, boto3 and the other
 * AWS SDKs read), plus `LOCALSQS_TEST_REGION`/`LOCALSQS_TEST_ACCOUNT_ID` (and
 * `LOCALSQS_TEST_ADMIN_TOKEN`, when the server has an admin token) for {@link connectLocalsqs},
 * to the test workers. The returned promise resolves to the teardown (Vitest calls it); Jest
 * users name `localsqs/global-teardown` as `globalTeardown`.
 *
 * ```ts
 * // vitest.config.ts:  test: { globalSetup: ['./test/localsqs.setup.ts'] }
 * // test/localsqs.setup.ts:
 * import { globalSetup } from 'localsqs';
 * export default globalSetup({ config: 'test/queues.toml' });
 * ```
 */
export function globalSetup(options: LocalsqsOptions = {}): () => Promise<() => Promise<void>> {
  return async () => {
    await globalTeardown(); // a watch-mode rerun: the previous run's server goes first
    const server = await startLocalsqs(options);
    globalSlot[GLOBAL_KEY] = server;
    process.env.LOCALSQS_ENDPOINT = server.endpoint;
    process.env.AWS_ENDPOINT_URL_SQS = server.endpoint;
    process.env.LOCALSQS_TEST_REGION = server.region;
    process.env.LOCALSQS_TEST_ACCOUNT_ID = server.accountId;
    // Not LOCALSQS_ADMIN_TOKEN: that would guard every server the workers start themselves.
    if (server.adminToken !== undefined) process.env.LOCALSQS_TEST_ADMIN_TOKEN = server.adminToken;
    else delete process.env.LOCALSQS_TEST_ADMIN_TOKEN; // a watch-mode rerun's, from a previous run
    return globalTeardown;
  };
}

/** Stops the server that {@link globalSetup} started in this process (a no-op if none). */
export async function globalTeardown(): Promise<void> {
  const server = globalSlot[GLOBAL_KEY];
  delete globalSlot[GLOBAL_KEY];
  if (server) await server.stop();
}
