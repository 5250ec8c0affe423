/**
 * The ES module face of `localsqs/global-setup` (the `import` condition), which Vitest imports:
 * a real default export. It loads the CommonJS module with require(), so that every loader
 * (Node's, vite-node's) sees the same module.exports, and both faces share one server slot.
 */
import { createRequire } from 'node:module';

const cjs = createRequire(import.meta.url)('./global-setup.js') as typeof import('./global-setup.js');

export const setup = cjs.setup;
export const teardown = cjs.teardown;
export default setup;
