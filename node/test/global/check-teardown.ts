// Listed before localsqs/global-setup in vitest.global-setup.config.ts: Vitest tears down in
// reverse order, so this teardown runs after the server's and checks that it is gone.
let endpoint: string | undefined;

export function setup(): void {}

export async function teardown(): Promise<void> {
  endpoint ??= process.env.LOCALSQS_ENDPOINT;
  if (!endpoint) throw new Error('localsqs/global-setup did not set LOCALSQS_ENDPOINT');
  const alive = await fetch(`${endpoint}/health`).then(
    () => true,
    () => false,
  );
  if (alive) throw new Error(`the global localsqs server at ${endpoint} is still running after teardown`);
  console.log(`check-teardown: the global server at ${endpoint} is stopped`);
}
