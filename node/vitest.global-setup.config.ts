import { defineConfig } from 'vitest/config';

// The ready-made globalSetup module, run by Vitest itself. test/global/check-teardown.ts comes
// first, so its teardown runs last and can check that the server is gone.
export default defineConfig({
  test: {
    include: ['test/global/*.test.ts'],
    globalSetup: ['./test/global/check-teardown.ts', 'localsqs/global-setup'],
    testTimeout: 30_000,
    // @aws-sdk/client-sqs warns on every load that its 2027 releases will need Node 22.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
