"""The full compatibility scenario through aiobotocore (asyncio, aiohttp transport).

Run by tests/compat/run.sh from the tests/compat/.venv/aio virtualenv:

    python aiobotocore_scenario.py --endpoint http://127.0.0.1:PORT --name aiobotocore

The steps are boto3_scenario.py's, run against an aiobotocore client: every call is a coroutine
awaited on one event loop in a background thread (so the long-poll step's receive and send run
concurrently on that loop, as in an asyncio service). One more step is asyncio-native: 20 sends
and 3 long polls issued at once with asyncio.gather over the client's connection pool.
"""

import argparse
import asyncio
import os
import sys
import threading
import time

import aiobotocore
import aiobotocore.session
import botocore

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from boto3_scenario import Scenario  # noqa: E402
from common import md5_hex  # noqa: E402


class LoopThread:
    """An asyncio event loop in a daemon thread; `run` waits for a coroutine's result."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout=60):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self):
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class SyncView:
    """Presents an aiobotocore client with boto3's synchronous call style: client.op(**kw)
    runs the coroutine on the loop thread and returns its result (or raises its error)."""

    def __init__(self, client, loop):
        self._client = client
        self._loop = loop

    @property
    def meta(self):
        return self._client.meta

    @property
    def exceptions(self):
        return self._client.exceptions

    def __getattr__(self, name):
        attr = getattr(self._client, name)
        if not callable(attr):
            return attr

        def call(*args, **kwargs):
            result = attr(*args, **kwargs)
            if asyncio.iscoroutine(result):
                return self._loop.run(result)
            return result

        return call


class AioScenario(Scenario):
    def __init__(self, endpoint, name):
        self.loop = LoopThread()
        session = aiobotocore.session.get_session()
        self.client_cm = session.create_client(
            "sqs", endpoint_url=endpoint, region_name="us-east-1",
            aws_access_key_id="test", aws_secret_access_key="test", config=Scenario.CONFIG)
        self.aio = self.loop.run(self.client_cm.__aenter__())
        super().__init__(endpoint, name, "json", client=SyncView(self.aio, self.loop))

    def describe_client(self):
        return "aiobotocore %s, botocore %s" % (aiobotocore.__version__, botocore.__version__)

    def concurrent(self):
        """20 sends and 3 long polls at once on the event loop; every message arrives once."""
        url = self.queue("gather")

        async def main():
            t0 = time.monotonic()
            polls = [asyncio.ensure_future(self.aio.receive_message(
                QueueUrl=url, WaitTimeSeconds=5, MaxNumberOfMessages=10)) for _ in range(3)]
            await asyncio.sleep(0.2)  # let the polls park first
            sent = await asyncio.gather(*[
                self.aio.send_message(QueueUrl=url, MessageBody="gather-%02d" % i)
                for i in range(20)])
            for i, r in enumerate(sent):
                assert r["MD5OfMessageBody"] == md5_hex(("gather-%02d" % i).encode()), r
            got = []
            for r in await asyncio.gather(*polls):
                got += r.get("Messages", [])
            woke = time.monotonic() - t0
            while len(got) < 20:
                r = await self.aio.receive_message(QueueUrl=url, MaxNumberOfMessages=10,
                                                   WaitTimeSeconds=1)
                if not r.get("Messages"):
                    break
                got += r["Messages"]
            await asyncio.gather(*[
                self.aio.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
                for m in got])
            return got, woke

        got, woke = self.loop.run(main())
        bodies = sorted(m["Body"] for m in got)
        assert bodies == ["gather-%02d" % i for i in range(20)], bodies
        assert woke < 4, "parked long polls returned after %.2fs" % woke
        print("       3 parked long polls returned after %.2fs; 20 concurrent sends all "
              "received once" % woke)
        self.sqs.delete_queue(QueueUrl=url)

    def steps(self):
        steps = super().steps()
        at = [t for t, _ in steps].index("tags")
        return steps[:at] + [("asyncio.gather sends + polls", self.concurrent)] + steps[at:]

    def close(self):
        self.loop.run(self.client_cm.__aexit__(None, None, None))
        self.loop.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--name", required=True)
    args = ap.parse_args()
    scenario = AioScenario(args.endpoint, args.name)
    try:
        ok = scenario.run()
    finally:
        scenario.close()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
