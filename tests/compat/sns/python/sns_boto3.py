"""boto3 publishes through SNS topics into SQS queues on one localsqs (tests/compat/README.md, SNS).

Standard topic -> envelope queue, raw queue, filtered queue; FIFO topic -> FIFO queue with
dedup; PublishBatch; errors as boto3's modeled exceptions; every SNS request must be Query
(Action=...&Version=2010-03-31 form bodies) signed for service `sns`.
"""
import argparse
import json
import sys

import boto3
from botocore.config import Config

p = argparse.ArgumentParser()
p.add_argument("--endpoint", required=True)
p.add_argument("--name", default="sns-boto3")
args = p.parse_args()
N = args.name

cfg = Config(retries={"total_max_attempts": 1})
kw = dict(endpoint_url=args.endpoint, region_name="us-east-1", aws_access_key_id="test",
          aws_secret_access_key="test", config=cfg)
sns = boto3.client("sns", **kw)
sqs = boto3.client("sqs", **kw)

seen = []


def record(request, **_):
    auth = request.headers.get("Authorization", b"")
    auth = auth.decode() if isinstance(auth, bytes) else str(auth)
    if "/sns/aws4_request" in auth:
        seen.append(request)


sns.meta.events.register("before-send", record)


def check(cond, what):
    if not cond:
        print(f"FAIL {N}: {what}")
        sys.exit(1)
    print(f"ok   {N}: {what}")


def queue(name):
    attrs = {"FifoQueue": "true"} if name.endswith(".fifo") else {}
    url = sqs.create_queue(QueueName=f"{N}-{name}", Attributes=attrs)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def receive(url):
    r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, MessageAttributeNames=["All"],
                            AttributeNames=["All"])
    return r.get("Messages", [])


topic = sns.create_topic(Name=f"{N}-orders")["TopicArn"]
check(sns.create_topic(Name=f"{N}-orders")["TopicArn"] == topic, "CreateTopic is idempotent")
env_url, env_arn = queue("envelope")
raw_url, raw_arn = queue("raw")
flt_url, flt_arn = queue("filtered")
sub = sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=env_arn)["SubscriptionArn"]
sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=raw_arn, Attributes={"RawMessageDelivery": "true"})
sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=flt_arn,
              Attributes={"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": ["order"]})})
subs = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
check(len(subs) == 3, "three subscriptions listed")

mid = sns.publish(TopicArn=topic, Message="hello", Subject="greeting",
                  MessageAttributes={"kind": {"DataType": "String", "StringValue": "order"},
                                     "n": {"DataType": "Number", "StringValue": "7"}})["MessageId"]
sns.publish(TopicArn=topic, Message="refund", MessageAttributes={"kind": {"DataType": "String", "StringValue": "refund"}})
m = receive(env_url)
check(len(m) == 2, "the envelope queue got both messages")
env = [json.loads(x["Body"]) for x in m]
first = [e for e in env if e["MessageId"] == mid][0]
check(first["Type"] == "Notification" and first["Message"] == "hello" and first["Subject"] == "greeting",
      "envelope fields")
check(first["UnsubscribeURL"].endswith(sub) and first["SignatureVersion"] == "1" and len(first["Signature"]) == 344,
      "envelope UnsubscribeURL and signature")
check(first["MessageAttributes"]["n"] == {"Type": "Number", "Value": "7"}, "envelope attributes")
raw = receive(raw_url)
check(sorted(x["Body"] for x in raw) == ["hello", "refund"], "raw bodies")
r = [x for x in raw if x["Body"] == "hello"][0]
check(r["MessageAttributes"]["kind"]["StringValue"] == "order", "raw attributes become SQS attributes")
flt = receive(flt_url)
check([x["Body"] for x in flt] == ["hello"], "the filter let only the order through")

out = sns.publish_batch(TopicArn=topic, PublishBatchRequestEntries=[
    {"Id": "a", "Message": "b1"}, {"Id": "b", "Message": "b2"}])
check(len(out["Successful"]) == 2 and out["Failed"] == [], "PublishBatch")

fifo = sns.create_topic(Name=f"{N}-orders.fifo", Attributes={"FifoTopic": "true"})["TopicArn"]
f_url, f_arn = queue("orders.fifo")
sns.subscribe(TopicArn=fifo, Protocol="sqs", Endpoint=f_arn, Attributes={"RawMessageDelivery": "true"})
a = sns.publish(TopicArn=fifo, Message="one", MessageGroupId="g", MessageDeduplicationId="d1")
b = sns.publish(TopicArn=fifo, Message="two", MessageGroupId="g", MessageDeduplicationId="d2")
dup = sns.publish(TopicArn=fifo, Message="one again", MessageGroupId="g", MessageDeduplicationId="d1")
check(dup["MessageId"] == a["MessageId"] and dup["SequenceNumber"] == a["SequenceNumber"], "FIFO duplicate")
check(int(b["SequenceNumber"]) > int(a["SequenceNumber"]), "sequence numbers grow")
got = receive(f_url)
check([x["Body"] for x in got] == ["one", "two"], "FIFO order and dedup")
check(got[0]["Attributes"]["MessageGroupId"] == "g", "group id reaches the FIFO queue")

try:
    sns.publish(TopicArn=topic.replace("orders", "missing"), Message="x")
    check(False, "NotFound")
except sns.exceptions.NotFoundException as e:
    check(e.response["Error"]["Message"] == "Topic does not exist", "NotFoundException")
try:
    sns.publish(TopicArn=topic, Message="")
    check(False, "InvalidParameter")
except sns.exceptions.InvalidParameterException as e:
    check(e.response["Error"]["Message"] == "Invalid parameter: Empty message", "InvalidParameterException")

sns.unsubscribe(SubscriptionArn=sub)
sns.delete_topic(TopicArn=topic)
sns.delete_topic(TopicArn=fifo)
check(all(t["TopicArn"] not in (topic, fifo) for t in sns.list_topics()["Topics"]), "topics deleted")

bodies = [r.body.decode() if isinstance(r.body, bytes) else (r.body or "") for r in seen]
check(seen and all("Version=2010-03-31" in b and "Action=" in b for b in bodies), "every SNS request is Query")
print(f"EVIDENCE {N}: POST {args.endpoint}/ -> QUERY (service sns; body={bodies[0][:80]}...)")
print(f"{N}: {len(seen)} SNS requests")
