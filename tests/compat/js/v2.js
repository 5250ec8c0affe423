'use strict';
// The full compatibility scenario through aws-sdk v2 (pinned before 2.1491.0: AWS Query
// protocol, XML responses). Checksum validation (`computeChecksums`) stays on.
//
//   node v2.js --endpoint http://127.0.0.1:PORT

const AWS = require('aws-sdk');
const {
  md5Hex, md5OfAttributes, sleep, assert, assertEq, Recorder, runSteps, parseArgs, guard, plainAttrs, ATTRS_BINARY,
} = require('./common');

const NAME = 'js-v2';
const NON_EXISTENT = 'AWS.SimpleQueueService.NonExistentQueue';

async function main() {
  guard(120);
  const { endpoint } = parseArgs();
  console.log(`${NAME}: aws-sdk ${AWS.VERSION}, protocol expected QUERY`);
  const recorder = new Recorder();
  // Global listener: every request of every service object, just before it goes on the wire.
  AWS.events.on('send', (resp) => {
    const h = resp.request.httpRequest;
    const url = `${h.endpoint.protocol}//${h.endpoint.host}${h.path}`;
    recorder.record(h.method, url, h.headers, h.body);
  });
  const sqs = new AWS.SQS({
    endpoint,
    region: 'us-east-1',
    credentials: new AWS.Credentials('test', 'test'),
    maxRetries: 0,
    computeChecksums: true,
  });
  assertEq(sqs.api.protocol, 'query', 'model protocol');

  const call = (op, params) => sqs[op](params).promise();
  const prefix = `compat-${NAME}-${process.pid}`;
  const q = {};
  const createQueue = async (suffix, Attributes) => (await call('createQueue', {
    QueueName: `${prefix}-${suffix}`, Attributes,
  })).QueueUrl;
  const arn = async (QueueUrl) => (await call('getQueueAttributes', {
    QueueUrl, AttributeNames: ['QueueArn'],
  })).Attributes.QueueArn;
  const receive = async (QueueUrl, extra = {}) => (await call('receiveMessage', {
    QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 0, ...extra,
  })).Messages || [];
  const del = (QueueUrl, m) => call('deleteMessage', { QueueUrl, ReceiptHandle: m.ReceiptHandle });

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
      const urls = (await call('listQueues', { QueueNamePrefix: prefix })).QueueUrls || [];
      assert(urls.includes(q.std) && urls.includes(q.fifo), urls);
    }],
    ['send/receive attributes', async () => {
      const body = 'hello <localsqs> & "friends" \u00e9';
      const sent = await call('sendMessage', { QueueUrl: q.std, MessageBody: body, MessageAttributes: ATTRS });
      assertEq(sent.MD5OfMessageBody, md5Hex(Buffer.from(body)), 'MD5OfMessageBody');
      assertEq(sent.MD5OfMessageAttributes, md5OfAttributes(ATTRS), 'MD5OfMessageAttributes');
      const msgs = await receive(q.std, { MessageAttributeNames: ['All'], AttributeNames: ['All'], WaitTimeSeconds: 2 });
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
      const res = await call('sendMessageBatch', { QueueUrl: q.std, Entries: entries });
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
      const vis = await call('changeMessageVisibilityBatch', {
        QueueUrl: q.std,
        Entries: [
          { Id: 'ok', ReceiptHandle: handles[0], VisibilityTimeout: 60 },
          { Id: 'bad', ReceiptHandle: 'not-a-receipt-handle', VisibilityTimeout: 60 },
        ],
      });
      assertEq((vis.Successful || []).map((e) => e.Id), ['ok'], 'visibility Successful');
      assertEq((vis.Failed || []).map((e) => [e.Id, e.Code, e.SenderFault]), [['bad', 'ReceiptHandleIsInvalid', true]], 'visibility Failed');
      const dr = await call('deleteMessageBatch', {
        QueueUrl: q.std,
        Entries: handles.map((h, i) => ({ Id: `d${i}`, ReceiptHandle: h })).concat([{ Id: 'bad', ReceiptHandle: 'not-a-receipt-handle' }]),
      });
      assertEq((dr.Successful || []).map((e) => e.Id).sort(), ['d0', 'd1', 'd2'], 'delete Successful');
      assertEq((dr.Failed || []).map((e) => [e.Id, e.Code, e.SenderFault]), [['bad', 'ReceiptHandleIsInvalid', true]], 'delete Failed');
      assertEq((await receive(q.std)).length, 0, 'left after batch delete');
    }],
    ['long poll woken by send', async () => {
      const t0 = Date.now();
      const poll = receive(q.std, { WaitTimeSeconds: 10 }).then((msgs) => ({ msgs, elapsed: (Date.now() - t0) / 1000 }));
      await sleep(500);
      await call('sendMessage', { QueueUrl: q.std, MessageBody: 'wake-up' });
      const { msgs, elapsed } = await poll;
      assertEq(msgs.map((m) => m.Body), ['wake-up'], 'long poll result');
      assert(elapsed > 0.3 && elapsed < 5, `long poll returned after ${elapsed}s`);
      console.log(`       long poll woke after ${elapsed.toFixed(2)}s`);
      await del(q.std, msgs[0]);
    }],
    ['visibility timeout expiry', async () => {
      await call('sendMessage', { QueueUrl: q.std, MessageBody: 'vis' });
      const t0 = Date.now();
      const first = await receive(q.std, { VisibilityTimeout: 1 });
      assertEq(first.map((m) => m.Body), ['vis'], 'first receive');
      const hidden = await receive(q.std);
      // (a stalled machine may legitimately see it again)
      if (Date.now() - t0 < 900) assertEq(hidden.length, 0, 'visible during its visibility timeout');
      await sleep(1100);
      const again = await receive(q.std, { AttributeNames: ['ApproximateReceiveCount'] });
      assertEq(again.map((m) => m.Body), ['vis'], 'receive after expiry');
      assertEq(again[0].MessageId, first[0].MessageId, 'same message');
      assertEq(again[0].Attributes.ApproximateReceiveCount, '2', 'ApproximateReceiveCount');
      await del(q.std, again[0]);
    }],
    ['fifo order + dedup', async () => {
      const seqs = [];
      const dedups = ['d1', 'd2', 'd1', 'd3'];
      for (let i = 0; i < dedups.length; i += 1) {
        const r = await call('sendMessage', {
          QueueUrl: q.fifo, MessageBody: `f-${i}`, MessageGroupId: 'g1', MessageDeduplicationId: dedups[i],
        });
        if (i !== 2) {
          assert(/^\d+$/.test(r.SequenceNumber || ''), 'SequenceNumber', r);
          seqs.push(BigInt(r.SequenceNumber));
        }
      }
      assert(seqs[0] < seqs[1] && seqs[1] < seqs[2], 'increasing sequence numbers', seqs.map(String));
      const bodies = [];
      for (let round = 0; round < 10; round += 1) {
        const msgs = await receive(q.fifo, { AttributeNames: ['All'] });
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
      const sent = await call('sendMessage', { QueueUrl: q.src, MessageBody: 'poison' });
      assertEq((await receive(q.src)).map((m) => m.Body), ['poison'], 'first receive');
      assertEq((await receive(q.src)).length, 0, 'second receive moves it');
      const moved = await receive(q.dlq, { WaitTimeSeconds: 2 });
      assertEq(moved.map((m) => [m.Body, m.MessageId]), [['poison', sent.MessageId]], 'message in DLQ');
      const sources = await call('listDeadLetterSourceQueues', { QueueUrl: q.dlq });
      assertEq(sources.queueUrls, [q.src], 'ListDeadLetterSourceQueues');
    }],
    ['tags', async () => {
      await call('tagQueue', { QueueUrl: q.std, Tags: { env: 'test', team: 'core' } });
      assertEq((await call('listQueueTags', { QueueUrl: q.std })).Tags, { env: 'test', team: 'core' }, 'tags');
      await call('untagQueue', { QueueUrl: q.std, TagKeys: ['team'] });
      assertEq((await call('listQueueTags', { QueueUrl: q.std })).Tags, { env: 'test' }, 'tags after untag');
    }],
    ['purge', async () => {
      for (let i = 0; i < 3; i += 1) await call('sendMessage', { QueueUrl: q.std, MessageBody: `purge-${i}` });
      await call('purgeQueue', { QueueUrl: q.std });
      assertEq((await receive(q.std)).length, 0, 'after purge');
      const a = (await call('getQueueAttributes', { QueueUrl: q.std, AttributeNames: ['ApproximateNumberOfMessages'] })).Attributes;
      assertEq(a, { ApproximateNumberOfMessages: '0' }, 'count after purge');
    }],
    ['queue attributes', async () => {
      const a = (await call('getQueueAttributes', { QueueUrl: q.std, AttributeNames: ['All'] })).Attributes;
      for (const k of ['QueueArn', 'CreatedTimestamp', 'LastModifiedTimestamp', 'DelaySeconds', 'MaximumMessageSize',
        'MessageRetentionPeriod', 'ReceiveMessageWaitTimeSeconds', 'VisibilityTimeout']) assert(k in a, k, a);
      assertEq(a.QueueArn, `arn:aws:sqs:us-east-1:000000000000:${prefix}-std`, 'QueueArn');
      assertEq(a.VisibilityTimeout, '30', 'default VisibilityTimeout');
      await call('setQueueAttributes', { QueueUrl: q.std, Attributes: { VisibilityTimeout: '45', MessageRetentionPeriod: '3600' } });
      const b = (await call('getQueueAttributes', { QueueUrl: q.std, AttributeNames: ['VisibilityTimeout', 'MessageRetentionPeriod'] })).Attributes;
      assertEq(b, { VisibilityTimeout: '45', MessageRetentionPeriod: '3600' }, 'attributes after set');
      const f = (await call('getQueueAttributes', { QueueUrl: q.fifo, AttributeNames: ['All'] })).Attributes;
      assertEq([f.FifoQueue, f.ContentBasedDeduplication], ['true', 'false'], 'FIFO attributes');
    }],
    ['missing queue error', async () => {
      let caught;
      try {
        await call('getQueueUrl', { QueueName: `${prefix}-does-not-exist` });
      } catch (err) {
        caught = err;
      }
      assert(caught, 'GetQueueUrl of a missing queue succeeded');
      assertEq(caught.code, NON_EXISTENT, 'error code');
      assertEq(caught.statusCode, 400, 'HTTP status');
      console.log(`       caught ${caught.name}: code=${caught.code}`);
    }],
    ['delete queues', async () => {
      for (const url of [q.std, q.fifo, q.dlq, q.src]) await call('deleteQueue', { QueueUrl: url });
      const left = (await call('listQueues', { QueueNamePrefix: prefix })).QueueUrls || [];
      assertEq(left, [], 'queues left');
      let caught;
      try {
        await call('getQueueAttributes', { QueueUrl: q.std, AttributeNames: ['All'] });
      } catch (err) {
        caught = err;
      }
      assert(caught && caught.code === NON_EXISTENT, 'deleted queue still answers', caught && caught.code);
    }],
    ['protocol evidence', async () => recorder.check(NAME, 'query')],
  ]);
  process.exit(failures.length ? 1 : 0);
}

main().catch((err) => {
  console.log(`  FAIL ${err.stack}`);
  process.exit(1);
});
