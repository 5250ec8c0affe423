// sqs-consumer on a client from startLocalsqs(): failures come back after their visibility
// timeout, which advance() makes pass at once; poison messages end in the dead-letter queue; the
// heartbeat extends visibility while a handler runs; FIFO batches keep group order.
import { once } from 'node:events';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { Consumer } from 'sqs-consumer';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startLocalsqs, type Localsqs } from '../dist/index.js';
import { md5OfAttributes, sleep, until } from './util';

let server: Localsqs;
let sqs: SQSClient;
const calls: string[] = []; // every operation the server answered, in the order the answers came

beforeAll(async () => {
  server = await startLocalsqs();
  sqs = server.client();
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      // Recorded once answered: a test that waits for a DeleteMessage then sees its effect.
      const out = await next(args);
      calls.push(context.commandName as string);
      return out;
    },
    { step: 'initialize', name: 'recordCalls' },
  );
});
afterAll(() => server.stop());
beforeEach(async () => {
  await server.reset();
  calls.length = 0;
});

const queue = async (QueueName: string, Attributes?: Record<string, string>) =>
  (await sqs.send(new CreateQueueCommand({ QueueName, Attributes }))).QueueUrl as string;

async function sendAll(QueueUrl: string, bodies: string[], extra: (i: number) => object = () => ({})) {
  const res = await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl,
      Entries: bodies.map((MessageBody, i) => ({
        Id: `e${i}`,
        MessageBody,
        MessageAttributes: { index: { DataType: 'Number', StringValue: String(i) } },
        ...extra(i),
      })),
    }),
  );
  expect(res.Failed ?? []).toEqual([]);
}

async function counts(QueueUrl: string) {
  const a = (
    await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    )
  ).Attributes!;
  return [Number(a.ApproximateNumberOfMessages), Number(a.ApproximateNumberOfMessagesNotVisible)];
}

/** Starts `consumer`, waits for `done()`, stops it (aborting its long poll) and waits for 'stopped'. */
async function runUntil(consumer: Consumer, done: () => boolean, step?: () => Promise<void>) {
  const errors: Error[] = [];
  consumer.on('error', (err) => errors.push(err));
  consumer.start();
  try {
    await until(async () => {
      if (step) await step();
      return done();
    }, 15_000);
  } finally {
    const stopped = once(consumer, 'stopped');
    consumer.stop({ abort: true });
    await stopped;
  }
  expect(consumer.status.isRunning).toBe(false);
  expect(errors.filter((e) => !/planned|abort/i.test(e.message)).map((e) => e.message)).toEqual([]);
}

describe('sqs-consumer', () => {
  test('a failed message comes back after its visibility timeout, without waiting for it', async () => {
    const QueueUrl = await queue('jobs', { VisibilityTimeout: '30' });
    await sendAll(QueueUrl, ['a-0', 'a-1', 'a-2', 'a-3']);
    const attempts: Record<string, number> = {};
    const processed = new Set<string>();
    const consumer = Consumer.create({
      queueUrl: QueueUrl,
      sqs,
      batchSize: 10,
      waitTimeSeconds: 20, // a real long poll: the advance below wakes it
      messageAttributeNames: ['All'],
      messageSystemAttributeNames: ['ApproximateReceiveCount'],
      handleMessage: async (m: Message) => {
        expect(m.MD5OfMessageAttributes).toBe(md5OfAttributes(m.MessageAttributes!));
        attempts[m.Body!] = (attempts[m.Body!] ?? 0) + 1;
        expect(m.Attributes?.ApproximateReceiveCount).toBe(String(attempts[m.Body!]));
        if (Number(m.MessageAttributes!.index.StringValue) % 2 === 0 && attempts[m.Body!] === 1) {
          throw new Error(`planned failure of ${m.Body}`);
        }
        return m;
      },
    });
    const processingErrors: string[] = [];
    consumer.on('processing_error', (err) => processingErrors.push(err.message));
    consumer.on('message_processed', (m) => processed.add(m.Body!));
    const t0 = Date.now();
    let advanced = false;
    await runUntil(
      consumer,
      () => processed.size === 4,
      async () => {
        if (!advanced && processed.size === 2 && processingErrors.length === 2) {
          advanced = true;
          await server.advance(30);
        }
      },
    );
    expect(Date.now() - t0).toBeLessThan(10_000); // no real 30 s wait
    expect(attempts).toEqual({ 'a-0': 2, 'a-1': 1, 'a-2': 2, 'a-3': 1 });
    expect(processingErrors).toHaveLength(2);
    expect(await counts(QueueUrl)).toEqual([0, 0]);
  });

  test('a poison message moves to the dead-letter queue after maxReceiveCount', async () => {
    const dlq = await queue('jobs-dlq');
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }))
    ).Attributes!.QueueArn!;
    const QueueUrl = await queue('jobs', {
      VisibilityTimeout: '10',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 3 }),
    });
    await sendAll(QueueUrl, ['good', 'poison']);
    let poisonAttempts = 0;
    const processed: string[] = [];
    const consumer = Consumer.create({
      queueUrl: QueueUrl,
      sqs,
      waitTimeSeconds: 1,
      handleMessage: async (m: Message) => {
        if (m.Body === 'poison') {
          poisonAttempts += 1;
          throw new Error('planned: always fails');
        }
        processed.push(m.Body!);
        return m;
      },
    });
    let seen = 0;
    await runUntil(
      consumer,
      () => poisonAttempts === 3 && processed.length === 1,
      async () => {
        if (poisonAttempts > seen) {
          seen = poisonAttempts;
          await server.advance(10);
        }
      },
    );
    expect(processed).toEqual(['good']);
    const dead = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlq, WaitTimeSeconds: 1 }));
    expect(dead.Messages?.map((m) => m.Body)).toEqual(['poison']);
    expect(await counts(QueueUrl)).toEqual([0, 0]);
  });

  test('the heartbeat extends the visibility of a slow message (ChangeMessageVisibility)', async () => {
    const QueueUrl = await queue('slow');
    await sendAll(QueueUrl, ['slow-1']);
    let done = false;
    const consumer = Consumer.create({
      queueUrl: QueueUrl,
      sqs,
      waitTimeSeconds: 1,
      visibilityTimeout: 3,
      heartbeatInterval: 1,
      handleMessage: async (m: Message) => {
        // While the handler works, the message stays invisible to everyone else.
        await sleep(1300);
        done = true;
        return m;
      },
    });
    await runUntil(consumer, () => done && calls.includes('DeleteMessageCommand'));
    expect(calls).toContain('ChangeMessageVisibilityCommand');
    expect(await counts(QueueUrl)).toEqual([0, 0]);
  });

  test('handleMessageBatch on a FIFO queue: group order, failed batch made visible again', async () => {
    const QueueUrl = await queue('events.fifo', { FifoQueue: 'true', ContentBasedDeduplication: 'true' });
    const bodies = ['g1-0', 'g2-0', 'g1-1', 'g2-1', 'g1-2'];
    await sendAll(QueueUrl, bodies, (i) => ({ MessageGroupId: bodies[i].slice(0, 2) }));
    const order: string[] = [];
    let batches = 0;
    const consumer = Consumer.create({
      queueUrl: QueueUrl,
      sqs,
      batchSize: 10,
      waitTimeSeconds: 1,
      terminateVisibilityTimeout: true, // a failed batch is visible again at once
      suppressFifoWarning: true,
      handleMessageBatch: async (messages: Message[]) => {
        batches += 1;
        if (batches === 1) throw new Error('planned batch failure');
        order.push(...messages.map((m) => m.Body!));
        return messages;
      },
    });
    await runUntil(consumer, () => order.length === bodies.length);
    expect(batches).toBeGreaterThanOrEqual(2);
    for (const g of ['g1', 'g2']) {
      expect(order.filter((b) => b.startsWith(g))).toEqual(bodies.filter((b) => b.startsWith(g)));
    }
    expect(calls).toContain('ChangeMessageVisibilityBatchCommand');
    expect(await counts(QueueUrl)).toEqual([0, 0]);
  });
});
