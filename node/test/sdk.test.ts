// @aws-sdk/client-sqs against a server from startLocalsqs(), with the SDK's defaults (its MD5
// checks of bodies on SendMessage, SendMessageBatch and ReceiveMessage on); attribute MD5s are
// computed here, independently of the server.
import {
  ChangeMessageVisibilityBatchCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListDeadLetterSourceQueuesCommand,
  ListMessageMoveTasksCommand,
  QueueDoesNotExist,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  StartMessageMoveTaskCommand,
  TooManyEntriesInBatchRequest,
  type MessageAttributeValue,
  type SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { startLocalsqs, type Localsqs } from '../dist/index.js';
import { md5Hex, md5OfAttributes, plain, until } from './util';

let server: Localsqs;
let sqs: SQSClient;

beforeAll(async () => {
  server = await startLocalsqs();
  sqs = server.client({ maxAttempts: 1 }); // no retry may hide a server error
});
afterAll(() => server.stop());
beforeEach(() => server.reset());

const queue = async (name: string, Attributes?: Record<string, string>) =>
  (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes }))).QueueUrl as string;

const ATTRS: Record<string, MessageAttributeValue> = {
  color: { DataType: 'String', StringValue: 'blue \u00e9\u6f22' },
  timestamp: { DataType: 'Number.java.lang.Long', StringValue: '1493147359900' },
  blob: { DataType: 'Binary', BinaryValue: Uint8Array.from([0x00, 0x01, 0xfe, 0xff, 0x80, 0x0a, 0x7f]) },
};
const BODY = 'hello <localsqs> & "friends" \u00e9';

describe('@aws-sdk/client-sqs', () => {
  test('message attributes and their MD5s, system attributes', async () => {
    const QueueUrl = await queue('attrs');
    const sent = await sqs.send(
      new SendMessageCommand({ QueueUrl, MessageBody: BODY, MessageAttributes: ATTRS }),
    );
    expect(sent.MD5OfMessageBody).toBe(md5Hex(BODY));
    expect(sent.MD5OfMessageAttributes).toBe(md5OfAttributes(ATTRS));

    const got = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        WaitTimeSeconds: 1,
      }),
    );
    expect(got.Messages).toHaveLength(1);
    const m = got.Messages![0];
    expect(m.MessageId).toBe(sent.MessageId);
    expect(m.Body).toBe(BODY);
    expect(m.MD5OfBody).toBe(md5Hex(BODY));
    expect(plain(m.MessageAttributes)).toEqual(plain(ATTRS));
    expect(m.MD5OfMessageAttributes).toBe(md5OfAttributes(ATTRS));
    expect(m.Attributes).toMatchObject({ ApproximateReceiveCount: '1', SenderId: expect.any(String) });
    for (const k of ['SentTimestamp', 'ApproximateFirstReceiveTimestamp'] as const) {
      expect(Number(m.Attributes?.[k])).toBeGreaterThan(1.6e12);
    }
    // Only the attributes asked for.
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'b', MessageAttributes: ATTRS }));
    const some = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MessageAttributeNames: ['color'] }));
    const one = some.Messages![0];
    expect(Object.keys(one.MessageAttributes ?? {})).toEqual(['color']);
    expect(one.MD5OfMessageAttributes).toBe(md5OfAttributes({ color: ATTRS.color }));
    expect(one.Attributes).toBeUndefined();
  });

  test('batches: send with per-entry MD5s, change visibility and delete with a failed entry', async () => {
    const QueueUrl = await queue('batches');
    const num = { n: { DataType: 'Number', StringValue: '7' } };
    const res = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl,
        Entries: [0, 1, 2].map((i) => ({
          Id: `m${i}`,
          MessageBody: `batch-${i}`,
          MessageAttributes: i === 0 ? num : undefined,
          DelaySeconds: i === 2 ? 0 : undefined,
        })),
      }),
    );
    expect(res.Failed ?? []).toEqual([]);
    expect(res.Successful?.map((e) => e.Id).sort()).toEqual(['m0', 'm1', 'm2']);
    for (const e of res.Successful!) {
      expect(e.MD5OfMessageBody).toBe(md5Hex(`batch-${e.Id!.slice(1)}`));
      if (e.Id === 'm0') expect(e.MD5OfMessageAttributes).toBe(md5OfAttributes(num));
      else expect(e.MD5OfMessageAttributes).toBeUndefined();
    }
    const got = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const handles: Record<string, string> = Object.fromEntries(
      got.Messages!.map((m) => [m.Body!, m.ReceiptHandle!]),
    );
    expect(Object.keys(handles).sort()).toEqual(['batch-0', 'batch-1', 'batch-2']);

    const cv = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl,
        Entries: [
          { Id: 'ok', ReceiptHandle: handles['batch-0'], VisibilityTimeout: 0 },
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle', VisibilityTimeout: 0 },
        ],
      }),
    );
    expect(cv.Successful?.map((e) => e.Id)).toEqual(['ok']);
    expect(cv.Failed).toEqual([
      expect.objectContaining({ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true }),
    ]);
    const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl }));
    expect(again.Messages?.map((m) => m.Body)).toEqual(['batch-0']);
    handles['batch-0'] = again.Messages![0].ReceiptHandle!;

    const del = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl,
        Entries: [
          ...Object.values(handles).map((ReceiptHandle, i) => ({ Id: `d${i}`, ReceiptHandle })),
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle' },
        ],
      }),
    );
    expect(del.Successful?.map((e) => e.Id).sort()).toEqual(['d0', 'd1', 'd2']);
    expect(del.Failed).toEqual([
      expect.objectContaining({ Id: 'bad', Code: 'ReceiptHandleIsInvalid', SenderFault: true }),
    ]);
    const counts = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['All'] }));
    expect(counts.Attributes).toMatchObject({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
    });
  });

  test('FIFO: order within a group, deduplication, sequence numbers', async () => {
    const QueueUrl = await queue('orders.fifo', { FifoQueue: 'true' });
    const seqs: string[] = [];
    for (const [i, dedup] of ['d1', 'd2', 'd1', 'd3'].entries()) {
      const out = await sqs.send(
        new SendMessageCommand({
          QueueUrl,
          MessageBody: `f-${i}`,
          MessageGroupId: 'g1',
          MessageDeduplicationId: dedup,
        }),
      );
      seqs.push(out.SequenceNumber!);
    }
    expect(seqs[2]).toBe(seqs[0]); // a duplicate answers with the first send's sequence number
    expect(BigInt(seqs[1])).toBeGreaterThan(BigInt(seqs[0]));
    expect(BigInt(seqs[3])).toBeGreaterThan(BigInt(seqs[1]));

    const bodies: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const got = await sqs.send(
        new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 1, MessageSystemAttributeNames: ['All'] }),
      );
      if (!got.Messages) break;
      const m = got.Messages[0];
      expect(m.Attributes).toMatchObject({
        MessageGroupId: 'g1',
        MessageDeduplicationId: expect.any(String),
      });
      bodies.push(m.Body!);
      await sqs.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));
    }
    expect(bodies).toEqual(['f-0', 'f-1', 'f-3']);
  });

  test('dead-letter queue: redrive after maxReceiveCount (on a moved clock), then a move task back', async () => {
    const dlq = await queue('work-dlq');
    const dlqArn = (
      await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq, AttributeNames: ['QueueArn'] }))
    ).Attributes!.QueueArn!;
    const src = await queue('work', {
      VisibilityTimeout: '30',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqArn, maxReceiveCount: 2 }),
    });
    const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: src, MessageBody: 'poison' }));
    for (let i = 0; i < 2; i += 1) {
      const got = await sqs.send(new ReceiveMessageCommand({ QueueUrl: src }));
      expect(got.Messages?.[0].MessageId).toBe(MessageId); // the consumer fails: no delete
      await server.advance(30); // the visibility timeout passes at once
    }
    expect((await sqs.send(new ReceiveMessageCommand({ QueueUrl: src }))).Messages).toBeUndefined();
    const dead = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: dlq,
        MessageSystemAttributeNames: ['All'],
        VisibilityTimeout: 0,
      }),
    );
    expect(dead.Messages?.[0]).toMatchObject({ MessageId, Body: 'poison' });
    expect(dead.Messages?.[0].Attributes?.DeadLetterQueueSourceArn).toBe(dlqArn.replace(/work-dlq$/, 'work'));
    const sources = await sqs.send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: dlq }));
    expect(sources.queueUrls).toEqual([src]);

    const task = await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: dlqArn }));
    expect(task.TaskHandle).toBeTruthy();
    await until(async () => {
      const t = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: dlqArn }));
      return t.Results?.[0]?.Status === 'COMPLETED';
    });
    const back = await sqs.send(new ReceiveMessageCommand({ QueueUrl: src, WaitTimeSeconds: 1 }));
    expect(back.Messages?.[0].Body).toBe('poison');
  });

  test('long polling: woken by a send; an empty wait ends when the moved clock says so', async () => {
    const QueueUrl = await queue('poll');
    const t0 = Date.now();
    const poll = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 10 }));
    await new Promise((r) => setTimeout(r, 300));
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: 'wake-up' }));
    const got = await poll;
    expect(got.Messages?.map((m) => m.Body)).toEqual(['wake-up']);
    expect(Date.now() - t0).toBeLessThan(5000);

    const t1 = Date.now();
    const empty = sqs.send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 20 }));
    await new Promise((r) => setTimeout(r, 200));
    await server.advance(20);
    expect((await empty).Messages).toBeUndefined();
    expect(Date.now() - t1).toBeLessThan(5000);
  });

  test('errors: modeled exceptions with the legacy codes, HTTP status and request ids', async () => {
    const missing = await sqs.send(new GetQueueUrlCommand({ QueueName: 'nope' })).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(QueueDoesNotExist);
    expect(missing).toMatchObject({
      name: 'QueueDoesNotExist',
      Code: 'AWS.SimpleQueueService.NonExistentQueue',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: expect.any(String) },
    });
    const sendMissing = await sqs
      .send(new SendMessageCommand({ QueueUrl: server.queueUrl('nope'), MessageBody: 'x' }))
      .catch((e: unknown) => e);
    expect(sendMissing).toBeInstanceOf(QueueDoesNotExist);

    const QueueUrl = await queue('errors');
    const tooMany = await sqs
      .send(
        new SendMessageBatchCommand({
          QueueUrl,
          Entries: Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, MessageBody: 'x' })),
        }),
      )
      .catch((e: unknown) => e);
    expect(tooMany).toBeInstanceOf(TooManyEntriesInBatchRequest);
    expect(tooMany).toMatchObject({ Code: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest' });

    const invalid = await sqs
      .send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 11 }))
      .catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(SQSServiceException);
    expect(invalid).toMatchObject({ name: 'InvalidParameterValue', $metadata: { httpStatusCode: 400 } });

    const badHandle = await sqs
      .send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: 'garbage' }))
      .catch((e: unknown) => e);
    // 404, as SQS's model has it (botocore and the SDKs carry the same status).
    expect(badHandle).toMatchObject({ name: 'ReceiptHandleIsInvalid', $metadata: { httpStatusCode: 404 } });

    const badAttr = await sqs
      .send(new CreateQueueCommand({ QueueName: 'bad', Attributes: { VisibilityTimeout: '99999' } }))
      .catch((e: unknown) => e);
    expect(badAttr).toMatchObject({ name: 'InvalidAttributeValue', $metadata: { httpStatusCode: 400 } });
  });
});
