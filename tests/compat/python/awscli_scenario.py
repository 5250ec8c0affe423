"""A shorter compatibility scenario driven through the AWS CLI v1 (`aws ... sqs ...` subprocesses).

    python awscli_scenario.py --endpoint http://127.0.0.1:PORT --name awscli --protocol json

Every call runs with ``--debug``; botocore's "Making request for OperationModel(...)" debug line
shows the headers and body of the request, which is the protocol evidence. The scenario fails if
any call used a protocol other than ``--protocol``.
"""

import argparse
import base64
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import md5_hex, md5_of_attributes  # noqa: E402

NON_EXISTENT = "AWS.SimpleQueueService.NonExistentQueue"
REQUEST_LINE = re.compile(r"Making request for OperationModel\(name=(\w+)\) with params: (.*)$")


class CliError(Exception):
    def __init__(self, args, rc, stderr):
        self.rc = rc
        self.tail = "\n".join(stderr.strip().splitlines()[-3:])
        super().__init__("aws %s exited %d: %s" % (" ".join(args[:2]), rc, self.tail))


class Scenario:
    def __init__(self, endpoint, name, protocol):
        self.endpoint = endpoint
        self.name = name
        self.protocol = protocol
        self.prefix = "compat-%s-%d" % (name, os.getpid())
        self.aws = os.path.join(os.path.dirname(sys.executable), "aws")
        self.home = tempfile.mkdtemp(prefix="compat-awscli-")
        self.env = dict(os.environ)
        for key in list(self.env):
            if key.startswith("AWS_"):
                del self.env[key]
        self.env.update({
            "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.path.join(self.home, "config"),
            "AWS_SHARED_CREDENTIALS_FILE": os.path.join(self.home, "credentials"),
            "AWS_MAX_ATTEMPTS": "1",
            "HOME": self.home,
        })
        self.requests = []  # (operation, params text)
        self.failures = []

    def cli(self, *args, expect_error=False):
        cmd = [self.aws, "--debug", "--endpoint-url", self.endpoint, "--output", "json",
               "sqs"] + list(args)
        p = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=60)
        for line in p.stderr.splitlines():
            m = REQUEST_LINE.search(line)
            if m:
                self.requests.append((m.group(1), m.group(2)))
        if expect_error:
            if p.returncode == 0:
                raise AssertionError("aws %s succeeded, expected an error" % args[0])
            return p.stderr
        if p.returncode != 0:
            raise CliError(list(args), p.returncode, p.stderr)
        return json.loads(p.stdout) if p.stdout.strip() else {}

    def classify(self, params):
        if re.search(r"'X-Amz-Target': 'AmazonSQS\.\w+'", params):
            return "json"
        if re.search(r"'body': \{'Action': '\w+'", params) or "Action=" in params:
            return "query"
        return "unknown"

    def step(self, title, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001
            self.failures.append(title)
            print("  FAIL %-28s %s: %s" % (title, type(exc).__name__, exc))
        else:
            print("  ok   %-28s (%.2fs)" % (title, time.monotonic() - t0))

    # ---------------------------------------------------------------- steps
    def create_queues(self):
        self.std = self.cli("create-queue", "--queue-name", self.prefix + "-std")["QueueUrl"]
        self.fifo = self.cli("create-queue", "--queue-name", self.prefix + "-fifo.fifo",
                             "--attributes", "FifoQueue=true")["QueueUrl"]
        assert self.std.endswith("/000000000000/%s-std" % self.prefix), self.std
        urls = self.cli("list-queues", "--queue-name-prefix", self.prefix)["QueueUrls"]
        assert sorted(urls) == sorted([self.std, self.fifo]), urls

    def send_receive(self):
        body = "hello from the aws cli \u00e9"
        # CLI v1 passes blob arguments through as raw (UTF-8) bytes and prints them base64.
        raw = "raw\u0001bytes"
        attrs = {
            "color": {"DataType": "String", "StringValue": "blue"},
            "timestamp": {"DataType": "Number.java.lang.Long", "StringValue": "1493147359900"},
            "blob": {"DataType": "Binary", "BinaryValue": raw},
        }
        expected = dict(attrs, blob={"DataType": "Binary", "BinaryValue": raw.encode()})
        sent = self.cli("send-message", "--queue-url", self.std, "--message-body", body,
                        "--message-attributes", json.dumps(attrs))
        assert sent["MD5OfMessageBody"] == md5_hex(body.encode()), sent
        assert sent["MD5OfMessageAttributes"] == md5_of_attributes(expected), sent
        got = self.cli("receive-message", "--queue-url", self.std, "--wait-time-seconds", "2",
                       "--message-attribute-names", "All", "--attribute-names", "All")
        msgs = got.get("Messages", [])
        assert len(msgs) == 1, got
        m = msgs[0]
        assert m["Body"] == body and m["MessageId"] == sent["MessageId"], m
        assert m["MD5OfBody"] == md5_hex(body.encode()), m
        shown = m["MessageAttributes"]
        assert shown["blob"]["BinaryValue"] == base64.b64encode(raw.encode()).decode(), shown
        assert shown["color"] == attrs["color"] and shown["timestamp"] == attrs["timestamp"], shown
        assert m["MD5OfMessageAttributes"] == md5_of_attributes(expected), m
        assert m["Attributes"]["ApproximateReceiveCount"] == "1", m
        self.cli("delete-message", "--queue-url", self.std, "--receipt-handle", m["ReceiptHandle"])
        res = self.cli("delete-message-batch", "--queue-url", self.std, "--entries",
                       json.dumps([{"Id": "bad", "ReceiptHandle": "not-a-receipt-handle"}]))
        failed = res.get("Failed", [])
        assert [(f["Id"], f["Code"], f["SenderFault"]) for f in failed] == [
            ("bad", "ReceiptHandleIsInvalid", True)], res
        again = self.cli("receive-message", "--queue-url", self.std)
        assert not again.get("Messages"), again

    def fifo(self):
        seqs = []
        for i, dedup in enumerate(["d1", "d1", "d2"]):
            r = self.cli("send-message", "--queue-url", self.fifo, "--message-body", "f-%d" % i,
                         "--message-group-id", "g1", "--message-deduplication-id", dedup)
            if i != 1:
                assert r.get("SequenceNumber", "").isdigit(), r
                seqs.append(int(r["SequenceNumber"]))
        assert seqs == sorted(seqs), seqs
        got = self.cli("receive-message", "--queue-url", self.fifo, "--max-number-of-messages",
                       "10", "--attribute-names", "All")
        assert [m["Body"] for m in got.get("Messages", [])] == ["f-0", "f-2"], got

    def attributes_tags_purge(self):
        attrs = self.cli("get-queue-attributes", "--queue-url", self.std,
                         "--attribute-names", "All")["Attributes"]
        assert attrs["VisibilityTimeout"] == "30", attrs
        assert attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:%s-std" % self.prefix
        self.cli("set-queue-attributes", "--queue-url", self.std, "--attributes",
                 "VisibilityTimeout=45,DelaySeconds=1")
        attrs = self.cli("get-queue-attributes", "--queue-url", self.std, "--attribute-names",
                         "VisibilityTimeout", "DelaySeconds")["Attributes"]
        assert attrs == {"VisibilityTimeout": "45", "DelaySeconds": "1"}, attrs
        self.cli("tag-queue", "--queue-url", self.std, "--tags", "env=test,team=core")
        self.cli("untag-queue", "--queue-url", self.std, "--tag-keys", "team")
        tags = self.cli("list-queue-tags", "--queue-url", self.std)["Tags"]
        assert tags == {"env": "test"}, tags
        self.cli("purge-queue", "--queue-url", self.fifo)
        left = self.cli("get-queue-attributes", "--queue-url", self.fifo, "--attribute-names",
                        "ApproximateNumberOfMessages",
                        "ApproximateNumberOfMessagesNotVisible")["Attributes"]
        assert left == {"ApproximateNumberOfMessages": "0",
                        "ApproximateNumberOfMessagesNotVisible": "0"}, left

    def missing_queue(self):
        err = self.cli("get-queue-url", "--queue-name", self.prefix + "-does-not-exist",
                       expect_error=True)
        last = err.strip().splitlines()[-1]
        assert "(%s)" % NON_EXISTENT in last, last
        print("       %s" % last.strip())

    def delete_queues(self):
        for url in (self.std, self.fifo):
            self.cli("delete-queue", "--queue-url", url)
        urls = self.cli("list-queues", "--queue-name-prefix", self.prefix).get("QueueUrls", [])
        assert urls == [], urls

    def protocol_check(self):
        assert self.requests, "no request was captured from --debug"
        kinds = {}
        for _, params in self.requests:
            kind = self.classify(params)
            kinds[kind] = kinds.get(kind, 0) + 1
        op, params = self.requests[0]
        target = re.search(r"'X-Amz-Target': '([^']+)'", params)
        ctype = re.search(r"'Content-Type': '([^']+)'", params)
        body = re.search(r"'body': (b'[^']*'|\{[^}]*\})", params)
        print("EVIDENCE %s: %s %s -> %s (X-Amz-Target: %s; Content-Type: %s; body=%s)" % (
            self.name, "POST", self.endpoint + "/", self.classify(params).upper(),
            target.group(1) if target else None, ctype.group(1) if ctype else None,
            body.group(1)[:80] if body else None))
        assert kinds == {self.protocol: len(self.requests)}, (
            "expected every request to use %s, saw %s" % (self.protocol, kinds))
        print("       %d requests, all %s; operations: %s" % (
            len(self.requests), self.protocol.upper(),
            " ".join(sorted({op for op, _ in self.requests}))))

    def run(self):
        version = subprocess.run([self.aws, "--version"], env=self.env, capture_output=True,
                                 text=True).stdout.strip() or "?"
        print("%s: %s, protocol expected %s" % (self.name, version, self.protocol.upper()))
        for title, fn in [
            ("create queues", self.create_queues),
            ("send/receive attributes", self.send_receive),
            ("fifo order + dedup", self.fifo),
            ("attributes, tags, purge", self.attributes_tags_purge),
            ("missing queue error", self.missing_queue),
            ("delete queues", self.delete_queues),
            ("protocol evidence", self.protocol_check),
        ]:
            if "create queues" in self.failures:
                break
            self.step(title, fn)
        return not self.failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--name", required=True)
    ap.add_argument("--protocol", choices=["json", "query"], required=True)
    args = ap.parse_args()
    sys.exit(0 if Scenario(args.endpoint, args.name, args.protocol).run() else 1)


if __name__ == "__main__":
    main()
