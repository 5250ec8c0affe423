"""The compatibility scenario through legacy boto 2 (`boto.sqs`, Debian's python3-boto 2.49.0;
Query protocol). Run by tests/compat/run.sh with Debian's /usr/bin/python3:

    /usr/bin/python3 boto2_scenario.py --endpoint http://127.0.0.1:PORT --name boto2

boto 2 checks no MD5 itself, cannot pass attributes to CreateQueue (so no FIFO queue) and has no
tagging: the scenario checks every MD5 it is given, sets attributes after creation, and leaves
FIFO and tags out. It takes binary attribute values as the base64 text the Query protocol
carries. Every request goes through a wrapper of the connection's `_mexe` and the run fails
unless all of them used the Query protocol.
"""

import argparse
import base64
import json
import os
import re
import sys
import threading
import time
import traceback
from urllib.parse import urlparse

import boto
from boto.exception import SQSError
from boto.sqs.connection import SQSConnection
from boto.sqs.message import RawMessage
from boto.sqs.regioninfo import SQSRegionInfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import md5_hex, md5_of_attributes  # noqa: E402

NON_EXISTENT = "AWS.SimpleQueueService.NonExistentQueue"

# Server bugs that are reported and not fixed yet: a check that hits one prints a KNOWN_BUG line
# (collected by run.sh) instead of failing; once the server is fixed the check passes again and
# says so, and the entry should go.
KNOWN_BUGS = {}
BLOB = b"\x00\x01\xfe\xff\x80\n\x7f"
ATTRS = {  # boto 2's spelling; binary values as base64 text
    "color": {"data_type": "String", "string_value": "blue \u00e9\u6f22"},
    "timestamp": {"data_type": "Number.java.lang.Long", "string_value": "1493147359900"},
    "blob": {"data_type": "Binary", "binary_value": base64.b64encode(BLOB).decode()},
}
# The same attributes as the MD5 reference sees them (decoded binary value).
ATTRS_WIRE = {
    "color": {"DataType": "String", "StringValue": "blue \u00e9\u6f22"},
    "timestamp": {"DataType": "Number.java.lang.Long", "StringValue": "1493147359900"},
    "blob": {"DataType": "Binary", "BinaryValue": BLOB},
}


class Scenario:
    def __init__(self, endpoint, name):
        self.name = name
        self.prefix = "compat-%s-%d" % (name, os.getpid())
        u = urlparse(endpoint)
        self.sqs = SQSConnection(aws_access_key_id="test", aws_secret_access_key="test",
                                 is_secure=False, port=u.port,
                                 region=SQSRegionInfo(name="us-east-1", endpoint=u.hostname))
        self.sqs.num_retries = 0
        self.requests = []
        mexe = self.sqs._mexe

        def recording_mexe(request, *args, **kwargs):
            # boto 2 signs in _mexe, moving the parameters into the query string (GET) or the
            # form body (POST); record them before that, with the headers set so far.
            self.requests.append((request.method, "http://%s:%s%s" % (
                request.host, request.port, request.path), dict(request.headers),
                dict(request.params)))
            return mexe(request, *args, **kwargs)

        self.sqs._mexe = recording_mexe
        self.failures = []
        self.skips = []

    def known_bug(self, bug, ok, evidence):
        """True if the check passed. A failure of a listed bug is a loud skip, not a failure."""
        if ok:
            if bug in KNOWN_BUGS:
                print("       note: KNOWN_BUG %s no longer reproduces; remove it from KNOWN_BUGS"
                      % bug)
            return True
        if bug not in KNOWN_BUGS:
            raise AssertionError(evidence)
        self.skips.append(bug)
        print("       KNOWN_BUG skip (%s): %s -- %s" % (bug, KNOWN_BUGS[bug], evidence))
        return False

    def step(self, title, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report every kind of failure
            self.failures.append(title)
            print("  FAIL %-30s %s: %s" % (title, type(exc).__name__, exc))
            traceback.print_exc(limit=3, file=sys.stdout)
        else:
            print("  ok   %-30s (%.2fs)" % (title, time.monotonic() - t0))

    def queue(self, suffix):
        q = self.sqs.create_queue("%s-%s" % (self.prefix, suffix))
        q.set_message_class(RawMessage)
        return q

    def receive(self, q, n=10, **kw):
        kw.setdefault("wait_time_seconds", 0)
        msgs = self.sqs.receive_message(q, number_messages=n, **kw)
        for m in msgs:
            assert m.md5 == md5_hex(m.get_body().encode()), (
                "MD5OfBody %s of body %r" % (m.md5, m.get_body()))
        return msgs

    def create_queues(self):
        self.std = self.queue("std")
        assert self.std.url.endswith("/000000000000/%s-std" % self.prefix), self.std.url
        urls = [q.url for q in self.sqs.get_all_queues(prefix=self.prefix)]
        assert urls == [self.std.url], urls
        assert self.queue("std").url == self.std.url
        assert self.sqs.get_queue("%s-std" % self.prefix).url == self.std.url

    def send_receive_attributes(self):
        body = "hello <localsqs> & \"friends\" \u00e9"
        sent = self.sqs.send_message(self.std, body, message_attributes=ATTRS)
        assert sent.id, sent
        assert sent.md5_message_attributes == md5_of_attributes(ATTRS_WIRE), (
            "MD5OfMessageAttributes %s, want %s" % (sent.md5_message_attributes,
                                                    md5_of_attributes(ATTRS_WIRE)))
        msgs = self.receive(self.std, attributes="All", message_attributes=["All"],
                            wait_time_seconds=2)
        assert len(msgs) == 1, msgs
        m = msgs[0]
        assert m.id == sent.id and m.get_body() == body, (m.id, m.get_body())
        assert m.message_attributes == ATTRS, m.message_attributes
        assert m.md5_message_attributes == md5_of_attributes(ATTRS_WIRE), m.md5_message_attributes
        assert m.attributes["ApproximateReceiveCount"] == "1", m.attributes
        for key in ("SentTimestamp", "ApproximateFirstReceiveTimestamp", "SenderId"):
            assert key in m.attributes, m.attributes
        assert self.sqs.delete_message(self.std, m) is True
        assert self.receive(self.std) == []

    def batches(self):
        res = self.sqs.send_message_batch(self.std, [
            ("m0", "batch-0", 0, {"n": {"data_type": "Number", "string_value": "7"}}),
            ("m1", "batch-1", 0), ("m2", "batch-2", 0)])
        assert not res.errors and len(res.results) == 3, (res.errors, res.results)
        for e in res.results:
            assert e["message_md5"] == md5_hex(("batch-" + e["id"][1:]).encode()), e
        got = {}
        deadline = time.monotonic() + 5
        while len(got) < 3 and time.monotonic() < deadline:
            for m in self.receive(self.std, wait_time_seconds=1):
                got[m.get_body()] = m
        assert sorted(got) == ["batch-0", "batch-1", "batch-2"], sorted(got)
        bad = RawMessage()  # boto 2 uses each message's id as the batch entry id
        bad.id, bad.receipt_handle = "bad-entry", "not-a-receipt-handle"
        # (boto 2 collects only entries named *MessageBatchResultEntry as results, so the
        # ChangeMessageVisibilityBatchResultEntry successes are never in res.results.)
        res = self.sqs.change_message_visibility_batch(self.std, [(got["batch-0"], 60), (bad, 60)])
        assert [e["id"] for e in res.errors] == ["bad-entry"], res.errors
        assert res.errors[0]["error_code"] == "ReceiptHandleIsInvalid", res.errors
        assert res.errors[0]["sender_fault"] == "true", res.errors
        res = self.sqs.delete_message_batch(self.std, list(got.values()) + [bad])
        assert sorted(e["id"] for e in res.results) == sorted(m.id for m in got.values()), (
            res.results)
        assert [e["id"] for e in res.errors] == ["bad-entry"], res.errors
        assert res.errors[0]["error_code"] == "ReceiptHandleIsInvalid", res.errors
        assert self.receive(self.std) == []

    def long_poll(self):
        result = {}

        def poll():
            t0 = time.monotonic()
            result["msgs"] = self.receive(self.std, wait_time_seconds=10)
            result["elapsed"] = time.monotonic() - t0

        th = threading.Thread(target=poll)
        th.start()
        time.sleep(0.5)
        self.std.write(RawMessage(body="wake-up"))
        th.join(15)
        assert not th.is_alive(), "long poll did not return"
        assert [m.get_body() for m in result["msgs"]] == ["wake-up"], result
        assert 0.3 < result["elapsed"] < 5, "long poll returned after %.2fs" % result["elapsed"]
        print("       long poll woke after %.2fs" % result["elapsed"])
        self.sqs.delete_message(self.std, result["msgs"][0])

    def change_visibility(self):
        sent = self.std.write(RawMessage(body="vis"))
        first = self.receive(self.std, visibility_timeout=30)
        assert [m.id for m in first] == [sent.id], first
        assert self.receive(self.std) == [], "message visible during its visibility timeout"
        first[0].change_visibility(0)  # (returns nothing in boto 2)
        again = self.receive(self.std, attributes="ApproximateReceiveCount")
        assert [m.id for m in again] == [sent.id], again
        assert again[0].attributes["ApproximateReceiveCount"] == "2", again[0].attributes
        self.sqs.delete_message(self.std, again[0])

    def dead_letter_queue(self):
        self.dlq = self.queue("dlq")
        self.src = self.queue("src")
        arn = self.sqs.get_queue_attributes(self.dlq, "QueueArn")["QueueArn"]
        policy = json.dumps({"deadLetterTargetArn": arn, "maxReceiveCount": 1})
        assert self.src.set_attribute("RedrivePolicy", policy) is True
        assert self.src.set_attribute("VisibilityTimeout", "0") is True
        got = self.src.get_attributes()
        if not self.known_bug("set-attribute-unindexed", got.get("RedrivePolicy") is not None
                              and got.get("VisibilityTimeout") == "0",
                              "after set_attribute RedrivePolicy and VisibilityTimeout 0: "
                              "RedrivePolicy %r, VisibilityTimeout %r" % (
                                  got.get("RedrivePolicy"), got.get("VisibilityTimeout"))):
            return
        self.src.write(RawMessage(body="poison"))
        assert [m.get_body() for m in self.receive(self.src)] == ["poison"]
        assert self.receive(self.src) == []
        assert [m.get_body() for m in self.receive(self.dlq, wait_time_seconds=2)] == ["poison"]
        sources = [q.url for q in self.sqs.get_dead_letter_source_queues(self.dlq)]
        assert sources == [self.src.url], sources

    def queue_attributes(self):
        attrs = self.std.get_attributes()
        for key in ("QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "DelaySeconds",
                    "MaximumMessageSize", "MessageRetentionPeriod",
                    "ReceiveMessageWaitTimeSeconds", "VisibilityTimeout"):
            assert key in attrs, (key, attrs)
        assert attrs["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:%s-std" % self.prefix
        assert self.std.get_timeout() == 30, self.std.get_timeout()
        assert self.std.set_timeout(45) is True
        self.known_bug("set-attribute-unindexed", self.std.get_timeout() == 45,
                       "set_timeout(45) answered True, VisibilityTimeout reads %r"
                       % self.std.get_timeout())

    def purge(self):
        for i in range(3):
            self.std.write(RawMessage(body="purge-%d" % i))
        assert self.std.purge() is True
        assert self.receive(self.std) == []
        assert self.std.count() == 0

    def missing_queue(self):
        assert self.sqs.get_queue("%s-does-not-exist" % self.prefix) is None
        ghost = self.sqs.get_queue("%s-std" % self.prefix)
        ghost.url = ghost.url.replace("-std", "-nope")
        try:
            ghost.write(RawMessage(body="x"))
        except SQSError as exc:
            assert exc.status == 400, exc.status
            assert exc.error_code == NON_EXISTENT, exc.error_code
            print("       caught SQSError: %s, HTTP %s" % (exc.error_code, exc.status))
        else:
            raise AssertionError("SendMessage to a missing queue succeeded")

    def delete_queues(self):
        for q in (self.std, self.dlq, self.src):
            assert self.sqs.delete_queue(q) is True
        assert self.sqs.get_all_queues(prefix=self.prefix) == []
        try:
            self.std.get_attributes()
        except SQSError as exc:
            assert exc.error_code == NON_EXISTENT, exc.error_code
        else:
            raise AssertionError("deleted queue still answers")

    def protocol_check(self):
        assert self.requests, "no request was captured"
        kinds = {}
        ops = set()
        for method, url, headers, params in self.requests:
            target = {k.lower(): v for k, v in headers.items()}.get("x-amz-target", "")
            action = params.get("Action", "")
            kind = ("json" if target.startswith("AmazonSQS.") else
                    "query" if re.fullmatch(r"[A-Za-z]+", action) else "unknown")
            kinds[kind] = kinds.get(kind, 0) + 1
            ops.add(action or "?")
        method, url, headers, params = self.requests[0]
        shown = "&".join("%s=%s" % kv for kv in sorted(params.items()))
        print("EVIDENCE %s: %s %s -> %s (no X-Amz-Target; parameters %s)" % (
            self.name, method, url, "QUERY" if "Action" in params else "UNKNOWN", shown[:80]))
        assert kinds == {"query": len(self.requests)}, (
            "expected every request to use query, saw %s" % kinds)
        print("       %d requests, all QUERY; operations: %s" % (
            len(self.requests), " ".join(sorted(ops))))

    def run(self):
        print("%s: boto %s (Debian python3-boto), Python %s, protocol expected QUERY" % (
            self.name, boto.__version__, sys.version.split()[0]))
        self.step("create queues", self.create_queues)
        if not self.failures:
            for title, fn in [
                ("send/receive attributes", self.send_receive_attributes),
                ("batch send/delete/visibility", self.batches),
                ("long poll woken by send", self.long_poll),
                ("change visibility", self.change_visibility),
                ("dead-letter redrive", self.dead_letter_queue),
                ("queue attributes", self.queue_attributes),
                ("purge", self.purge),
                ("missing queue error", self.missing_queue),
                ("delete queues", self.delete_queues),
            ]:
                self.step(title, fn)
        self.step("protocol evidence", self.protocol_check)
        if self.skips:
            print("       KNOWN_BUG skips: %s" % ", ".join(sorted(set(self.skips))))
        return not self.failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--name", required=True)
    args = ap.parse_args()
    sys.exit(0 if Scenario(args.endpoint, args.name).run() else 1)


if __name__ == "__main__":
    main()
