/**
 * A ready-made Vitest/Jest `globalSetup` module: one localsqs server for the whole test run,
 * with default options (the binary from $LOCALSQS_BIN, PATH or the repository; in memory; a
 * free port). The tests see its endpoint as `LOCALSQS_ENDPOINT` and `AWS_ENDPOINT_URL_SQS`.
 *
 *   Vitest: test: { globalSetup: ['localsqs/global-setup'] }
 *   Jest:   globalSetup: 'localsqs/global-setup', globalTeardown: 'localsqs/global-teardown'
 *
 * For options, write a two-line module of your own with `globalSetup(options)` from 'localsqs'.
 */
import { globalSetup, globalTeardown } from './index';

/** Starts the server; resolves to the teardown (Vitest calls it, Jest ignores it). */
const setup = globalSetup();
export default setup;
export { setup, globalTeardown as teardown };
