// sqs-producer on a client from startLocalsqs(): batching past ten messages, attributes and
// their MD5s, delays (on the moved clock), FIFO groups and deduplication, failed entries.
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { Producer } from 'sqs-producer';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startLocalsqs, type Localsqs } from '../dist/index.js';
import { md5Hex, md5OfAttributes } from './util';

let server: Localsqs;
let sqs: SQSClient;
const batches: number[] = []; // entries per SendMessageBatch request

beforeAll(async () => {
  server = await startLocalsqs();
  sqs = server.client();
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'SendMessageBatchCommand') {
        batches.push((args.input as { Entries: unknown[] }).Entries.length);
      }
      return next(args);
    },
    { step: 'initialize', name: 'countBatches' },
  );
});
afterAll(() => server.stop());
beforeEach(async () => {
  await server.reset();
  batches.length = 0;
});

const queue = async (QueueName: string, Attributes?: Record<string, string>) =>
  (await sqs.send(new CreateQueueCommand({ QueueName, Attributes }))).QueueUrl as string;

async function drain(QueueUrl: string, extra: object = {}): Promise<Message[]> {
  const out: Message[] = [];
  for (;;) {
    const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, ...extra }));
    if (!got.Messages) return out;
    out.push(...got.Messages);
  }
}

describe('sqs-producer', () => {
  test('25 strings go out as batches of 10, 10 and 5, each with its body MD5', async () => {
    const queueUrl = await queue('bulk');
    const producer = Producer.create({ queueUrl, sqs });
    const bodies = Array.from({ length: 25 }, (_, i) => `msg-${i}`);
    const sent = await producer.send(bodies);
    expect(batches).toEqual([10, 10, 5]);
    expect(sent).toHaveLength(25);
    // sqs-producer numbers string messages by their index within each batch.
    for (const e of sent) expect(e.MessageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await producer.queueSize()).toBe(25);
    const got = await drain(queueUrl);
    expect(got.map((m) => m.Body).sort()).toEqual([...bodies].sort());
    for (const m of got) expect(m.MD5OfBody).toBe(md5Hex(m.Body!));
  });

  test('message attributes and delays', async () => {
    const queueUrl = await queue('rich');
    const producer = Producer.create({ queueUrl, sqs, batchSize: 3 });
    const attrs = {
      kind: { DataType: 'String', StringValue: 'order' },
      total: { DataType: 'Number', StringValue: '12.50' },
      raw: { DataType: 'Binary', BinaryValue: Uint8Array.from([1, 2, 3, 255]) },
    };
    const sent = await producer.send([
      { id: 'now', body: 'now', messageAttributes: attrs },
      { id: 'later', body: 'later', delaySeconds: 60 },
    ]);
    const byId = Object.fromEntries(sent.map((e) => [e.Id, e]));
    expect(byId.now.MD5OfMessageAttributes).toBe(md5OfAttributes(attrs));
    expect(byId.later.MD5OfMessageAttributes).toBeUndefined();

    const first = await drain(queueUrl, { MessageAttributeNames: ['All'] });
    expect(first.map((m) => m.Body)).toEqual(['now']);
    expect(first[0].MD5OfMessageAttributes).toBe(md5OfAttributes(attrs));
    expect(first[0].MessageAttributes?.kind.StringValue).toBe('order');
    await sqs.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: first[0].ReceiptHandle }));
    await server.advance(60); // the delay passes
    expect((await drain(queueUrl)).map((m) => m.Body)).toEqual(['later']);
  });

  test('FIFO: group ids, deduplication ids, order', async () => {
    const queueUrl = await queue('orders.fifo', { FifoQueue: 'true' });
    const producer = Producer.create({ queueUrl, sqs });
    const sent = await producer.send([
      { id: 'a', body: 'first', groupId: 'g', deduplicationId: 'd1' },
      { id: 'b', body: 'second', groupId: 'g', deduplicationId: 'd2' },
      { id: 'c', body: 'again', groupId: 'g', deduplicationId: 'd1' }, // a duplicate of 'a'
      { id: 'd', body: 'third', groupId: 'g', deduplicationId: 'd3' },
    ]);
    expect(sent.map((e) => e.Id).sort()).toEqual(['a', 'b', 'c', 'd']);
    for (const e of sent) expect(e.SequenceNumber).toMatch(/^\d+$/);
    const got = await drain(queueUrl, { MessageSystemAttributeNames: ['All'] });
    expect(got.map((m) => m.Body)).toEqual(['first', 'second', 'third']);
    expect(got.map((m) => m.Attributes?.MessageDeduplicationId)).toEqual(['d1', 'd2', 'd3']);
  });

  test('a failed entry is reported by id; the others are sent', async () => {
    const queueUrl = await queue('strict');
    const producer = Producer.create({ queueUrl, sqs });
    const err = await producer
      .send([
        { id: 'ok-1', body: 'fine' },
        { id: 'bad', body: 'not allowed: \u0000' }, // outside the characters SQS accepts
        { id: 'ok-2', body: 'also fine' },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ message: 'Failed to send messages: bad', failedMessages: ['bad'] });
    expect((await drain(queueUrl)).map((m) => m.Body).sort()).toEqual(['also fine', 'fine']);
  });

  test('a missing queue rejects with QueueDoesNotExist', async () => {
    const producer = Producer.create({ queueUrl: server.queueUrl('nope'), sqs });
    await expect(producer.send('x')).rejects.toMatchObject({ name: 'QueueDoesNotExist' });
  });
});
