"""The full compatibility scenario, driven through boto3.

Run by tests/compat/run.sh once per virtualenv:

    python boto3_scenario.py --endpoint http://127.0.0.1:PORT --name boto3-current --protocol json
    python boto3_scenario.py --endpoint http://127.0.0.1:PORT --name boto3-query   --protocol query

Every outgoing request is captured with a botocore ``before-send`` hook, and the scenario fails
if any request used a protocol other than ``--protocol`` (so a client that silently switches
protocol is caught). Exit status 0 means every step passed.
"""

import argparse
import json
import os
import re
import sys
import threading
import time
import traceback

import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

try:
    import boto3
except ImportError:  # the aiobotocore virtualenv has botocore only (aiobotocore_scenario.py)
    boto3 = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import md5_hex, md5_of_attributes  # noqa: E402

NON_EXISTENT = "AWS.SimpleQueueService.NonExistentQueue"


class Recorder:
    """Captures every request botocore sends (before-send) to prove which protocol was used."""

    def __init__(self):
        self.requests = []

    def before_send(self, request, **kwargs):
        headers = {k.lower(): (v.decode() if isinstance(v, bytes) else v)
                   for k, v in request.headers.items()}
        body = request.body or b""
        if hasattr(body, "read"):
            body = b"<stream>"
        if isinstance(body, str):
            body = body.encode()
        self.requests.append((request.method, request.url, headers, body))
        return None  # let the request go out

    @staticmethod
    def classify(headers, body, url):
        target = headers.get("x-amz-target", "")
        if target.startswith("AmazonSQS."):
            return "json"
        if body.startswith(b"Action=") or b"&Action=" in body or "Action=" in url:
            return "query"
        return "unknown"

    @staticmethod
    def operation(headers, body, url):
        target = headers.get("x-amz-target", "")
        if target.startswith("AmazonSQS."):
            return target[len("AmazonSQS."):]
        m = re.search(r"(?:^|&)Action=([A-Za-z]+)", body.decode(errors="replace"))
        return m.group(1) if m else "?"

    def evidence(self, index=0):
        method, url, headers, body = self.requests[index]
        kind = self.classify(headers, body, url)
        if kind == "json":
            detail = "X-Amz-Target: %s; Content-Type: %s; body=%s" % (
                headers.get("x-amz-target"), headers.get("content-type"), body[:80].decode())
        else:
            detail = "Content-Type: %s; body=%s" % (headers.get("content-type"),
                                                     body[:80].decode())
        return "%s %s -> %s (%s)" % (method, url, kind.upper(), detail)


class Scenario:
    # No retries: a transient server error must fail the step, not be hidden by a retry.
    # (botocore's retries={"max_attempts": N} counts retries; total_max_attempts counts tries.)
    CONFIG = Config(retries={"total_max_attempts": 1}, read_timeout=30, connect_timeout=5)

    def __init__(self, endpoint, name, protocol, client=None):
        self.name = name
        self.protocol = protocol
        self.prefix = "compat-%s-%d" % (name, os.getpid())
        self.recorder = Recorder()
        if client is None:
            session = boto3.session.Session(
                aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
            client = session.client("sqs", endpoint_url=endpoint, config=self.CONFIG)
        self.sqs = client
        self.sqs.meta.events.register("before-send.sqs", self.recorder.before_send)
        self.failures = []

    def describe_client(self):
        return "boto3 %s, botocore %s" % (boto3.__version__, botocore.__version__)

    # ---------------------------------------------------------------- helpers
    def step(self, title, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report every kind of failure
            self.failures.append(title)
            print("  FAIL %-28s %s: %s" % (title, type(exc).__name__, exc))
            if isinstance(exc, ClientError):
                meta = exc.response.get("ResponseMetadata", {})
                print("       HTTP %s headers=%s" % (meta.get("HTTPStatusCode"),
                                                   meta.get("HTTPHeaders")))
                print("       Error=%s" % exc.response.get("Error"))
            traceback.print_exc(limit=3, file=sys.stdout)
        else:
            print("  ok   %-28s (%.2fs)" % (title, time.monotonic() - t0))

    def queue(self, suffix, **attrs):
        name = "%s-%s" % (self.prefix, suffix)
        return self.sqs.create_queue(
            QueueName=name, Attributes={k: str(v) for k, v in attrs.items()})["QueueUrl"]

    def arn(self, url):
        return self.sqs.get_queue_attributes(
            QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    def receive(self, url, **kw):
        kw.setdefault("MaxNumberOfMessages", 10)
        kw.setdefault("WaitTimeSeconds", 0)
        return self.sqs.receive_message(QueueUrl=url, **kw).get("Messages", [])

    # ---------------------------------------------------------------- steps
    def create_queues(self):
        self.std = self.queue("std")
        self.fifo = self.queue("fifo.fifo", FifoQueue="true")
        assert self.std.endswith("/000000000000/%s-std" % self.prefix), self.std
        assert self.fifo.endswith(".fifo"), self.fifo
        urls = self.sqs.list_queues(QueueNamePrefix=self.prefix).get("QueueUrls", [])
        assert set(urls) >= {self.std, self.fifo}, urls
        # CreateQueue is idempotent for identical attributes.
        assert self.queue("std") == self.std

    ATTRS = {
        "color": {"DataType": "String", "StringValue": "blue \u00e9\u6f22"},
        "timestamp": {"DataType": "Number.java.lang.Long", "StringValue": "1493147359900"},
        "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xfe\xff\x80\n\x7f"},
    }

    def send_receive_attributes(self):
        body = "hello <localsqs> & \"friends\" \u00e9"
        sent = self.sqs.send_message(QueueUrl=self.std, MessageBody=body,
                                     MessageAttributes=self.ATTRS)
        assert sent["MD5OfMessageBody"] == md5_hex(body.encode()), sent
        assert sent["MD5OfMessageAttributes"] == md5_of_attributes(self.ATTRS), sent
        msgs = self.receive(self.std, MessageAttributeNames=["All"], AttributeNames=["All"],
                            WaitTimeSeconds=2)
        assert len(msgs) == 1, msgs
        m = msgs[0]
        assert m["MessageId"] == sent["MessageId"]
        assert m["Body"] == body, m["Body"]
        assert m["MD5OfBody"] == md5_hex(body.encode()), m
        got = m["MessageAttributes"]
        assert got == self.ATTRS, got
        assert m["MD5OfMessageAttributes"] == md5_of_attributes(got), m
        assert m["Attributes"]["ApproximateReceiveCount"] == "1", m["Attributes"]
        for key in ("SentTimestamp", "ApproximateFirstReceiveTimestamp", "SenderId"):
            assert key in m["Attributes"], m["Attributes"]
        self.sqs.delete_message(QueueUrl=self.std, ReceiptHandle=m["ReceiptHandle"])
        assert self.receive(self.std) == []

    def batches(self):
        entries = [{"Id": "m%d" % i, "MessageBody": "batch-%d" % i} for i in range(3)]
        entries[0]["MessageAttributes"] = {"n": {"DataType": "Number", "StringValue": "7"}}
        res = self.sqs.send_message_batch(QueueUrl=self.std, Entries=entries)
        assert not res.get("Failed"), res
        ok = {e["Id"]: e for e in res["Successful"]}
        assert set(ok) == {"m0", "m1", "m2"}, ok
        for e in entries:
            assert ok[e["Id"]]["MD5OfMessageBody"] == md5_hex(e["MessageBody"].encode())
        assert ok["m0"]["MD5OfMessageAttributes"] == md5_of_attributes(
            entries[0]["MessageAttributes"])
        got = {}
        deadline = time.monotonic() + 5
        while len(got) < 3 and time.monotonic() < deadline:
            for m in self.receive(self.std, WaitTimeSeconds=1):
                got[m["Body"]] = m
        assert sorted(got) == ["batch-0", "batch-1", "batch-2"], sorted(got)
        handles = [got["batch-%d" % i]["ReceiptHandle"] for i in range(3)]

        res = self.sqs.change_message_visibility_batch(QueueUrl=self.std, Entries=[
            {"Id": "ok", "ReceiptHandle": handles[0], "VisibilityTimeout": 60},
            {"Id": "bad", "ReceiptHandle": "not-a-receipt-handle", "VisibilityTimeout": 60},
        ])
        assert [e["Id"] for e in res.get("Successful", [])] == ["ok"], res
        failed = res.get("Failed", [])
        assert len(failed) == 1 and failed[0]["Id"] == "bad", res
        assert failed[0]["Code"] == "ReceiptHandleIsInvalid", failed
        assert failed[0]["SenderFault"] is True, failed

        res = self.sqs.delete_message_batch(QueueUrl=self.std, Entries=[
            {"Id": "d%d" % i, "ReceiptHandle": h} for i, h in enumerate(handles)
        ] + [{"Id": "bad", "ReceiptHandle": "not-a-receipt-handle"}])
        assert sorted(e["Id"] for e in res.get("Successful", [])) == ["d0", "d1", "d2"], res
        failed = res.get("Failed", [])
        assert len(failed) == 1 and failed[0]["Id"] == "bad", res
        assert failed[0]["Code"] == "ReceiptHandleIsInvalid", failed
        assert failed[0]["SenderFault"] is True, failed
        assert self.receive(self.std) == []

    def long_poll(self):
        result = {}

        def poll():
            t0 = time.monotonic()
            result["msgs"] = self.receive(self.std, WaitTimeSeconds=10)
            result["elapsed"] = time.monotonic() - t0

        th = threading.Thread(target=poll)
        th.start()
        time.sleep(0.5)
        self.sqs.send_message(QueueUrl=self.std, MessageBody="wake-up")
        th.join(15)
        assert not th.is_alive(), "long poll did not return"
        assert [m["Body"] for m in result["msgs"]] == ["wake-up"], result
        assert 0.3 < result["elapsed"] < 5, "long poll returned after %.2fs" % result["elapsed"]
        print("       long poll woke after %.2fs" % result["elapsed"])
        self.sqs.delete_message(QueueUrl=self.std,
                                ReceiptHandle=result["msgs"][0]["ReceiptHandle"])

    def visibility_timeout(self):
        self.sqs.send_message(QueueUrl=self.std, MessageBody="vis")
        t0 = time.monotonic()
        first = self.receive(self.std, VisibilityTimeout=1, AttributeNames=["All"])
        assert [m["Body"] for m in first] == ["vis"], first
        hidden = self.receive(self.std)
        if time.monotonic() - t0 < 0.9:  # (a stalled machine may legitimately see it again)
            assert hidden == [], "message visible during its visibility timeout"
        time.sleep(1.1)
        again = self.receive(self.std, AttributeNames=["ApproximateReceiveCount"])
        assert [m["Body"] for m in again] == ["vis"], again
        assert again[0]["MessageId"] == first[0]["MessageId"]
        assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2", again[0]
        self.sqs.delete_message(QueueUrl=self.std, ReceiptHandle=again[0]["ReceiptHandle"])

    def fifo_order_dedup(self):
        seqs = []
        for i, dedup in enumerate(["d1", "d2", "d1", "d3"]):
            r = self.sqs.send_message(QueueUrl=self.fifo, MessageBody="f-%d" % i,
                                      MessageGroupId="g1", MessageDeduplicationId=dedup)
            if i != 2:  # f-2 is a duplicate: accepted, never delivered
                assert r.get("SequenceNumber", "").isdigit(), r
                seqs.append(r["SequenceNumber"])
        assert seqs == sorted(seqs, key=int) and len(set(seqs)) == 3, seqs
        r = self.sqs.send_message_batch(QueueUrl=self.fifo, Entries=[
            {"Id": "a", "MessageBody": "f-4", "MessageGroupId": "g1",
             "MessageDeduplicationId": "d4"}])
        assert r["Successful"][0].get("SequenceNumber", "").isdigit(), r
        # f-2 reused d1 within the deduplication interval: accepted but dropped.
        bodies = []
        for _ in range(10):
            msgs = self.receive(self.fifo, AttributeNames=["All"])
            if not msgs:
                break
            for m in msgs:
                assert m["Attributes"]["MessageGroupId"] == "g1", m
                assert m["Attributes"]["SequenceNumber"].isdigit(), m
                bodies.append((m["Body"], int(m["Attributes"]["SequenceNumber"])))
                self.sqs.delete_message(QueueUrl=self.fifo, ReceiptHandle=m["ReceiptHandle"])
        assert [b for b, _ in bodies] == ["f-0", "f-1", "f-3", "f-4"], bodies
        numbers = [n for _, n in bodies]
        assert numbers == sorted(numbers), bodies

    def dead_letter_queue(self):
        dlq = self.queue("dlq")
        self.dlq = dlq
        policy = json.dumps({"deadLetterTargetArn": self.arn(dlq), "maxReceiveCount": 1})
        src = self.queue("src", VisibilityTimeout=0, RedrivePolicy=policy)
        self.src = src
        got = self.sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["RedrivePolicy"])
        rp = json.loads(got["Attributes"]["RedrivePolicy"])
        assert rp["deadLetterTargetArn"] == self.arn(dlq) and int(rp["maxReceiveCount"]) == 1, rp
        sent = self.sqs.send_message(QueueUrl=src, MessageBody="poison")
        first = self.receive(src)
        assert [m["Body"] for m in first] == ["poison"], first
        second = self.receive(src)
        assert second == [], "second receive should have moved the message: %s" % second
        moved = self.receive(dlq, WaitTimeSeconds=2)
        assert [m["Body"] for m in moved] == ["poison"], moved
        assert moved[0]["MessageId"] == sent["MessageId"], moved
        sources = self.sqs.list_dead_letter_source_queues(QueueUrl=dlq)["queueUrls"]
        assert sources == [src], sources

    def tags(self):
        self.sqs.tag_queue(QueueUrl=self.std, Tags={"env": "test", "team": "core"})
        assert self.sqs.list_queue_tags(QueueUrl=self.std)["Tags"] == {
            "env": "test", "team": "core"}
        self.sqs.untag_queue(QueueUrl=self.std, TagKeys=["team"])
        assert self.sqs.list_queue_tags(QueueUrl=self.std)["Tags"] == {"env": "test"}

    def purge(self):
        for i in range(3):
            self.sqs.send_message(QueueUrl=self.std, MessageBody="purge-%d" % i)
        self.sqs.purge_queue(QueueUrl=self.std)
        assert self.receive(self.std) == []
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.std, AttributeNames=[
            "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        assert attrs == {"ApproximateNumberOfMessages": "0",
                         "ApproximateNumberOfMessagesNotVisible": "0"}, attrs

    def queue_attributes(self):
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.std,
                                              AttributeNames=["All"])["Attributes"]
        for key in ("QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds",
                    "MaximumMessageSize", "MessageRetentionPeriod",
                    "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout"):
            assert key in attrs, (key, attrs)
        assert attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:%s-std" % self.prefix
        assert attrs["VisibilityTimeout"] == "30", attrs
        self.sqs.set_queue_attributes(QueueUrl=self.std, Attributes={
            "VisibilityTimeout": "45", "MessageRetentionPeriod": "3600", "DelaySeconds": "0"})
        attrs = self.sqs.get_queue_attributes(QueueUrl=self.std, AttributeNames=[
            "VisibilityTimeout", "MessageRetentionPeriod"])["Attributes"]
        assert attrs == {"VisibilityTimeout": "45", "MessageRetentionPeriod": "3600"}, attrs
        fifo = self.sqs.get_queue_attributes(QueueUrl=self.fifo,
                                             AttributeNames=["All"])["Attributes"]
        assert fifo["FifoQueue"] == "true", fifo
        assert fifo["ContentBasedDeduplication"] == "false", fifo

    def missing_queue_error(self):
        name = "%s-does-not-exist" % self.prefix
        try:
            self.sqs.get_queue_url(QueueName=name)
        except self.sqs.exceptions.QueueDoesNotExist as exc:
            err = exc.response["Error"]
            status = exc.response["ResponseMetadata"]["HTTPStatusCode"]
            assert err["Code"] == NON_EXISTENT, err
            assert status == 400, status
            print("       caught %s: Code=%s" % (type(exc).__name__, err["Code"]))
        else:
            raise AssertionError("GetQueueUrl of a missing queue succeeded")
        # The same error through a generic ClientError handler, from a queue-URL action.
        try:
            self.sqs.send_message(QueueUrl=self.std.replace("-std", "-nope"), MessageBody="x")
        except ClientError as exc:
            assert exc.response["Error"]["Code"] == NON_EXISTENT, exc.response["Error"]
        else:
            raise AssertionError("SendMessage to a missing queue succeeded")

    def delete_queues(self):
        for url in (self.std, self.fifo, self.dlq, self.src):
            self.sqs.delete_queue(QueueUrl=url)
        left = self.sqs.list_queues(QueueNamePrefix=self.prefix).get("QueueUrls", [])
        assert left == [], left
        try:
            self.sqs.get_queue_attributes(QueueUrl=self.std, AttributeNames=["All"])
        except self.sqs.exceptions.QueueDoesNotExist:
            pass
        else:
            raise AssertionError("deleted queue still answers")

    def protocol_check(self):
        reqs = self.recorder.requests
        assert reqs, "no request was captured"
        kinds = {}
        ops = set()
        for method, url, headers, body in reqs:
            kind = self.recorder.classify(headers, body, url)
            kinds[kind] = kinds.get(kind, 0) + 1
            ops.add(self.recorder.operation(headers, body, url))
        print("EVIDENCE %s: %s" % (self.name, self.recorder.evidence(0)))
        assert kinds == {self.protocol: len(reqs)}, (
            "expected every request to use %s, saw %s" % (self.protocol, kinds))
        print("       %d requests, all %s; operations: %s" % (
            len(reqs), self.protocol.upper(), " ".join(sorted(ops))))

    def steps(self):
        return [
            ("create queues", self.create_queues),
            ("send/receive attributes", self.send_receive_attributes),
            ("batch send/delete/visibility", self.batches),
            ("long poll woken by send", self.long_poll),
            ("visibility timeout expiry", self.visibility_timeout),
            ("fifo order + dedup", self.fifo_order_dedup),
            ("dead-letter redrive", self.dead_letter_queue),
            ("tags", self.tags),
            ("purge", self.purge),
            ("queue attributes", self.queue_attributes),
            ("missing queue error", self.missing_queue_error),
            ("delete queues", self.delete_queues),
            ("protocol evidence", self.protocol_check),
        ]

    def run(self):
        print("%s: %s, protocol expected %s" % (
            self.name, self.describe_client(), self.protocol.upper()))
        for title, fn in self.steps():
            if title in ("create queues",) or "create queues" not in self.failures:
                self.step(title, fn)
        return not self.failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--protocol", choices=["json", "query"], required=True)
    args = ap.parse_args()
    ok = Scenario(args.endpoint, args.name, args.protocol).run()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
