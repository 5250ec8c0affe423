"""Regions and accounts through boto3: two regions and two accounts on one server.

Run by tests/compat/run.sh:

    python scopes_scenario.py --endpoint http://127.0.0.1:PORT --name boto3-scopes --protocol json

boto3 signs every request for its region (the SigV4 credential scope), and its access key id,
when it is 12 digits, is the account (LocalStack's convention). The same queue name in two
regions, or two accounts, is two queues; ListQueues shows the caller's; ARNs carry region and
account; a queue URL reaches its account's queue from another account.
"""

import argparse
import os
import sys
import traceback

import boto3
from botocore.config import Config


def client(endpoint, region, key, protocol):
    cfg = Config(retries={"total_max_attempts": 1})
    session = boto3.session.Session(aws_access_key_id=key, aws_secret_access_key="secret",
                                    region_name=region)
    sqs = session.client("sqs", endpoint_url=endpoint, config=cfg)
    if protocol == "query":
        # A Query-era botocore already speaks Query; nothing to switch.
        pass
    return sqs


def arn(sqs, url):
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]


def names(sqs, prefix):
    urls = sqs.list_queues(QueueNamePrefix=prefix).get("QueueUrls", [])
    return sorted(u.rsplit("/", 1)[1] for u in urls)


def run(endpoint, name, protocol):
    prefix = "compat-%s-%d" % (name, os.getpid())
    q = prefix + "-orders"
    us_a = client(endpoint, "us-east-1", "111111111111", protocol)
    eu_a = client(endpoint, "eu-west-1", "111111111111", protocol)
    us_b = client(endpoint, "us-east-1", "222222222222", protocol)

    us_url = us_a.create_queue(QueueName=q)["QueueUrl"]
    eu_url = eu_a.create_queue(QueueName=q)["QueueUrl"]
    b_url = us_b.create_queue(QueueName=q)["QueueUrl"]
    assert us_url.endswith("/111111111111/" + q), us_url
    assert b_url.endswith("/222222222222/" + q), b_url
    assert arn(us_a, us_url) == "arn:aws:sqs:us-east-1:111111111111:" + q
    assert arn(eu_a, eu_url) == "arn:aws:sqs:eu-west-1:111111111111:" + q
    assert arn(us_b, b_url) == "arn:aws:sqs:us-east-1:222222222222:" + q
    print("  ok   three queues of one name: two regions, two accounts")

    us_a.send_message(QueueUrl=us_url, MessageBody="us")
    eu_a.send_message(QueueUrl=eu_url, MessageBody="eu")
    got = eu_a.receive_message(QueueUrl=eu_url, MaxNumberOfMessages=10).get("Messages", [])
    assert [m["Body"] for m in got] == ["eu"], got
    got = us_a.receive_message(QueueUrl=us_url, MaxNumberOfMessages=10).get("Messages", [])
    assert [m["Body"] for m in got] == ["us"], got
    print("  ok   messages stay in their region's queue")

    only_eu = prefix + "-only-eu"
    eu_a.create_queue(QueueName=only_eu)
    assert names(us_a, prefix) == [q], names(us_a, prefix)
    assert names(eu_a, prefix) == sorted([q, only_eu]), names(eu_a, prefix)
    assert names(us_b, prefix) == [q], names(us_b, prefix)
    print("  ok   ListQueues shows the caller's account and region")

    us_b.send_message(QueueUrl=us_url, MessageBody="from b")
    got = us_a.receive_message(QueueUrl=us_url).get("Messages", [])
    assert [m["Body"] for m in got] == ["from b"], got
    found = us_b.get_queue_url(QueueName=q, QueueOwnerAWSAccountId="111111111111")["QueueUrl"]
    assert found == us_url, found
    print("  ok   a queue URL and QueueOwnerAWSAccountId reach another account's queue")

    for sqs, url in ((us_a, us_url), (eu_a, eu_url), (us_b, b_url)):
        sqs.delete_queue(QueueUrl=url)
    eu_a.delete_queue(QueueUrl=eu_a.get_queue_url(QueueName=only_eu)["QueueUrl"])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--endpoint", required=True)
    p.add_argument("--name", default="boto3-scopes")
    p.add_argument("--protocol", default="json", choices=["json", "query"])
    a = p.parse_args()
    try:
        run(a.endpoint, a.name, a.protocol)
    except Exception:  # noqa: BLE001 - print whatever failed
        traceback.print_exc()
        print("%s: FAIL" % a.name)
        return 1
    print("%s: all steps passed" % a.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
