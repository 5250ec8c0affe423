'use strict';
// sqs-consumer (on the pinned @aws-sdk/client-sqs, AWS JSON 1.0): a consumer loop processes
// messages, fails some of them (the handler throws) and sees them redelivered, then stops.
//
//   Phase 1: handleMessage on a queue with VisibilityTimeout 1: failed messages come back when
//            their visibility timeout expires (real clock), and are then deleted.
//   Phase 2: handleMessageBatch with terminateVisibilityTimeout: a failing batch is made visible
//            again at once (ChangeMessageVisibilityBatch) and deleted with DeleteMessageBatch.
//
//   node consumer.js --endpoint http://127.0.0.1:PORT

const { once } = require('events');
const {
  SQSClient, CreateQueueCommand, SendMessageBatchCommand, GetQueueAttributesCommand, DeleteQueueCommand,
} = require('@aws-sdk/client-sqs');
const { Consumer } = require('sqs-consumer');
const {
  md5OfAttributes, assert, assertEq, Recorder, runSteps, parseArgs, guard,
} = require('./common');

const NAME = 'sqs-consumer';

async function main() {
  guard(120);
  const { endpoint } = parseArgs();
  const pkg = JSON.parse(require('fs').readFileSync(require('path').join(__dirname, '..', 'node_modules', 'sqs-consumer', 'package.json'), 'utf8'));
  const sdk = require('@aws-sdk/client-sqs/package.json');
  console.log(`${NAME}: sqs-consumer ${pkg.version} on @aws-sdk/client-sqs ${sdk.version}, protocol expected JSON`);
  const recorder = new Recorder();
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  sqs.middlewareStack.add((next) => async (args) => {
    const r = args.request;
    const url = `${r.protocol}//${r.hostname}${r.port ? ':' + r.port : ''}${r.path}`;
    recorder.record(r.method, url, r.headers, r.body);
    return next(args);
  }, { step: 'finalizeRequest', name: 'compatProtocolEvidence' });
  const send = (cmd) => sqs.send(cmd);
  const prefix = `compat-${NAME}-${process.pid}`;
  const q = {};

  const sendN = async (QueueUrl, n, tag) => {
    const Entries = [];
    for (let i = 0; i < n; i += 1) {
      Entries.push({
        Id: `e${i}`,
        MessageBody: `${tag}-${i}`,
        MessageAttributes: { index: { DataType: 'Number', StringValue: String(i) } },
      });
    }
    const res = await send(new SendMessageBatchCommand({ QueueUrl, Entries }));
    assertEq((res.Failed || []).length, 0, 'failed sends');
  };
  const counts = async (QueueUrl) => {
    const a = (await send(new GetQueueAttributesCommand({
      QueueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }))).Attributes;
    return [Number(a.ApproximateNumberOfMessages), Number(a.ApproximateNumberOfMessagesNotVisible)];
  };

  // Runs `consumer` until `done()` is true (or the deadline), then stops it and waits for 'stopped'.
  // Errors from the planned handler failures are expected ('error' is how sqs-consumer reports
  // a failed batch handler); anything else fails the step.
  const runUntil = async (consumer, done, seconds) => {
    const errors = [];
    consumer.on('error', (err) => {
      if (!/planned/.test(err.message)) errors.push(err);
    });
    consumer.start();
    const deadline = Date.now() + seconds * 1000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const stopped = once(consumer, 'stopped');
    consumer.stop();
    await stopped;
    assert(!consumer.status.isRunning, 'consumer still running after stop');
    assertEq(errors.map((e) => `${e.name}: ${e.message}`), [], 'consumer errors');
  };

  const failures = await runSteps([
    ['create queues', async () => {
      q.a = (await send(new CreateQueueCommand({ QueueName: `${prefix}-a`, Attributes: { VisibilityTimeout: '1' } }))).QueueUrl;
      q.b = (await send(new CreateQueueCommand({ QueueName: `${prefix}-b` }))).QueueUrl;
    }],
    ['handler fails, redelivered', async () => {
      await sendN(q.a, 6, 'a');
      const attempts = {};
      const processed = new Set();
      const processingErrors = [];
      const consumer = Consumer.create({
        queueUrl: q.a,
        sqs,
        batchSize: 10,
        waitTimeSeconds: 1,
        messageAttributeNames: ['All'],
        messageSystemAttributeNames: ['ApproximateReceiveCount'],
        handleMessage: async (m) => {
          assertEq(m.MD5OfMessageAttributes, md5OfAttributes(m.MessageAttributes), 'attribute MD5');
          const index = Number(m.MessageAttributes.index.StringValue);
          attempts[m.Body] = (attempts[m.Body] || 0) + 1;
          assertEq(m.Attributes.ApproximateReceiveCount, String(attempts[m.Body]), `receive count of ${m.Body}`);
          if (index % 2 === 0 && attempts[m.Body] === 1) throw new Error(`planned failure of ${m.Body}`);
          return m;
        },
      });
      consumer.on('processing_error', (err) => processingErrors.push(err.message));
      consumer.on('message_processed', (m) => processed.add(m.Body));
      const t0 = Date.now();
      await runUntil(consumer, () => processed.size === 6, 15);
      console.log(`       6 messages processed in ${((Date.now() - t0) / 1000).toFixed(2)}s, attempts ${JSON.stringify(attempts)}`);
      assertEq([...processed].sort(), ['a-0', 'a-1', 'a-2', 'a-3', 'a-4', 'a-5'], 'processed messages');
      assertEq(processingErrors.length, 3, 'processing errors');
      assertEq(attempts, { 'a-0': 2, 'a-1': 1, 'a-2': 2, 'a-3': 1, 'a-4': 2, 'a-5': 1 }, 'attempts per message');
      assertEq(await counts(q.a), [0, 0], 'messages left (visible, in flight)');
    }],
    ['batch handler + terminate', async () => {
      await sendN(q.b, 4, 'b');
      let batches = 0;
      const seen = {};
      const processed = new Set();
      const consumer = Consumer.create({
        queueUrl: q.b,
        sqs,
        batchSize: 10,
        waitTimeSeconds: 1,
        terminateVisibilityTimeout: true,
        messageSystemAttributeNames: ['ApproximateReceiveCount'],
        handleMessageBatch: async (messages) => {
          batches += 1;
          for (const m of messages) seen[m.Body] = m.Attributes.ApproximateReceiveCount;
          if (batches === 1) throw new Error('planned batch failure');
          return messages;
        },
      });
      consumer.on('message_processed', (m) => processed.add(m.Body));
      await runUntil(consumer, () => processed.size === 4, 15);
      assertEq([...processed].sort(), ['b-0', 'b-1', 'b-2', 'b-3'], 'processed messages');
      assert(batches >= 2, `expected a redelivered batch, saw ${batches} batch(es)`);
      assert(Object.values(seen).some((c) => Number(c) >= 2), 'a failed message came back', seen);
      assertEq(await counts(q.b), [0, 0], 'messages left (visible, in flight)');
    }],
    ['delete queues', async () => {
      for (const url of [q.a, q.b]) await send(new DeleteQueueCommand({ QueueUrl: url }));
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
