import { defineConfig } from 'vitest/config';

// `npm test` builds dist/ first: the tests import the compiled package, as users do.
export default defineConfig({
  test: {
    include: ['test/*.test.ts'],
    testTimeout: 30_000,
    // @aws-sdk/client-sqs warns on every load that its 2027 releases will need Node 22.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    hookTimeout: 30_000,
  },
});
