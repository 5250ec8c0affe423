'use strict';
// The full compatibility scenario through @aws-sdk/client-sqs (JS SDK v3, AWS JSON 1.0).
// Checksum validation (`md5`) and `useQueueUrlAsEndpoint` are left at their defaults (on).
//
//   node v3.js --endpoint http://127.0.0.1:PORT

const sqsLib = require('@aws-sdk/client-sqs');
const {
  SQSClient, CreateQueueCommand, ListQueuesCommand, SendMessageCommand, ReceiveMessageCommand,
  DeleteMessageCommand, SendMessageBatchCommand, DeleteMessageBatchCommand,
  ChangeMessageVisibilityBatchCommand, GetQueueAttributesCommand, SetQueueAttributesCommand,
  TagQueueCommand, UntagQueueCommand, ListQueueTagsCommand, PurgeQueueCommand, GetQueueUrlCommand,
  DeleteQueueCommand, ListDeadLetterSourceQueuesCommand, QueueDoesNotExist,
} = sqsLib;
const {
  md5Hex, md5OfAttributes, sleep, assert, assertEq, Recorder, runSteps, parseArgs, guard, plainAttrs, ATTRS_BINARY,
} = require('./common');

const NAME = 'js-v3';
const NON_EXISTENT = 'AWS.SimpleQueueService.NonExistentQueue';

async function main() {
  guard(120);
  const { endpoint } = parseArgs();
  const version = require('@aws-sdk/client-sqs/package.json').version;
  console.log(`${NAME}: @aws-sdk/client-sqs ${version}, protocol expected JSON`);
  const recorder = new Recorder();
  const sqs = new SQSClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  });
  // Defaults kept: body-MD5 validation on (md5 is the hash constructor) and requests sent to
  // the origin of the queue URL.
  assert(typeof sqs.config.md5 === 'function', 'MD5 validation must stay on');
  assert(sqs.config.useQueueUrlAsEndpoint === true, 'useQueueUrlAsEndpoint must stay on');
  sqs.middlewareStack.add((next) => async (args) => {
    const r = args.request;
    const url = `${r.protocol}//${r.hostname}${r.port ? ':' + r.port : ''}${r.path}`;
    recorder.record(r.method, url, r.headers, r.body);
    return next(args);
  }, { step: 'finalizeRequest', name: 'compatProtocolEvidence' });

  const send = (cmd) => sqs.send(cmd);
  const prefix = `compat-${NAME}-${process.pid}`;
  const q = {};
  const createQueue = async (suffix, Attributes) => (await send(new CreateQueueCommand({
    QueueName: `${prefix}-${suffix}`, Attributes,
  }))).QueueUrl;
  const arn = async (QueueUrl) => (await send(new GetQueueAttributesCommand({
    QueueUrl, AttributeNames: ['QueueArn'],
  }))).Attributes.QueueArn;
  const receive = async (QueueUrl, extra = {}) => (await send(new ReceiveMessageCommand({
    QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, ...extra,
  }))).Messages || [];
  const del = (QueueUrl, m) => send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: m.ReceiptHandle }));

  const ATTRS = {
    color: { DataType: 'String', StringValue: 'blue \u00e9\u6f22' },
    timestamp: { DataType: 'Number.java.lang.Long', StringValue: '1493147359900' },
    blob: { DataType: 'Binary', BinaryValue: ATTRS_BINARY },
  };

  const failures = await runSteps([
    ['create queues', async () => {
      q.std = await createQueue('std');
      q.fifo = await createQueue('fifo.fifo', { FifoQueue: 'true' });
      assert(q.std.endsWith(`/000000000000/${prefix}-std`), q.std);
      const urls = (await send(new ListQueuesCommand({ QueueNamePrefix: prefix }))).QueueUrls || [];
      assert(urls.includes(q.std) && urls.includes(q.fifo), urls);
    }],
    ['send/receive attributes', async () => {
      const body = 'hello <localsqs> & "friends" \u00e9';
      const sent = await send(new SendMessageCommand({ QueueUrl: q.std, MessageBody: body, MessageAttributes: ATTRS }));
      assertEq(sent.MD5OfMessageBody, md5Hex(Buffer.from(body)), 'MD5OfMessageBody');
      assertEq(sent.MD5OfMessageAttributes, md5OfAttributes(ATTRS), 'MD5OfMessageAttributes');
      const msgs = await receive(q.std, { MessageAttributeNames: ['All'], MessageSystemAttributeNames: ['All'], WaitTimeSeconds: 2 });
      assertEq(msgs.length, 1, 'messages received');
      const m = msgs[0];
      assertEq(m.MessageId, sent.MessageId, 'MessageId');
      assertEq(m.Body, body, 'Body');
      assertEq(m.MD5OfBody, md5Hex(Buffer.from(body)), 'MD5OfBody');
      assertEq(plainAttrs(m.MessageAttributes), plainAttrs(ATTRS), 'MessageAttributes');
      assertEq(m.MD5OfMessageAttributes, md5OfAttributes(m.MessageAttributes), 'MD5OfMessageAttributes (receive)');
      assertEq(m.Attributes.ApproximateReceiveCount, '1', 'ApproximateReceiveCount');
      await del(q.std, m);
      assertEq((await receive(q.std)).length, 0, 'left after delete');
    }],
    ['batch send/delete/visibility', async () => {
      const entries = [0, 1, 2].map((i) => ({ Id: `m${i}`, MessageBody: `batch-${i}` }));
      entries[0].MessageAttributes = { n: { DataType: 'Number', StringValue: '7' } };
      const res = await send(new SendMessageBatchCommand({ QueueUrl: q.std, Entries: entries }));
      assertEq((res.Failed || []).length, 0, 'failed sends');
      const ok = Object.fromEntries(res.Successful.map((e) => [e.Id, e]));
      for (const e of entries) assertEq(ok[e.Id].MD5OfMessageBody, md5Hex(e.MessageBody), `MD5 of ${e.Id}`);
      assertEq(ok.m0.MD5OfMessageAttributes, md5OfAttributes(entries[0].MessageAttributes), 'batch attribute MD5');
      const got = {};
      const deadline = Date.now() + 5000;
      while (Object.keys(got).length < 3 && Date.now() < deadline) {
        for (const m of await receive(q.std, { WaitTimeSeconds: 1 })) got[m.Body] = m;
      }
      assertEq(Object.keys(got).sort(), ['batch-0', 'batch-1', 'batch-2'], 'batch received');
      const handles = [0, 1, 2].map((i) => got[`batch-${i}`].ReceiptHandle);
      const vis = await send(new ChangeMessageVisibilityBatchCommand({
        QueueUrl: q.std,
        Entries: [
          { Id: 'ok', ReceiptHandle: handles[0], VisibilityTimeout: 60 },
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle', VisibilityTimeout: 60 },
        ],
      }));
      assertEq((vis.Successful || []).map((e) => e.Id), ['ok'], 'visibility Successful');
      assertEq((vis.Failed || []).map((e) => [e.Id, e.Code, e.SenderFault]), [['bad', 'ReceiptHandleIsInvalid', true]], 'visibility Failed');
      const dr = await send(new DeleteMessageBatchCommand({
        QueueUrl: q.std,
        Entries: handles.map((h, i) => ({ Id: `d${i}`, ReceiptHandle: h })).concat([{ Id: 'bad', ReceiptHandle: 'not-a-receipt-handle' }]),
      }));
      assertEq((dr.Successful || []).map((e) => e.Id).sort(), ['d0', 'd1', 'd2'], 'delete Successful');
      assertEq((dr.Failed || []).map((e) => [e.Id, e.Code, e.SenderFault]), [['bad', 'ReceiptHandleIsInvalid', true]], 'delete Failed');
      assertEq((await receive(q.std)).length, 0, 'left after batch delete');
    }],
    ['long poll woken by send', async () => {
      const t0 = Date.now();
      const poll = receive(q.std, { WaitTimeSeconds: 10 }).then((msgs) => ({ msgs, elapsed: (Date.now() - t0) / 1000 }));
      await sleep(500);
      await send(new SendMessageCommand({ QueueUrl: q.std, MessageBody: 'wake-up' }));
      const { msgs, elapsed } = await poll;
      assertEq(msgs.map((m) => m.Body), ['wake-up'], 'long poll result');
      assert(elapsed > 0.3 && elapsed < 5, `long poll returned after ${elapsed}s`);
      console.log(`       long poll woke after ${elapsed.toFixed(2)}s`);
      await del(q.std, msgs[0]);
    }],
    ['visibility timeout expiry', async () => {
      await send(new SendMessageCommand({ QueueUrl: q.std, MessageBody: 'vis' }));
      const t0 = Date.now();
      const first = await receive(q.std, { VisibilityTimeout: 1 });
      assertEq(first.map((m) => m.Body), ['vis'], 'first receive');
      const hidden = await receive(q.std);
      // (a stalled machine may legitimately see it again)
      if (Date.now() - t0 < 900) assertEq(hidden.length, 0, 'visible during its visibility timeout');
      await sleep(1100);
      const again = await receive(q.std, { MessageSystemAttributeNames: ['ApproximateReceiveCount'] });
      assertEq(again.map((m) => m.Body), ['vis'], 'receive after expiry');
      assertEq(again[0].MessageId, first[0].MessageId, 'same message');
      assertEq(again[0].Attributes.ApproximateReceiveCount, '2', 'ApproximateReceiveCount');
      await del(q.std, again[0]);
    }],
    ['fifo order + dedup', async () => {
      const seqs = [];
      const dedups = ['d1', 'd2', 'd1', 'd3'];
      for (let i = 0; i < dedups.length; i += 1) {
        const r = await send(new SendMessageCommand({
          QueueUrl: q.fifo, MessageBody: `f-${i}`, MessageGroupId: 'g1', MessageDeduplicationId: dedups[i],
        }));
        if (i !== 2) {
          assert(/^\d+$/.test(r.SequenceNumber || ''), 'SequenceNumber', r);
          seqs.push(BigInt(r.SequenceNumber));
        }
      }
      assert(seqs[0] < seqs[1] && seqs[1] < seqs[2], 'increasing sequence numbers', seqs.map(String));
      const bodies = [];
      for (let round = 0; round < 10; round += 1) {
        const msgs = await receive(q.fifo, { MessageSystemAttributeNames: ['All'] });
        if (msgs.length === 0) break;
        for (const m of msgs) {
          assertEq(m.Attributes.MessageGroupId, 'g1', 'MessageGroupId');
          assert(/^\d+$/.test(m.Attributes.SequenceNumber || ''), 'received SequenceNumber', m.Attributes);
          bodies.push(m.Body);
          await del(q.fifo, m);
        }
      }
      assertEq(bodies, ['f-0', 'f-1', 'f-3'], 'FIFO bodies in order, duplicate dropped');
    }],
    ['dead-letter redrive', async () => {
      q.dlq = await createQueue('dlq');
      const policy = JSON.stringify({ deadLetterTargetArn: await arn(q.dlq), maxReceiveCount: 1 });
      q.src = await createQueue('src', { VisibilityTimeout: '0', RedrivePolicy: policy });
      const sent = await send(new SendMessageCommand({ QueueUrl: q.src, MessageBody: 'poison' }));
      assertEq((await receive(q.src)).map((m) => m.Body), ['poison'], 'first receive');
      assertEq((await receive(q.src)).length, 0, 'second receive moves it');
      const moved = await receive(q.dlq, { WaitTimeSeconds: 2 });
      assertEq(moved.map((m) => [m.Body, m.MessageId]), [['poison', sent.MessageId]], 'message in DLQ');
      const sources = await send(new ListDeadLetterSourceQueuesCommand({ QueueUrl: q.dlq }));
      assertEq(sources.queueUrls, [q.src], 'ListDeadLetterSourceQueues');
    }],
    ['tags', async () => {
      await send(new TagQueueCommand({ QueueUrl: q.std, Tags: { env: 'test', team: 'core' } }));
      assertEq((await send(new ListQueueTagsCommand({ QueueUrl: q.std }))).Tags, { env: 'test', team: 'core' }, 'tags');
      await send(new UntagQueueCommand({ QueueUrl: q.std, TagKeys: ['team'] }));
      assertEq((await send(new ListQueueTagsCommand({ QueueUrl: q.std }))).Tags, { env: 'test' }, 'tags after untag');
    }],
    ['purge', async () => {
      for (let i = 0; i < 3; i += 1) await send(new SendMessageCommand({ QueueUrl: q.std, MessageBody: `purge-${i}` }));
      await send(new PurgeQueueCommand({ QueueUrl: q.std }));
      assertEq((await receive(q.std)).length, 0, 'after purge');
      const a = (await send(new GetQueueAttributesCommand({ QueueUrl: q.std, AttributeNames: ['ApproximateNumberOfMessages'] }))).Attributes;
      assertEq(a, { ApproximateNumberOfMessages: '0' }, 'count after purge');
    }],
    ['queue attributes', async () => {
      const a = (await send(new GetQueueAttributesCommand({ QueueUrl: q.std, AttributeNames: ['All'] }))).Attributes;
      for (const k of ['QueueArn', 'CreatedTimestamp', 'LastModifiedTimestamp', 'DelaySeconds', 'MaximumMessageSize',
        'MessageRetentionPeriod', 'ReceiveMessageWaitTimeSeconds', 'VisibilityTimeout']) assert(k in a, k, a);
      assertEq(a.QueueArn, `arn:aws:sqs:us-east-1:000000000000:${prefix}-std`, 'QueueArn');
      assertEq(a.VisibilityTimeout, '30', 'default VisibilityTimeout');
      await send(new SetQueueAttributesCommand({ QueueUrl: q.std, Attributes: { VisibilityTimeout: '45', MessageRetentionPeriod: '3600' } }));
      const b = (await send(new GetQueueAttributesCommand({ QueueUrl: q.std, AttributeNames: ['VisibilityTimeout', 'MessageRetentionPeriod'] }))).Attributes;
      assertEq(b, { VisibilityTimeout: '45', MessageRetentionPeriod: '3600' }, 'attributes after set');
      const f = (await send(new GetQueueAttributesCommand({ QueueUrl: q.fifo, AttributeNames: ['All'] }))).Attributes;
      assertEq([f.FifoQueue, f.ContentBasedDeduplication], ['true', 'false'], 'FIFO attributes');
    }],
    ['missing queue error', async () => {
      try {
        await send(new GetQueueUrlCommand({ QueueName: `${prefix}-does-not-exist` }));
        throw new Error('GetQueueUrl of a missing queue succeeded');
      } catch (err) {
        if (err.message === 'GetQueueUrl of a missing queue succeeded') throw err;
        assert(err instanceof QueueDoesNotExist, `not a QueueDoesNotExist: ${err.name} ${err.message}`);
        assertEq(err.name, 'QueueDoesNotExist', 'error name');
        assertEq(err.Code, NON_EXISTENT, 'legacy Code from x-amzn-query-error');
        assertEq(err.$metadata.httpStatusCode, 400, 'HTTP status');
        console.log(`       caught ${err.name}: Code=${err.Code}`);
      }
    }],
    ['delete queues', async () => {
      for (const url of [q.std, q.fifo, q.dlq, q.src]) await send(new DeleteQueueCommand({ QueueUrl: url }));
      const left = (await send(new ListQueuesCommand({ QueueNamePrefix: prefix }))).QueueUrls || [];
      assertEq(left, [], 'queues left');
      try {
        await send(new GetQueueAttributesCommand({ QueueUrl: q.std, AttributeNames: ['All'] }));
        throw new Error('deleted queue still answers');
      } catch (err) {
        if (!(err instanceof QueueDoesNotExist)) throw err;
      }
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
