/**
 * Jest's `globalTeardown` for `localsqs/global-setup`: stops the server it started (Jest runs
 * both in the same process). Vitest does not need it: the setup returns its own teardown.
 */
import { globalTeardown } from './index';

export default globalTeardown;
