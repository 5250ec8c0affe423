"""SigV4 verification (`localsqs --auth sigv4`) through boto3 and the AWS CLI.

Run by tests/compat/run.sh, which passes the server binary; this scenario starts its own
server with `--auth sigv4 --credentials AKIDCOMPAT:right-secret` on a free port:

    python sigv4_scenario.py --binary target/release/localsqs --name sigv4 --protocol json

Right secret: requests pass (header-signed, and a presigned Query URL made by botocore's
SigV4QueryAuth). Wrong secret: SignatureDoesNotMatch (403). Unknown key:
InvalidClientTokenId (403). The same through the AWS CLI. With botocore's own signers: a
captured signature replayed with another body (and a forged X-Amz-Content-Sha256) is refused,
so is a presigned URL carrying body parameters and a scope of another service; the admin
endpoints refuse unsigned requests and accept a botocore-signed one.
"""

import argparse
import os
import socket
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request

import boto3
import hashlib

from botocore.auth import SigV4Auth, SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials as BotoCredentials
from botocore.exceptions import ClientError

KEY, SECRET = "AKIDCOMPAT", "right-secret"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(binary):
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--host", "127.0.0.1", "--port", str(port), "--auth", "sigv4",
         "--credentials", "%s:%s" % (KEY, SECRET)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = "http://127.0.0.1:%d" % port
    for _ in range(100):
        try:
            with urllib.request.urlopen(endpoint + "/health", timeout=1) as r:
                if r.status == 200:
                    return proc, endpoint
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("the --auth sigv4 server did not start")


def client(endpoint, key, secret):
    return boto3.session.Session(aws_access_key_id=key, aws_secret_access_key=secret,
                                 region_name="us-east-1").client(
        "sqs", endpoint_url=endpoint, config=Config(retries={"total_max_attempts": 1}))


def expect_error(fn, code, status):
    try:
        fn()
    except ClientError as e:
        got = (e.response["Error"]["Code"], e.response["ResponseMetadata"]["HTTPStatusCode"])
        assert got == (code, status), got
        return
    raise AssertionError("expected %s" % code)


def raw(method, url, headers, body):
    """One request with urllib; (status, body text), errors included."""
    req = urllib.request.Request(url, data=body.encode() if body else None, method=method,
                                 headers=dict(headers))
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def signed(endpoint, body, service="sqs", path="/"):
    """Headers of a form POST signed by botocore's SigV4Auth."""
    req = AWSRequest(method="POST", url=endpoint + path, data=body,
                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    SigV4Auth(BotoCredentials(KEY, SECRET), service, "us-east-1").add_auth(req)
    return dict(req.headers.items())


def replays(endpoint, url):
    """The body-swap, presigned-body and scope cases, each refused."""
    lookup = "Action=GetQueueUrl&QueueName=signed"
    headers = signed(endpoint, lookup)
    status, _ = raw("POST", endpoint + "/", headers, lookup)
    assert status == 200, status
    delete = "Action=DeleteQueue&QueueUrl=" + url
    forged = dict(headers, **{"X-Amz-Content-Sha256": hashlib.sha256(lookup.encode()).hexdigest()})
    status, text = raw("POST", endpoint + "/", forged, delete)
    assert status == 403 and "x-amz-content-sha256" in text, (status, text)
    req = AWSRequest(method="POST", url=endpoint + "/?Action=ListQueues&Version=2012-11-05")
    SigV4QueryAuth(BotoCredentials(KEY, SECRET), "sqs", "us-east-1", expires=60).add_auth(req)
    status, text = raw("POST", req.url, {"Content-Type": "application/x-www-form-urlencoded"},
                       delete)
    assert status == 400 and "IncompleteSignature" in text, (status, text)
    body = "Action=ListQueues"
    status, text = raw("POST", endpoint + "/", signed(endpoint, body, service="s3"), body)
    assert status == 403 and "scoped to correct service" in text, (status, text)
    status, _ = raw("POST", endpoint + "/", signed(endpoint, lookup), lookup)
    assert status == 200, "the queue is still there"


def admin(endpoint):
    """Admin endpoints under --auth sigv4: unsigned 401, botocore-signed 200, health open."""
    status, _ = raw("POST", endpoint + "/_localsqs/clock", {}, '{"freeze":true}')
    assert status == 401, status
    body = '{"freeze":false}'
    req = AWSRequest(method="POST", url=endpoint + "/_localsqs/clock", data=body,
                     headers={"Content-Type": "application/json"})
    SigV4Auth(BotoCredentials(KEY, SECRET), "sqs", "us-east-1").add_auth(req)
    status, text = raw("POST", req.url, dict(req.headers.items()), body)
    assert status == 200 and '"frozen":false' in text, (status, text)
    status, _ = raw("GET", endpoint + "/health", {}, "")
    assert status == 200, status


def cli(endpoint, key, secret, *args):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
               AWS_DEFAULT_REGION="us-east-1")
    aws = os.path.join(os.path.dirname(sys.executable), "aws")
    return subprocess.run([aws, "--endpoint-url", endpoint, "sqs", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def run(binary):
    proc, endpoint = start(binary)
    try:
        good = client(endpoint, KEY, SECRET)
        url = good.create_queue(QueueName="signed")["QueueUrl"]
        good.send_message(QueueUrl=url, MessageBody="hello")
        print("  ok   boto3 with the right secret")
        expect_error(lambda: client(endpoint, KEY, "wrong").list_queues(),
                     "SignatureDoesNotMatch", 403)
        expect_error(lambda: client(endpoint, "AKIDOTHER", SECRET).list_queues(),
                     "InvalidClientTokenId", 403)
        print("  ok   boto3 with a wrong secret or an unknown key")
        # botocore's own query-string signer on a Query request (boto3's generate_presigned_url
        # signs JSON-protocol headers a plain GET cannot send).
        req = AWSRequest(method="GET", url=endpoint + "/?Action=ListQueues&Version=2012-11-05")
        SigV4QueryAuth(BotoCredentials(KEY, SECRET), "sqs", "us-east-1", expires=60).add_auth(req)
        presigned = req.url
        with urllib.request.urlopen(presigned, timeout=10) as r:
            assert r.status == 200, r.status
        tampered = presigned.replace("X-Amz-Signature=", "X-Amz-Signature=0")
        try:
            urllib.request.urlopen(tampered, timeout=10)
            raise AssertionError("a tampered presigned URL passed")
        except urllib.error.HTTPError as e:
            assert e.code == 403, e.code
        print("  ok   a presigned URL, and a tampered one")
        replays(endpoint, url)
        print("  ok   botocore: another body, a presigned body, another service: all refused")
        admin(endpoint)
        print("  ok   admin endpoints: unsigned 401, botocore-signed 200, /health open")
        ok = cli(endpoint, KEY, SECRET, "list-queues")
        assert ok.returncode == 0 and "signed" in ok.stdout, (ok.returncode, ok.stderr)
        bad = cli(endpoint, KEY, "wrong", "list-queues")
        assert bad.returncode != 0 and "SignatureDoesNotMatch" in bad.stderr, bad.stderr
        print("  ok   the AWS CLI with the right and a wrong secret")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--name", default="sigv4")
    p.add_argument("--protocol", default="json")
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
