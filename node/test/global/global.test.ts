// Run by Vitest with globalSetup: ['./dist/global-setup.js'] (vitest.global-setup.config.ts):
// one server for the run, reached through the environment only.
import { CreateQueueCommand, ListQueuesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { beforeEach, describe, expect, test } from 'vitest';
import { connectLocalsqs } from '../../dist/index.js';

const server = connectLocalsqs(); // LOCALSQS_ENDPOINT
beforeEach(() => server.reset());

describe('localsqs/global-setup', () => {
  test('exports the endpoint to the test workers', () => {
    expect(process.env.LOCALSQS_ENDPOINT).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(process.env.AWS_ENDPOINT_URL_SQS).toBe(process.env.LOCALSQS_ENDPOINT);
  });

  test('a plain SQSClient reaches it through AWS_ENDPOINT_URL_SQS', async () => {
    const plain = new SQSClient({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const { QueueUrl } = await plain.send(new CreateQueueCommand({ QueueName: 'from-env' }));
    expect(QueueUrl).toBe(server.queueUrl('from-env'));
    expect((await server.health()).queues).toBe(1);
    plain.destroy();
  });

  test('reset() between tests: the previous test left nothing', async () => {
    const { QueueUrls } = await server.client().send(new ListQueuesCommand({}));
    expect(QueueUrls).toBeUndefined();
  });
});
