"""LocalStack-style init hooks (`localsqs --init-dir`) with the real AWS CLI, through `awslocal`.

Run by tests/compat/run.sh, which passes the server binary; this scenario writes an init
directory, starts its own server on a free port with `--init-dir` and `--compat localstack`,
and checks, as a LocalStack user's wait script would, through `/_localstack/init/ready`:

    python init_hooks_scenario.py --binary target/release/localsqs --name init-hooks

ready.d/01-queues.sh runs `awslocal sqs create-queue` twice (a standard queue and a FIFO one
with attributes) and `awslocal sqs send-message`; ready.d/02-broken.sh fails; ready.d/03-after.sh
runs after it. The CLI comes from this virtualenv (its bin directory is put on the server's
PATH, where awslocal finds `aws`).
"""

import argparse
import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request

import boto3

QUEUES = """#!/bin/sh
set -e
awslocal sqs create-queue --queue-name from-ready-d
awslocal sqs create-queue --queue-name orders.fifo \\
    --attributes FifoQueue=true,ContentBasedDeduplication=true
URL=$(awslocal sqs get-queue-url --queue-name from-ready-d --query QueueUrl --output text)
awslocal sqs send-message --queue-url "$URL" --message-body "seeded by ready.d"
"""
BROKEN = "#!/bin/sh\necho 'this one fails on purpose' >&2\nexit 4\n"
AFTER = "#!/bin/sh\nawslocal sqs create-queue --queue-name after-the-failure\n"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def get_json(url):
    with urllib.request.urlopen(url, timeout=2) as r:
        return json.loads(r.read())


def write_script(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP)


def run(binary):
    with tempfile.TemporaryDirectory() as root:
        ready = os.path.join(root, "ready.d")
        os.mkdir(ready)
        write_script(os.path.join(ready, "01-queues.sh"), QUEUES)
        write_script(os.path.join(ready, "02-broken.sh"), BROKEN)
        write_script(os.path.join(ready, "03-after.sh"), AFTER)
        port = free_port()
        env = dict(os.environ)
        # The `aws` of this virtualenv, for awslocal to run.
        env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
        log = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [binary, "--host", "127.0.0.1", "--port", str(port), "--compat", "localstack",
             "--init-dir", root],
            stdout=log, stderr=subprocess.STDOUT, env=env)
        endpoint = "http://127.0.0.1:%d" % port
        try:
            deadline = time.monotonic() + 120  # three CLI runs start a Python each
            status = None
            while time.monotonic() < deadline:
                try:
                    status = get_json(endpoint + "/_localstack/init/ready")
                    if status["completed"]:
                        break
                except Exception:  # noqa: BLE001 - not up yet
                    pass
                time.sleep(0.2)
            assert status and status["completed"], status
            states = [(s["name"], s["state"]) for s in status["scripts"]]
            assert states == [
                ("01-queues.sh", "SUCCESSFUL"),
                ("02-broken.sh", "ERROR"),
                ("03-after.sh", "SUCCESSFUL"),
            ], states
            print("  ok   ready.d ran in order; the failing script did not stop the next")
            sqs = boto3.session.Session(
                aws_access_key_id="test", aws_secret_access_key="test",
                region_name="us-east-1").client("sqs", endpoint_url=endpoint)
            names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"])
            assert names == ["after-the-failure", "from-ready-d", "orders.fifo"], names
            attrs = sqs.get_queue_attributes(
                QueueUrl=sqs.get_queue_url(QueueName="orders.fifo")["QueueUrl"],
                AttributeNames=["ContentBasedDeduplication"])["Attributes"]
            assert attrs == {"ContentBasedDeduplication": "true"}, attrs
            url = sqs.get_queue_url(QueueName="from-ready-d")["QueueUrl"]
            got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
            assert [m["Body"] for m in got] == ["seeded by ready.d"], got
            print("  ok   awslocal created the queues and sent the message")
            whole = get_json(endpoint + "/_localstack/init")
            assert whole["completed"] == {
                "BOOT": True, "START": True, "READY": True, "SHUTDOWN": False}, whole
            print("  ok   /_localstack/init in LocalStack's shape")
        except Exception:
            log.seek(0)
            sys.stdout.write(log.read().decode(errors="replace"))
            raise
        finally:
            proc.terminate()
            proc.wait(timeout=10)
            log.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--name", default="init-hooks")
    a = p.parse_args()
    try:
        run(a.binary)
    except Exception:  # noqa: BLE001 - print whatever failed
        traceback.print_exc()
        print("%s: FAIL" % a.name)
        return 1
    print("%s: all steps passed" % a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
