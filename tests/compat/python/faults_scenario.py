"""Fault injection and the movable clock, seen through boto3's own retry machinery.

Run by tests/compat/run.sh:

    python faults_scenario.py --endpoint http://127.0.0.1:PORT --name boto3-faults --protocol json

Rules are added with ``POST /_localsqs/faults`` (seeded, so a run replays exactly) and removed
with ``DELETE /_localsqs/faults``; the clock is moved with ``POST /_localsqs/clock``. The steps:

1. RequestThrottled (403) on half of the SendMessage calls: a client with
   ``retries={"max_attempts": 10, "mode": "standard"}`` sends 20 messages, every call succeeds,
   some needed retries (counted per attempt), and exactly 20 messages arrive.
   The ``legacy`` mode retries it as well (botocore's SQS retry policy names RequestThrottled).
2. The same error on every SendMessage with retries disabled: ClientError, code
   RequestThrottled, HTTP 403, exactly one attempt. A queue the rule does not name is
   unaffected. (In botocore ``retries={"max_attempts": N}`` counts *retries*, so
   ``max_attempts: 1`` still sends twice; ``total_max_attempts: 1``, the same as
   ``max_attempts: 0``, is "no retries".)
3. ServiceUnavailable (503) on half of the calls is retried by both the ``standard`` and the
   ``legacy`` retry modes.
4. A message received with VisibilityTimeout 30 is receivable again right after the clock is
   advanced by 30 seconds.

Rules are removed afterwards, also when a step fails. Exit status 0 means every step passed.

botocore's back-off sleeps (up to 20 s for a throttled attempt) are scaled by BACKOFF_SCALE so
the retries take seconds, not minutes; which errors are retried, how often, and the delays
botocore computes are untouched (the computed total is printed).
"""

import argparse
import json
import os
import sys
import time
import traceback
import urllib.request

import boto3
import botocore
import botocore.retries.standard
import botocore.retryhandler
from botocore.config import Config
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boto3_scenario import Recorder  # noqa: E402
from common import md5_hex  # noqa: E402


BACKOFF_SCALE = 0.1
BACKOFF = {"computed": 0.0, "retries": 0}


def _scaled(delay_fn):
    def wrapper(*args, **kwargs):
        delay = delay_fn(*args, **kwargs)
        BACKOFF["computed"] += delay
        BACKOFF["retries"] += 1
        return delay * BACKOFF_SCALE
    return wrapper


# Standard mode asks ExponentialBackoff.delay_amount; legacy mode binds delay_exponential with
# functools.partial when a client is created (so this must run before the clients exist).
botocore.retries.standard.ExponentialBackoff.delay_amount = _scaled(
    botocore.retries.standard.ExponentialBackoff.delay_amount)
botocore.retryhandler.delay_exponential = _scaled(botocore.retryhandler.delay_exponential)


class Attempts:
    """Every HTTP attempt of one client: (operation, HTTP status, error code or None)."""

    def __init__(self):
        self.seen = []

    def response_received(self, response_dict=None, parsed_response=None, context=None,
                          exception=None, **kwargs):
        op = kwargs.get("event_name", "").rsplit(".", 1)[-1]
        if exception is not None or response_dict is None:
            self.seen.append((op, None, type(exception).__name__))
            return
        status = response_dict.get("status_code")
        code = None
        if parsed_response and "Error" in parsed_response:
            code = parsed_response["Error"].get("Code")
        self.seen.append((op, status, code))

    def of(self, op):
        return [a for a in self.seen if a[0] == op]

    def clear(self):
        self.seen = []


class Scenario:
    def __init__(self, endpoint, name, protocol):
        self.endpoint = endpoint.rstrip("/")
        self.name = name
        self.protocol = protocol
        self.prefix = "compat-%s-%d" % (name, os.getpid())
        self.recorder = Recorder()
        self.session = boto3.session.Session(
            aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
        self.failures = []
        self.queues = []

    def client(self, **retries):
        sqs = self.session.client(
            "sqs", endpoint_url=self.endpoint,
            config=Config(retries=retries, read_timeout=30, connect_timeout=5))
        sqs.meta.events.register("before-send.sqs", self.recorder.before_send)
        attempts = Attempts()
        sqs.meta.events.register("response-received.sqs", attempts.response_received)
        return sqs, attempts

    # ---------------------------------------------------------------- admin endpoints
    def admin(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b"{}")

    def add_fault(self, rule):
        answer = self.admin("POST", "/_localsqs/faults", rule)
        assert str(answer.get("id", "")).startswith("fault-"), answer
        print("       fault rule %s: %s" % (answer["id"], json.dumps(rule, sort_keys=True)))
        return answer["id"]

    def clear_faults(self):
        self.admin("DELETE", "/_localsqs/faults")
        left = self.admin("GET", "/_localsqs/faults").get("faults")
        assert left == [], "rules left after DELETE /_localsqs/faults: %s" % left

    # ---------------------------------------------------------------- helpers
    def step(self, title, fn):
        t0 = time.monotonic()
        try:
            fn()
        except Exception as exc:  # noqa: BLE001 - report every kind of failure
            self.failures.append(title)
            print("  FAIL %-34s %s: %s" % (title, type(exc).__name__, exc))
            if isinstance(exc, ClientError):
                meta = exc.response.get("ResponseMetadata", {})
                print("       HTTP %s headers=%s" % (meta.get("HTTPStatusCode"),
                                                   meta.get("HTTPHeaders")))
                print("       Error=%s" % exc.response.get("Error"))
            traceback.print_exc(limit=3, file=sys.stdout)
        else:
            print("  ok   %-34s (%.2fs)" % (title, time.monotonic() - t0))

    def queue(self, sqs, suffix, **attrs):
        name = "%s-%s" % (self.prefix, suffix)
        url = sqs.create_queue(QueueName=name,
                               Attributes={k: str(v) for k, v in attrs.items()})["QueueUrl"]
        self.queues.append(url)
        return name, url

    @staticmethod
    def drain(sqs, url, expect, timeout=10, settle=0):
        """Receives (and deletes) until `expect` messages arrived, then once more (a long poll
        of `settle` seconds) to catch any extra."""
        got = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10,
                                       WaitTimeSeconds=0 if len(got) < expect else settle,
                                       AttributeNames=["All"]).get("Messages", [])
            if not msgs:
                if len(got) >= expect:
                    break
                continue
            for m in msgs:
                assert m["MD5OfBody"] == md5_hex(m["Body"].encode()), m
                got.append(m)
            sqs.delete_message_batch(QueueUrl=url, Entries=[
                {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)])
        return got

    # ---------------------------------------------------------------- steps
    def setup(self):
        self.plain, _ = self.client(total_max_attempts=1)
        self.q_name, self.q_url = self.queue(self.plain, "throttled")
        self.other_name, self.other_url = self.queue(self.plain, "untouched")
        self.clock_name, self.clock_url = self.queue(self.plain, "clock")
        self.clear_faults()

    def sends_with_retries(self, mode, count, error, status, tag):
        """`count` sends through a client with 10 retries in `mode` under the current rule;
        every call must succeed, and every failed attempt must be `status` `error`."""
        sqs, attempts = self.client(max_attempts=10, mode=mode)
        before = dict(BACKOFF)
        retried = 0
        bodies = []
        for i in range(count):
            body = "%s-%s-%02d" % (tag, mode, i)
            r = sqs.send_message(QueueUrl=self.q_url, MessageBody=body)
            assert r["MD5OfMessageBody"] == md5_hex(body.encode()), r
            retried += r["ResponseMetadata"]["RetryAttempts"]
            bodies.append(body)
        sends = attempts.of("SendMessage")
        ok = [a for a in sends if a[1] == 200]
        failed = [a for a in sends if a[1:] == (status, error)]
        assert len(ok) == count, sends
        assert len(failed) + len(ok) == len(sends), (
            "every failed attempt should be HTTP %d %s: %s" % (status, error, sends))
        assert failed, "error_rate 0.5 failed none of %d attempts" % len(sends)
        assert retried == len(failed), (retried, len(failed))
        assert BACKOFF["retries"] - before["retries"] == len(failed), (BACKOFF, before)
        print("       %s mode: %d sends took %d attempts; %d answered %d %s and were retried "
              "(back-off %.1fs as computed by botocore)" % (
                  mode, count, len(sends), len(failed), status, error,
                  BACKOFF["computed"] - before["computed"]))
        return bodies

    def throttling_absorbed(self):
        self.clear_faults()
        self.add_fault({"queue": self.q_name, "actions": ["SendMessage"],
                        "error": "RequestThrottled", "error_rate": 0.5, "seed": 7})
        bodies = self.sends_with_retries("standard", 20, "RequestThrottled", 403, "throttled")
        self.clear_faults()
        got = sorted(m["Body"] for m in self.drain(self.plain, self.q_url, 20, settle=1))
        assert got == sorted(bodies), (
            "expected exactly the 20 messages once each, got %d: %s" % (len(got), got))

    def throttling_absorbed_legacy(self):
        self.clear_faults()
        self.add_fault({"queue": self.q_name, "actions": ["SendMessage"],
                        "error": "RequestThrottled", "error_rate": 0.5, "seed": 13})
        bodies = self.sends_with_retries("legacy", 10, "RequestThrottled", 403, "throttled")
        self.clear_faults()
        got = sorted(m["Body"] for m in self.drain(self.plain, self.q_url, 10, settle=1))
        assert got == sorted(bodies), got

    def throttling_without_retries(self):
        self.clear_faults()
        sqs, attempts = self.client(total_max_attempts=1, mode="standard")
        self.add_fault({"queue": self.q_name, "actions": ["SendMessage"],
                        "error": "RequestThrottled", "error_rate": 1, "seed": 7})
        try:
            sqs.send_message(QueueUrl=self.q_url, MessageBody="never")
        except ClientError as exc:
            err = exc.response["Error"]
            meta = exc.response["ResponseMetadata"]
            assert err["Code"] == "RequestThrottled", err
            assert meta["HTTPStatusCode"] == 403, meta
            if self.protocol == "json":
                header = meta["HTTPHeaders"].get("x-amzn-query-error")
                assert header == "RequestThrottled;Sender", meta["HTTPHeaders"]
            print("       ClientError %s, HTTP %s, message %r" % (
                err["Code"], meta["HTTPStatusCode"], err.get("Message")))
        else:
            raise AssertionError("SendMessage succeeded under an error_rate 1 rule")
        assert attempts.of("SendMessage") == [("SendMessage", 403, "RequestThrottled")], (
            attempts.seen)
        # The rule names one queue and one action: others are untouched.
        sqs.send_message(QueueUrl=self.other_url, MessageBody="elsewhere")
        assert sqs.receive_message(QueueUrl=self.q_url).get("Messages", []) == []
        self.clear_faults()
        got = self.drain(self.plain, self.other_url, 1)
        assert [m["Body"] for m in got] == ["elsewhere"], got
        sqs.send_message(QueueUrl=self.q_url, MessageBody="after")
        assert [m["Body"] for m in self.drain(self.plain, self.q_url, 1)] == ["after"]

    def service_unavailable_retried(self):
        bodies = []
        for mode, seed in (("standard", 11), ("legacy", 6)):
            self.clear_faults()
            self.add_fault({"queue": self.q_name, "actions": ["SendMessage"],
                            "error": "ServiceUnavailable", "error_rate": 0.5, "seed": seed})
            bodies += self.sends_with_retries(mode, 6, "ServiceUnavailable", 503, "unavailable")
        self.clear_faults()
        got = sorted(m["Body"] for m in self.drain(self.plain, self.q_url, 12, settle=1))
        assert got == sorted(bodies), got

    def clock_advance(self):
        sqs = self.plain
        sent = sqs.send_message(QueueUrl=self.clock_url, MessageBody="tick")
        first = sqs.receive_message(QueueUrl=self.clock_url, VisibilityTimeout=30,
                                    AttributeNames=["All"]).get("Messages", [])
        assert [m["MessageId"] for m in first] == [sent["MessageId"]], first
        assert sqs.receive_message(QueueUrl=self.clock_url).get("Messages", []) == []
        before = self.admin("GET", "/_localsqs/clock")
        state = self.admin("POST", "/_localsqs/clock", {"advance_seconds": 30})
        moved = state["now_ms"] - before["now_ms"]
        assert 30000 <= moved < 40000, (before, state)
        t0 = time.monotonic()
        again = sqs.receive_message(QueueUrl=self.clock_url,
                                    AttributeNames=["All"]).get("Messages", [])
        assert [m["MessageId"] for m in again] == [sent["MessageId"]], (
            "message with VisibilityTimeout 30 not receivable right after advancing the clock "
            "by 30 s (clock %s -> %s): %s" % (before, state, again))
        assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2", again[0]
        print("       clock offset now %d ms; received again after %.2fs of real time" % (
            state["offset_ms"], time.monotonic() - t0))
        sqs.delete_message(QueueUrl=self.clock_url, ReceiptHandle=again[0]["ReceiptHandle"])

    def cleanup(self):
        self.clear_faults()
        for url in self.queues:
            self.plain.delete_queue(QueueUrl=url)
        left = self.plain.list_queues(QueueNamePrefix=self.prefix).get("QueueUrls", [])
        assert left == [], left

    def protocol_check(self):
        reqs = self.recorder.requests
        kinds = {}
        for method, url, headers, body in reqs:
            kind = self.recorder.classify(headers, body, url)
            kinds[kind] = kinds.get(kind, 0) + 1
        print("EVIDENCE %s: %s" % (self.name, self.recorder.evidence(0)))
        assert kinds == {self.protocol: len(reqs)}, (
            "expected every request to use %s, saw %s" % (self.protocol, kinds))
        print("       %d requests, all %s" % (len(reqs), self.protocol.upper()))

    def run(self):
        print("%s: boto3 %s, botocore %s, protocol expected %s" % (
            self.name, boto3.__version__, botocore.__version__, self.protocol.upper()))
        self.step("setup", self.setup)
        if self.failures:
            return False
        try:
            self.step("standard retries absorb throttling", self.throttling_absorbed)
            self.step("legacy retries absorb throttling", self.throttling_absorbed_legacy)
            self.step("no retries: RequestThrottled 403", self.throttling_without_retries)
            self.step("ServiceUnavailable 503 retried", self.service_unavailable_retried)
            self.step("clock advance ends visibility", self.clock_advance)
        finally:
            self.step("remove rules, delete queues", self.cleanup)
        self.step("protocol evidence", self.protocol_check)
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
