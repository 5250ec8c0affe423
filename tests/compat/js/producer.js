'use strict';
// sqs-producer (on the pinned @aws-sdk/client-sqs, AWS JSON 1.0): the producer batches what it
// is given into SendMessageBatch requests of ten; the messages arrive with their attributes and
// MD5s, FIFO group and deduplication ids hold, delays hold, and failures come back by id.
//
//   node producer.js --endpoint http://127.0.0.1:PORT

const {
  SQSClient, CreateQueueCommand, ReceiveMessageCommand, DeleteMessageBatchCommand, DeleteQueueCommand,
} = require('@aws-sdk/client-sqs');
const { Producer } = require('sqs-producer');
const {
  md5Hex, md5OfAttributes, sleep, assert, assertEq, Recorder, runSteps, parseArgs, guard, plainAttrs, ATTRS_BINARY,
} = require('./common');

const NAME = 'sqs-producer';

async function main() {
  guard(120);
  const { endpoint } = parseArgs();
  const pkg = JSON.parse(require('fs').readFileSync(require('path').join(__dirname, '..', 'node_modules', 'sqs-producer', 'package.json'), 'utf8'));
  const sdk = require('@aws-sdk/client-sqs/package.json');
  console.log(`${NAME}: sqs-producer ${pkg.version} on @aws-sdk/client-sqs ${sdk.version}, protocol expected JSON`);
  const recorder = new Recorder();
  const batches = []; // entries per SendMessageBatch request
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  assert(typeof sqs.config.md5 === 'function', 'MD5 validation must stay on');
  sqs.middlewareStack.add((next) => async (args) => {
    const r = args.request;
    const url = `${r.protocol}//${r.hostname}${r.port ? ':' + r.port : ''}${r.path}`;
    recorder.record(r.method, url, r.headers, r.body);
    return next(args);
  }, { step: 'finalizeRequest', name: 'compatProtocolEvidence' });
  sqs.middlewareStack.add((next, context) => async (args) => {
    if (context.commandName === 'SendMessageBatchCommand') batches.push(args.input.Entries.length);
    return next(args);
  }, { step: 'initialize', name: 'compatCountBatches' });
  const send = (cmd) => sqs.send(cmd);
  const prefix = `compat-${NAME}-${process.pid}`;
  const q = {};

  // Receives until the queue answers empty, deleting what it got.
  const drain = async (QueueUrl, extra = {}) => {
    const out = [];
    for (;;) {
      const got = (await send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10, ...extra }))).Messages || [];
      if (got.length === 0) return out;
      out.push(...got);
      await send(new DeleteMessageBatchCommand({
        QueueUrl, Entries: got.map((m, i) => ({ Id: `d${i}`, ReceiptHandle: m.ReceiptHandle })),
      }));
    }
  };

  const ATTRS = {
    color: { DataType: 'String', StringValue: 'blue \u00e9\u6f22' },
    timestamp: { DataType: 'Number.java.lang.Long', StringValue: '1493147359900' },
    blob: { DataType: 'Binary', BinaryValue: ATTRS_BINARY },
  };

  const failures = await runSteps([
    ['create queues', async () => {
      q.std = (await send(new CreateQueueCommand({ QueueName: `${prefix}-std` }))).QueueUrl;
      q.fifo = (await send(new CreateQueueCommand({ QueueName: `${prefix}-fifo.fifo`, Attributes: { FifoQueue: 'true' } }))).QueueUrl;
    }],
    ['25 messages in batches of ten', async () => {
      const producer = Producer.create({ queueUrl: q.std, sqs });
      const bodies = Array.from({ length: 25 }, (_, i) => `msg-${i}`);
      batches.length = 0;
      const sent = await producer.send(bodies);
      assertEq(batches, [10, 10, 5], 'entries per SendMessageBatch');
      assertEq(sent.length, 25, 'successful entries');
      assertEq(await producer.queueSize(), 25, 'queueSize()');
      const got = await drain(q.std);
      assertEq(got.map((m) => m.Body).sort(), [...bodies].sort(), 'bodies received');
      for (const m of got) assertEq(m.MD5OfBody, md5Hex(m.Body), `MD5OfBody of ${m.Body}`);
    }],
    ['attributes and their MD5s', async () => {
      const producer = Producer.create({ queueUrl: q.std, sqs });
      const sent = await producer.send([
        { id: 'with', body: 'with attributes', messageAttributes: ATTRS },
        { id: 'without', body: 'without' },
      ]);
      const byId = Object.fromEntries(sent.map((e) => [e.Id, e]));
      assertEq(byId.with.MD5OfMessageAttributes, md5OfAttributes(ATTRS), 'sent MD5OfMessageAttributes');
      assertEq(byId.with.MD5OfMessageBody, md5Hex('with attributes'), 'sent MD5OfMessageBody');
      assertEq(byId.without.MD5OfMessageAttributes, undefined, 'no attributes, no MD5');
      const got = await drain(q.std, { MessageAttributeNames: ['All'] });
      const m = got.find((x) => x.Body === 'with attributes');
      assert(m, 'message with attributes received', got);
      assertEq(plainAttrs(m.MessageAttributes), plainAttrs(ATTRS), 'attributes received');
      assertEq(m.MD5OfMessageAttributes, md5OfAttributes(ATTRS), 'received MD5OfMessageAttributes');
    }],
    ['delay', async () => {
      const producer = Producer.create({ queueUrl: q.std, sqs });
      await producer.send([{ id: 'later', body: 'later', delaySeconds: 1 }]);
      assertEq((await drain(q.std)).length, 0, 'visible before its delay');
      await sleep(1100);
      assertEq((await drain(q.std)).map((m) => m.Body), ['later'], 'after its delay');
    }],
    ['fifo group + deduplication ids', async () => {
      const producer = Producer.create({ queueUrl: q.fifo, sqs });
      const sent = await producer.send([
        { id: 'a', body: 'first', groupId: 'g', deduplicationId: 'd1' },
        { id: 'b', body: 'second', groupId: 'g', deduplicationId: 'd2' },
        { id: 'c', body: 'again', groupId: 'g', deduplicationId: 'd1' },
        { id: 'd', body: 'third', groupId: 'g', deduplicationId: 'd3' },
      ]);
      assertEq(sent.map((e) => e.Id).sort(), ['a', 'b', 'c', 'd'], 'successful entries');
      for (const e of sent) assert(/^\d+$/.test(e.SequenceNumber || ''), 'SequenceNumber', e);
      const got = [];
      for (let i = 0; i < 5; i += 1) {
        const batch = await drain(q.fifo, { MessageSystemAttributeNames: ['All'] });
        got.push(...batch);
        if (batch.length === 0) break;
      }
      assertEq(got.map((m) => m.Body), ['first', 'second', 'third'], 'bodies in order, duplicate dropped');
      assertEq(got.map((m) => m.Attributes.MessageDeduplicationId), ['d1', 'd2', 'd3'], 'deduplication ids');
      assertEq([...new Set(got.map((m) => m.Attributes.MessageGroupId))], ['g'], 'group ids');
    }],
    ['failed entry by id', async () => {
      const producer = Producer.create({ queueUrl: q.std, sqs });
      let err;
      try {
        await producer.send([{ id: 'ok-1', body: 'fine' }, { id: 'bad', body: 'not allowed: \u0000' }, { id: 'ok-2', body: 'also fine' }]);
      } catch (e) {
        err = e;
      }
      assert(err, 'a batch with an invalid body should reject');
      assertEq(err.failedMessages, ['bad'], 'failedMessages');
      assertEq((await drain(q.std)).map((m) => m.Body).sort(), ['also fine', 'fine'], 'the others were sent');
    }],
    ['missing queue error', async () => {
      const producer = Producer.create({ queueUrl: q.std.replace(/-std$/, '-nope'), sqs });
      let err;
      try {
        await producer.send('x');
      } catch (e) {
        err = e;
      }
      assertEq(err && err.name, 'QueueDoesNotExist', 'error name');
      assertEq(err.Code, 'AWS.SimpleQueueService.NonExistentQueue', 'legacy code');
      assertEq(err.$metadata.httpStatusCode, 400, 'HTTP status');
    }],
    ['delete queues', async () => {
      for (const url of [q.std, q.fifo]) await send(new DeleteQueueCommand({ QueueUrl: url }));
    }],
    ['protocol evidence', async () => recorder.check(NAME, 'json')],
  ]);
  sqs.destroy();
  process.exit(failures.length ? 1 : 0);
}

main().catch((err) => {
  console.log(`  FAIL ${err.stack}`);
  process.exit(1);
});
