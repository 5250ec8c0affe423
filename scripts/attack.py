#!/usr/bin/env python3
"""Hostile clients against a localsqs binary, for the numbers in docs/security.md.

Three attacks, each against a fresh server started by this script (nothing is asserted; the
figures are printed):

  python3 scripts/attack.py bodies --binary target/release/localsqs
      400 connections each announce a 6.5 MB body, send 6.4 MB of it and stall. Prints the
      server's resident memory before, the peak during 30 s, and how the connections ended.

  python3 scripts/attack.py slots --binary target/release/localsqs
      4,500 connections trickle bodies at a byte a second (reconnecting when closed) and 5,000
      long polls stay parked (re-polling when answered) while one normal client sends a
      ListQueues every 200 ms for 40 s. Prints the normal client's answer times.

  python3 scripts/attack.py health --binary target/release/localsqs
      With 50,000 queues, four clients poll the unauthenticated /health as fast as they can for
      10 s while one normal client sends a message every 10 ms. Prints both sides' answer times.

Needs a file-descriptor limit above the connection counts (`ulimit -n 20000`).
"""

import argparse
import asyncio
import concurrent.futures
import http.client
import json
import os
import socket
import statistics
import subprocess
import time
import urllib.request


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start(binary, *args):
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            with urllib.request.urlopen("http://127.0.0.1:%d/health" % port, timeout=1):
                return proc, port
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


async def stalled_body(port, announce, send, outcomes):
    try:
        r, w = await asyncio.open_connection("127.0.0.1", port)
        head = ("POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                "application/x-www-form-urlencoded\r\nContent-Length: %d\r\n\r\n" % (port, announce))
        w.write(head.encode())
        chunk = b"x" * 65536
        sent = 0
        while sent < send:
            w.write(chunk)
            sent += len(chunk)
            await w.drain()
        line = await asyncio.wait_for(r.readline(), timeout=60)
        outcomes.append(line.decode(errors="replace").split(" ")[1] if line else "closed")
        w.close()
    except (ConnectionError, asyncio.TimeoutError, OSError) as e:
        outcomes.append(type(e).__name__)


async def bodies(binary):
    proc, port = start(binary)
    try:
        before = rss_mib(proc.pid)
        outcomes = []
        tasks = [asyncio.create_task(stalled_body(port, 6_500_000, 6_400_000, outcomes))
                 for _ in range(400)]
        peak = before
        for _ in range(300):
            await asyncio.sleep(0.1)
            peak = max(peak, rss_mib(proc.pid))
        await asyncio.gather(*tasks, return_exceptions=True)
        counts = {k: outcomes.count(k) for k in sorted(set(outcomes))}
        print("bodies: RSS before %.1f MiB, peak over 30 s %.1f MiB; answers %s"
              % (before, peak, counts))
    finally:
        proc.terminate()
        proc.wait(timeout=30)


async def trickler(port, stop):
    while not stop.is_set():
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            w.write(("POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Length: 100000\r\n\r\n"
                     % port).encode())
            while not stop.is_set():
                w.write(b"x")
                await w.drain()
                try:
                    if await asyncio.wait_for(r.read(1), timeout=1.0) == b"":
                        break
                    break  # answered (408): reconnect
                except asyncio.TimeoutError:
                    continue
            w.close()
        except (ConnectionError, OSError):
            await asyncio.sleep(0.1)


async def poller(port, url, stop):
    body = '{"QueueUrl":"%s","WaitTimeSeconds":20}' % url
    req = ("POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/x-amz-json-1.0\r\n"
           "X-Amz-Target: AmazonSQS.ReceiveMessage\r\nContent-Length: %d\r\n\r\n%s"
           % (port, len(body), body)).encode()
    while not stop.is_set():
        try:
            r, w = await asyncio.open_connection("127.0.0.1", port)
            while not stop.is_set():
                w.write(req)
                await w.drain()
                head = await r.readuntil(b"\r\n\r\n")
                length = 0
                close = False
                for line in head.decode(errors="replace").split("\r\n"):
                    k, _, v = line.partition(":")
                    if k.lower() == "content-length":
                        length = int(v)
                    if k.lower() == "connection" and "close" in v.lower():
                        close = True
                await r.readexactly(length)
                if close:
                    break
            w.close()
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            await asyncio.sleep(0.1)


def normal_request(port):
    body = b"{}"
    req = urllib.request.Request(
        "http://127.0.0.1:%d/" % port, data=body, method="POST",
        headers={"Content-Type": "application/x-amz-json-1.0",
                 "X-Amz-Target": "AmazonSQS.ListQueues"})
    started = time.monotonic()
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            r.read()
            ok = r.status == 200
    except Exception:  # noqa: BLE001 - a failure is a data point
        ok = False
    return time.monotonic() - started, ok


async def swarm(kind, port, n, url):
    stop = asyncio.Event()
    if kind == "trickle":
        tasks = [asyncio.create_task(trickler(port, stop)) for _ in range(n)]
    else:
        tasks = [asyncio.create_task(poller(port, url, stop)) for _ in range(n)]
    await asyncio.gather(*tasks, return_exceptions=True)


def slots(binary):
    """The attackers run in processes of their own, so the normal client is never starved by
    the attack's own event loop."""
    proc, port = start(binary)
    attackers = []
    try:
        create = urllib.request.Request(
            "http://127.0.0.1:%d/" % port, data=b'{"QueueName":"parked"}', method="POST",
            headers={"Content-Type": "application/x-amz-json-1.0",
                     "X-Amz-Target": "AmazonSQS.CreateQueue"})
        with urllib.request.urlopen(create) as r:
            url = r.read().decode().split('"QueueUrl":"')[1].split('"')[0]
        me = os.path.abspath(__file__)
        for kind, n in (("trickle", 4500), ("poll", 5000)):
            attackers.append(subprocess.Popen(
                ["python3", me, "_swarm", "--kind", kind, "--port", str(port), "--n", str(n),
                 "--url", url]))
        time.sleep(10)
        times, failures = [], 0
        end = time.monotonic() + 40
        while time.monotonic() < end:
            t, ok = normal_request(port)
            times.append(t)
            failures += 0 if ok else 1
            time.sleep(0.2)
        times.sort()
        p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
        print("slots: %d answers to the normal client in 40 s, %d failed; median %.3f s, "
              "p99 %.3f s, worst %.3f s; %d within 1 s; server RSS %.1f MiB"
              % (len(times), failures, statistics.median(times), p99, times[-1],
                 sum(1 for t in times if t <= 1.0), rss_mib(proc.pid)))
    finally:
        for a in attackers:
            a.kill()
        proc.terminate()
        proc.wait(timeout=60)


def json_call(conn, target, body):
    conn.request("POST", "/", json.dumps(body),
                 {"X-Amz-Target": "AmazonSQS." + target,
                  "Content-Type": "application/x-amz-json-1.0"})
    r = conn.getresponse()
    data = r.read()
    if r.status != 200:
        raise SystemExit("%s answered %d: %s" % (target, r.status, data[:200]))
    return json.loads(data)


def percentiles(times):
    times = sorted(times)
    return (statistics.median(times) * 1000, times[int(len(times) * 0.99)] * 1000,
            times[-1] * 1000)


def health(binary, queues=50_000):
    proc, port = start(binary)
    try:
        def create(part):
            conn = http.client.HTTPConnection("127.0.0.1", port)
            for i in part:
                json_call(conn, "CreateQueue", {"QueueName": "q%d" % i})
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            list(ex.map(create, [range(k, queues, 8) for k in range(8)]))
        # The pollers run in processes of their own, so that the normal client's times are
        # the server's and not this interpreter's lock.
        me = os.path.abspath(__file__)
        pollers = [subprocess.Popen(["python3", me, "_poll_health", "--port", str(port)],
                                    stdout=subprocess.PIPE, text=True) for _ in range(4)]
        time.sleep(0.5)
        conn = http.client.HTTPConnection("127.0.0.1", port)
        url = json_call(conn, "GetQueueUrl", {"QueueName": "q0"})["QueueUrl"]
        sends, end = [], time.monotonic() + 10
        while time.monotonic() < end:
            t = time.perf_counter()
            json_call(conn, "SendMessage", {"QueueUrl": url, "MessageBody": "x"})
            sends.append(time.perf_counter() - t)
            time.sleep(0.01)
        polls = []
        for p in pollers:
            p.terminate()
            polls += json.loads(p.communicate()[0] or "[]")
        print("health: %d queues; %d /health answers in 10 s, median %.3f ms, p99 %.3f ms, "
              "worst %.3f ms; the normal client's %d SendMessage: median %.3f ms, p99 %.3f ms, "
              "worst %.3f ms" % ((queues, len(polls)) + percentiles(polls) + (len(sends),)
                                 + percentiles(sends)))
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def poll_health(port):
    """Polls /health until terminated, then prints its answer times (a JSON list of seconds)."""
    import signal
    times, stop = [], []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    conn = http.client.HTTPConnection("127.0.0.1", port)
    while not stop:
        t = time.perf_counter()
        conn.request("GET", "/health")
        conn.getresponse().read()
        times.append(time.perf_counter() - t)
    print(json.dumps(times))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("attack", choices=["bodies", "slots", "health", "_swarm", "_poll_health"])
    p.add_argument("--binary", default=os.path.join("target", "release", "localsqs"))
    p.add_argument("--kind")
    p.add_argument("--port", type=int)
    p.add_argument("--n", type=int)
    p.add_argument("--url")
    a = p.parse_args()
    if a.attack == "bodies":
        asyncio.run(bodies(a.binary))
    elif a.attack == "slots":
        slots(a.binary)
    elif a.attack == "health":
        health(a.binary)
    elif a.attack == "_poll_health":
        poll_health(a.port)
    else:
        asyncio.run(swarm(a.kind, a.port, a.n, a.url))


if __name__ == "__main__":
    main()
