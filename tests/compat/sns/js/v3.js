// The JavaScript SDK v3 publishes through SNS topics into SQS queues on one localsqs, and a
// consumer verifies envelope signatures with the stock `sns-validator` package pointed at the
// certificate localsqs serves (tests/compat/README.md, SNS).
//
// sns-validator fetches the certificate over https from a host its pattern allows. localsqs
// serves it over http, so this scenario puts a small https relay in front of it (its TLS
// certificate is localsqs's own test certificate, hence NODE_TLS_REJECT_UNAUTHORIZED=0 for this
// process) and points each message's SigningCertURL at the relay: SigningCertURL is not part of
// the signed text, so the signature check is untouched.
"use strict";
process.env.NODE_TLS_REJECT_UNAUTHORIZED = "0";
const https = require("https");
const http = require("http");
const fs = require("fs");
const path = require("path");
const { SNSClient, CreateTopicCommand, SubscribeCommand, PublishCommand, PublishBatchCommand,
  DeleteTopicCommand, ListTopicsCommand, NotFoundException } = require("@aws-sdk/client-sns");
const { SQSClient, CreateQueueCommand, GetQueueAttributesCommand, ReceiveMessageCommand } =
  require("@aws-sdk/client-sqs");
const MessageValidator = require("sns-validator");

const endpoint = process.argv[process.argv.indexOf("--endpoint") + 1];
const N = "sns-js-v3";
const cfg = { endpoint, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" }, maxAttempts: 1 };
const sns = new SNSClient(cfg);
const sqs = new SQSClient(cfg);
const seen = [];
sns.middlewareStack.add((next) => async (args) => {
  seen.push(args.request);
  return next(args);
}, { step: "finalizeRequest", name: "record" });

function check(cond, what) {
  if (!cond) {
    console.log(`FAIL ${N}: ${what}`);
    process.exit(1);
  }
  console.log(`ok   ${N}: ${what}`);
}

async function queue(name) {
  const Attributes = name.endsWith(".fifo") ? { FifoQueue: "true" } : undefined;
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${N}-${name}`, Attributes }));
  const a = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  return [QueueUrl, a.Attributes.QueueArn];
}

async function receive(QueueUrl) {
  const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10,
    MessageAttributeNames: ["All"], MessageSystemAttributeNames: ["All"] }));
  return r.Messages || [];
}

// An https relay for GET /<path>: fetches the same path from localsqs.
function relay() {
  const dir = path.join(__dirname, "..", "..", "..", "..", "src", "tools", "sns");
  const server = https.createServer({
    key: fs.readFileSync(path.join(dir, "signing-key.pem")),
    cert: fs.readFileSync(path.join(dir, "signing-cert.pem")),
  }, (req, res) => {
    http.get(endpoint + req.url, (up) => {
      res.writeHead(up.statusCode, up.headers);
      up.pipe(res);
    }).on("error", () => { res.writeHead(502); res.end(); });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function validate(validator, message) {
  return new Promise((resolve) => validator.validate(message, (err) => resolve(err)));
}

(async () => {
  const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `${N}-orders` }));
  const again = await sns.send(new CreateTopicCommand({ Name: `${N}-orders` }));
  check(again.TopicArn === TopicArn, "CreateTopic is idempotent");
  const v2 = (await sns.send(new CreateTopicCommand({ Name: `${N}-v2`, Attributes: { SignatureVersion: "2" } }))).TopicArn;
  const [envUrl, envArn] = await queue("envelope");
  const [rawUrl, rawArn] = await queue("raw");
  const [fltUrl, fltArn] = await queue("filtered");
  const [v2Url, v2Arn] = await queue("v2");
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: envArn }));
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: rawArn, Attributes: { RawMessageDelivery: "true" } }));
  await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: fltArn,
    Attributes: { RawMessageDelivery: "true", FilterPolicyScope: "MessageBody", FilterPolicy: JSON.stringify({ total: [{ numeric: [">", 100] }] }) } }));
  await sns.send(new SubscribeCommand({ TopicArn: v2, Protocol: "sqs", Endpoint: v2Arn }));
  const { MessageId } = await sns.send(new PublishCommand({ TopicArn, Message: JSON.stringify({ total: 150 }),
    MessageAttributes: { kind: { DataType: "String", StringValue: "order" } } }));
  await sns.send(new PublishCommand({ TopicArn, Message: JSON.stringify({ total: 5 }) }));
  await sns.send(new PublishCommand({ TopicArn: v2, Message: "signed with SHA-256", Subject: "v2" }));
  const env = (await receive(envUrl)).map((m) => JSON.parse(m.Body));
  check(env.length === 2 && env.some((e) => e.MessageId === MessageId), "the envelope queue got both");
  check((await receive(rawUrl)).length === 2, "the raw queue got both");
  const flt = await receive(fltUrl);
  check(flt.length === 1 && JSON.parse(flt[0].Body).total === 150, "the body filter let the big order through");

  const server = await relay();
  const host = `127.0.0.1:${server.address().port}`;
  const validator = new MessageValidator(/^127\.0\.0\.1:\d+$/);
  const viaRelay = (m) => ({ ...m, SigningCertURL: m.SigningCertURL.replace(endpoint, `https://${host}`) });
  for (const m of env) {
    check(!(await validate(validator, viaRelay(m))), `sns-validator accepts SignatureVersion 1 (${m.MessageId})`);
  }
  const tampered = { ...viaRelay(env[0]), Message: "changed" };
  check(!!(await validate(validator, tampered)), "sns-validator rejects a changed message");
  const v2m = (await receive(v2Url)).map((m) => JSON.parse(m.Body));
  check(v2m.length === 1 && v2m[0].SignatureVersion === "2", "SignatureVersion 2 envelope");
  check(!(await validate(validator, viaRelay(v2m[0]))), "sns-validator accepts SignatureVersion 2");
  server.close();

  const fifo = (await sns.send(new CreateTopicCommand({ Name: `${N}-o.fifo`, Attributes: { FifoTopic: "true", ContentBasedDeduplication: "true" } }))).TopicArn;
  const [fUrl, fArn] = await queue("o.fifo");
  await sns.send(new SubscribeCommand({ TopicArn: fifo, Protocol: "sqs", Endpoint: fArn, Attributes: { RawMessageDelivery: "true" } }));
  const batch = await sns.send(new PublishBatchCommand({ TopicArn: fifo, PublishBatchRequestEntries: [
    { Id: "a", Message: "one", MessageGroupId: "g" }, { Id: "b", Message: "two", MessageGroupId: "g" },
    { Id: "c", Message: "one", MessageGroupId: "g" }] }));
  check(batch.Successful.length === 3 && batch.Successful[2].MessageId === batch.Successful[0].MessageId,
    "FIFO PublishBatch: content-based duplicate answers the first MessageId");
  const got = await receive(fUrl);
  check(got.map((m) => m.Body).join(",") === "one,two", "FIFO order and dedup");

  try {
    await sns.send(new PublishCommand({ TopicArn: TopicArn.replace("orders", "missing"), Message: "x" }));
    check(false, "NotFound");
  } catch (e) {
    check(e instanceof NotFoundException && e.message === "Topic does not exist", "NotFoundException");
  }
  for (const t of [TopicArn, v2, fifo]) await sns.send(new DeleteTopicCommand({ TopicArn: t }));
  const left = (await sns.send(new ListTopicsCommand({}))).Topics.map((t) => t.TopicArn);
  check(![TopicArn, v2, fifo].some((t) => left.includes(t)), "topics deleted");
  const bodies = seen.map((r) => String(r.body));
  check(bodies.every((b) => b.includes("Version=2010-03-31") && b.startsWith("Action=")), "every SNS request is Query");
  console.log(`EVIDENCE ${N}: POST ${endpoint}/ -> QUERY (body=${bodies[0].slice(0, 60)}...)`);
  console.log(`${N}: ${seen.length} SNS requests`);
})().catch((e) => {
  console.log(`FAIL ${N}: ${e.stack || e}`);
  process.exit(1);
});
