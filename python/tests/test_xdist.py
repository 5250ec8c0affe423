"""The plugin under pytest-xdist: every worker gets a server of its own.

Each inner session runs with ``-n 2``. A shared server would fail these tests every time, not
just sometimes: the workers meet at a barrier (files in a directory both can see) after each has
sent its message, so that at the moment they receive, one shared server would hold both.
"""

import json

import pytest

pytest.importorskip("xdist")

# Run on every worker (--dist each): both create the same queue name and send their worker id,
# wait for each other, then must see only their own message, and a server with one queue; and
# application code's own boto3 client reaches the worker's server.
SAME_NAME_ON_EVERY_WORKER = """
import json, os, pathlib, time

import boto3

BARRIER = pathlib.Path(os.environ["LOCALSQS_TEST_BARRIER"])
WORKERS = int(os.environ["PYTEST_XDIST_WORKER_COUNT"])

def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "the other worker never arrived"
        time.sleep(0.02)

def test_same_queue_name(localsqs, worker_id):
    assert worker_id.startswith("gw")
    sqs = localsqs.client()
    url = sqs.create_queue(QueueName="shared-name")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=worker_id)
    (BARRIER / (worker_id + ".json")).write_text(json.dumps(
        {"endpoint": localsqs.endpoint_url, "pid": localsqs.pid, "url": url}))
    wait_for(lambda: len(list(BARRIER.glob("gw*.json"))) == WORKERS)
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
    assert [m["Body"] for m in got.get("Messages", [])] == [worker_id]
    assert localsqs.health()["queues"] == 1
    # Code that builds its own client reaches this worker's server, not the other's.
    assert boto3.client("sqs").meta.endpoint_url == localsqs.endpoint_url
"""

# Many tests spread over the workers (--dist load), with --localsqs-data-dir: each resets its
# worker's server, creates a queue and must find exactly that one, while the other worker resets
# and creates at the same time.
RESETS_ARE_PER_WORKER = """
import pytest, time

@pytest.mark.parametrize("n", range(12))
def test_resets_do_not_cross_workers(localsqs, worker_id, n):
    assert localsqs.health()["mode"] == "durable"
    assert localsqs.data_dir.endswith(worker_id)
    sqs = localsqs.client()
    sqs.create_queue(QueueName=f"q-{n}")
    time.sleep(0.05)  # give the other worker's reset a chance to land here, if it could
    urls = sqs.list_queues().get("QueueUrls", [])
    assert [u.rsplit("/", 1)[1] for u in urls] == [f"q-{n}"]
"""


def test_each_worker_has_its_own_server(pytester, monkeypatch):
    barrier = pytester.mkdir("barrier")
    monkeypatch.setenv("LOCALSQS_TEST_BARRIER", str(barrier))
    pytester.makepyfile(test_inner=SAME_NAME_ON_EVERY_WORKER)
    result = pytester.runpytest("-n", "2", "--dist", "each", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    seen = [json.loads(p.read_text()) for p in sorted(barrier.glob("gw*.json"))]
    assert len(seen) == 2
    assert seen[0]["endpoint"] != seen[1]["endpoint"]
    assert seen[0]["pid"] != seen[1]["pid"]
    # The same queue name, so the same URL path, on two servers.
    assert seen[0]["url"].split("/", 3)[3] == seen[1]["url"].split("/", 3)[3]


def test_resets_and_data_dirs_stay_within_a_worker(pytester):
    pytester.makepyfile(test_inner=RESETS_ARE_PER_WORKER)
    result = pytester.runpytest(
        "-n", "2", "--dist", "load", "-p", "no:cacheprovider", "--localsqs-data-dir=state"
    )
    result.assert_outcomes(passed=12)
    # A durable directory cannot be shared: each worker's server has a subdirectory of its own.
    assert sorted(p.name for p in pytester.path.joinpath("state").iterdir()) == ["gw0", "gw1"]
