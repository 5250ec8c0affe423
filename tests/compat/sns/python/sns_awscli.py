"""The AWS CLI publishes through SNS topics into SQS queues (tests/compat/README.md, SNS):
standard topic to an envelope queue, a raw queue and a filtered queue, and a FIFO topic to a
FIFO queue; every `aws sns` call runs with --debug so the Query protocol can be checked."""
import argparse
import json
import os
import subprocess
import sys

p = argparse.ArgumentParser()
p.add_argument("--endpoint", required=True)
p.add_argument("--name", default="sns-awscli")
args = p.parse_args()
N = args.name
AWS = os.path.join(os.path.dirname(sys.executable), "aws")
ENV = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1")
evidence = []


def aws(*cmd, debug=False):
    full = [AWS, "--endpoint-url", args.endpoint, "--output", "json"] + (["--debug"] if debug else []) + list(cmd)
    r = subprocess.run(full, capture_output=True, text=True, env=ENV)
    if debug:
        evidence.extend(l for l in r.stderr.splitlines() if "Making request for OperationModel" in l)
    if r.returncode != 0:
        return None, r.stderr
    return (json.loads(r.stdout) if r.stdout.strip() else {}), r.stderr


def check(cond, what):
    if not cond:
        print(f"FAIL {N}: {what}")
        sys.exit(1)
    print(f"ok   {N}: {what}")


def queue(name):
    attrs = ["--attributes", "FifoQueue=true"] if name.endswith(".fifo") else []
    url = aws("sqs", "create-queue", "--queue-name", f"{N}-{name}", *attrs)[0]["QueueUrl"]
    arn = aws("sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "QueueArn")[0]["Attributes"]["QueueArn"]
    return url, arn


def receive(url):
    out, _ = aws("sqs", "receive-message", "--queue-url", url, "--max-number-of-messages", "10",
                 "--message-attribute-names", "All")
    return (out or {}).get("Messages", [])


topic = aws("sns", "create-topic", "--name", f"{N}-news", debug=True)[0]["TopicArn"]
env_url, env_arn = queue("envelope")
raw_url, raw_arn = queue("raw")
flt_url, flt_arn = queue("filtered")
aws("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", env_arn, debug=True)
aws("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", raw_arn,
    "--attributes", "RawMessageDelivery=true")
aws("sns", "subscribe", "--topic-arn", topic, "--protocol", "sqs", "--notification-endpoint", flt_arn,
    "--attributes", json.dumps({"RawMessageDelivery": "true", "FilterPolicy": json.dumps({"kind": [{"prefix": "ord"}]})}))
out, _ = aws("sns", "publish", "--topic-arn", topic, "--message", "hello", "--message-attributes",
             json.dumps({"kind": {"DataType": "String", "StringValue": "order"}}), debug=True)
mid = out["MessageId"]
aws("sns", "publish", "--topic-arn", topic, "--message", "other", "--message-attributes",
    json.dumps({"kind": {"DataType": "String", "StringValue": "refund"}}))
env = [json.loads(m["Body"]) for m in receive(env_url)]
check(len(env) == 2 and any(e["MessageId"] == mid and e["Message"] == "hello" for e in env), "envelopes")
check(sorted(m["Body"] for m in receive(raw_url)) == ["hello", "other"], "raw bodies")
check([m["Body"] for m in receive(flt_url)] == ["hello"], "prefix filter")

fifo = aws("sns", "create-topic", "--name", f"{N}-t.fifo", "--attributes", "FifoTopic=true")[0]["TopicArn"]
f_url, f_arn = queue("t.fifo")
aws("sns", "subscribe", "--topic-arn", fifo, "--protocol", "sqs", "--notification-endpoint", f_arn,
    "--attributes", "RawMessageDelivery=true")
a = aws("sns", "publish", "--topic-arn", fifo, "--message", "one", "--message-group-id", "g",
        "--message-deduplication-id", "d1")[0]
dup = aws("sns", "publish", "--topic-arn", fifo, "--message", "one", "--message-group-id", "g",
          "--message-deduplication-id", "d1")[0]
check(a["MessageId"] == dup["MessageId"] and a["SequenceNumber"] == dup["SequenceNumber"], "FIFO duplicate")
check([m["Body"] for m in receive(f_url)] == ["one"], "FIFO delivered once")

_, err = aws("sns", "get-topic-attributes", "--topic-arn", topic.replace("news", "missing"))
check("NotFound" in err and "Topic does not exist" in err, "the CLI reports NotFound")
for t in (topic, fifo):
    aws("sns", "delete-topic", "--topic-arn", t)
check(evidence and all("Version': '2010-03-31'" in l or "Version=2010-03-31" in l for l in evidence), "every SNS request is Query")
print(f"EVIDENCE {N}: {evidence[0][:160]}")
