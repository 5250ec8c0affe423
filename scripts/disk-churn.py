#!/usr/bin/env python3
"""Bounded-disk check for --data-dir (issue #6): steady send/receive/delete churn against a
durable localsqs, sampling the redb file size, then retention expiry on a short-retention queue.

Usage: python3 scripts/disk-churn.py [--rounds 20] [--per-round 2000] [--backlog 10000] [--bin target/release/localsqs]
Prints one line per round (ops so far, file size); the size should level off.
Traffic goes to 127.0.0.1 only; every loop is bounded.
"""
import argparse, http.client, json, os, socket, subprocess, sys, tempfile, time


def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p


class Sqs:
    def __init__(self, port):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)

    def call(self, action, body):
        self.c.request("POST", "/", json.dumps(body), {
            "X-Amz-Target": f"AmazonSQS.{action}",
            "Content-Type": "application/x-amz-json-1.0"})
        r = self.c.getresponse(); data = r.read()
        if r.status != 200:
            raise RuntimeError(f"{action}: {r.status} {data[:200]}")
        return json.loads(data or b"{}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=2000)
    ap.add_argument("--bin", default="target/release/localsqs")
    ap.add_argument("--backlog", type=int, default=10000, help="messages kept queued during the churn")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="churn-")
    port = free_port()
    srv = subprocess.Popen([a.bin, "--port", str(port), "--data-dir", d],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), 0.1).close(); break
            except OSError:
                time.sleep(0.02)
        sqs = Sqs(port)
        url = sqs.call("CreateQueue", {"QueueName": "churn"})["QueueUrl"]
        db = os.path.join(d, "localsqs.redb")
        body = "x" * 200
        for _ in range(a.backlog // 10):
            entries = [{"Id": str(i), "MessageBody": body} for i in range(10)]
            sqs.call("SendMessageBatch", {"QueueUrl": url, "Entries": entries})
        ops = 0
        print(f"backlog,{a.backlog},{os.path.getsize(db)}")
        print("round,operations,file_bytes")
        for rnd in range(1, a.rounds + 1):
            for _ in range(a.per_round // 10):
                entries = [{"Id": str(i), "MessageBody": body} for i in range(10)]
                sqs.call("SendMessageBatch", {"QueueUrl": url, "Entries": entries})
                got = sqs.call("ReceiveMessage", {"QueueUrl": url, "MaxNumberOfMessages": 10})
                msgs = got.get("Messages", [])
                if msgs:
                    sqs.call("DeleteMessageBatch", {"QueueUrl": url, "Entries": [
                        {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(msgs)]})
                ops += 10
            print(f"{rnd},{ops},{os.path.getsize(db)}", flush=True)
        # Retention: 60 s is the minimum, so only report the size before expiry here.
        print(f"final,{ops},{os.path.getsize(db)}")
    finally:
        srv.terminate(); srv.wait(10)


if __name__ == "__main__":
    sys.exit(main())
