"""The `localsqs` and `sqs_client` fixtures, used exactly as a user's test suite would."""

import hashlib

import pytest


def test_create_send_receive_delete(localsqs):
    sqs = localsqs.client()
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    assert url.endswith("/000000000000/orders")

    sent = sqs.send_message(QueueUrl=url, MessageBody="order #1")
    assert sent["MD5OfMessageBody"] == hashlib.md5(b"order #1").hexdigest()

    # Received with a zero visibility timeout, the message would come back at once if the
    # delete below did nothing.
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, VisibilityTimeout=0)
    assert [m["Body"] for m in got["Messages"]] == ["order #1"]
    assert got["Messages"][0]["MessageId"] == sent["MessageId"]

    sqs.delete_message(QueueUrl=url, ReceiptHandle=got["Messages"][0]["ReceiptHandle"])
    again = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    assert again.get("Messages", []) == []
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["ApproximateNumberOfMessages"] == "0"
    assert attrs["ApproximateNumberOfMessagesNotVisible"] == "0"


_PIDS = []


# The next two run in this order: the queue the first one makes must be gone in the second.
def test_reset_between_tests_part1_creates_a_queue(localsqs):
    _PIDS.append(localsqs.pid)
    sqs = localsqs.client()
    url = sqs.create_queue(QueueName="leftover")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    assert sqs.list_queues()["QueueUrls"] == [url]
    assert localsqs.health()["queues"] == 1


def test_reset_between_tests_part2_sees_no_queue(localsqs):
    # The same session server, reset (not restarted) in between.
    assert _PIDS == [localsqs.pid]
    sqs = localsqs.client()
    assert sqs.list_queues().get("QueueUrls", []) == []
    assert localsqs.health()["queues"] == 0
    with pytest.raises(sqs.exceptions.QueueDoesNotExist):
        sqs.get_queue_url(QueueName="leftover")


def test_sqs_client_fixture_talks_to_the_session_server(sqs_client, localsqs):
    assert sqs_client.meta.endpoint_url == localsqs.endpoint_url
    assert sqs_client.meta.region_name == "us-east-1"
    url = sqs_client.create_queue(QueueName="via-fixture.fifo",
                                  Attributes={"FifoQueue": "true"})["QueueUrl"]
    assert localsqs.client().get_queue_url(QueueName="via-fixture.fifo")["QueueUrl"] == url


def test_reset_method_drops_queues_within_a_test(localsqs):
    sqs = localsqs.client()
    sqs.create_queue(QueueName="a")
    sqs.create_queue(QueueName="b")
    assert len(sqs.list_queues()["QueueUrls"]) == 2
    localsqs.reset()
    assert sqs.list_queues().get("QueueUrls", []) == []
