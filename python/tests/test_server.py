"""localsqs.Server: start, options, errors and stop, against the installed binary."""

import os
import signal
import socket
import sys
import textwrap
import threading
import time

import pytest

import localsqs
from localsqs import BinaryNotFoundError, Server, ServerStartError


def _refused(port):
    with socket.socket() as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) != 0


def test_context_manager_starts_on_a_free_port_and_stops(tmp_path):
    with Server() as server:
        assert server.running
        port = server.port
        assert server.endpoint_url == f"http://127.0.0.1:{port}"
        health = server.health()
        assert health["status"] == "ok" and health["mode"] == "memory"
        assert server.client().list_queues().get("QueueUrls", []) == []
    assert not server.running
    assert _refused(port)


def test_data_dir_state_survives_a_restart(tmp_path):
    data = tmp_path / "state"
    with Server(data_dir=data) as first:
        assert first.health()["mode"] == "durable"
        sqs = first.client()
        url = sqs.create_queue(QueueName="durable", Attributes={"VisibilityTimeout": "17"})[
            "QueueUrl"
        ]
        sqs.send_message(QueueUrl=url, MessageBody="kept across restarts")
    assert any(data.iterdir()), "the server wrote nothing to its data dir"

    with Server(data_dir=data) as second:
        sqs = second.client()
        url = sqs.get_queue_url(QueueName="durable")["QueueUrl"]
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
        assert attrs["Attributes"]["VisibilityTimeout"] == "17"
        got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        assert [m["Body"] for m in got["Messages"]] == ["kept across restarts"]


def test_without_data_dir_a_restart_forgets(monkeypatch, tmp_path):
    # Even with LOCALSQS_DATA_DIR exported, Server() without data_dir runs in memory.
    monkeypatch.setenv("LOCALSQS_DATA_DIR", str(tmp_path / "from-env"))
    with Server() as first:
        first.client().create_queue(QueueName="ephemeral")
        assert first.health()["mode"] == "memory"
    with Server() as second:
        assert second.client().list_queues().get("QueueUrls", []) == []


def test_config_file_declares_queues_at_start(tmp_path):
    config = tmp_path / "queues.toml"
    config.write_text(
        textwrap.dedent(
            """\
            [[queue]]
            name = "declared"

            [[queue]]
            name = "slow"
            attributes = { VisibilityTimeout = "45" }
            """
        )
    )
    with Server(config=config) as server:
        sqs = server.client()
        names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"])
        assert names == ["declared", "slow"]
        slow = sqs.get_queue_url(QueueName="slow")["QueueUrl"]
        attrs = sqs.get_queue_attributes(QueueUrl=slow, AttributeNames=["VisibilityTimeout"])
        assert attrs["Attributes"]["VisibilityTimeout"] == "45"

        # reset() brings the server back to its state after start: declared queues only.
        sqs.create_queue(QueueName="made-by-a-test")
        sqs.send_message(QueueUrl=slow, MessageBody="old")
        port = server.port
        server.reset()
        assert server.port == port
        sqs = server.client()
        names = sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"])
        assert names == ["declared", "slow"]
        assert sqs.receive_message(QueueUrl=slow).get("Messages", []) == []

        # The server itself restored them: the process was not restarted.
        assert server.process is not None and server.process.poll() is None


def test_bad_config_fails_with_the_servers_message(tmp_path):
    config = tmp_path / "bad.toml"
    config.write_text('[[queue]]\nnmae = "typo"\n')
    server = Server(config=config)
    with pytest.raises(ServerStartError) as err:
        server.start()
    message = str(err.value)
    assert "exited with code 1" in message
    assert "unknown field `nmae`" in message
    assert not server.running


def test_region_and_account_appear_in_url_and_arn():
    with Server(region="eu-west-2", account_id="123456789012") as server:
        sqs = server.client()
        assert sqs.meta.region_name == "eu-west-2"
        url = sqs.create_queue(QueueName="billing")["QueueUrl"]
        assert url == f"{server.endpoint_url}/123456789012/billing"
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])[
            "Attributes"
        ]["QueueArn"]
        assert arn == "arn:aws:sqs:eu-west-2:123456789012:billing"


def test_explicit_port_and_extra_args():
    port = localsqs.free_port()
    with Server(port=port, extra_args=["--enforce-cooloffs"]) as server:
        assert server.endpoint_url == f"http://127.0.0.1:{port}"
        assert "--enforce-cooloffs" in server.process.args
        sqs = server.client()
        url = sqs.create_queue(QueueName="cool")["QueueUrl"]
        sqs.purge_queue(QueueUrl=url)
        with pytest.raises(sqs.exceptions.PurgeQueueInProgress):
            sqs.purge_queue(QueueUrl=url)


def _reset_status(server, headers=None):
    """POST /_localsqs/reset with only the given headers: the server's own answer."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(
        server.endpoint_url + "/_localsqs/reset", data=b"", method="POST", headers=headers or {}
    )
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(req, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


@pytest.mark.parametrize(
    "how",
    ["admin_token", "extra_args", "extra_args_equals", "environment"],
)
def test_an_admin_token_guards_the_server_and_the_helper_sends_it(how):
    """Under --admin-token the admin endpoints answer 401 without it; reset() and advance()
    send it, wherever the token was given."""
    options = {
        "admin_token": {"admin_token": "s3cret"},
        "extra_args": {"extra_args": ["--admin-token", "s3cret"]},
        "extra_args_equals": {"extra_args": ["--admin-token=s3cret"]},
        "environment": {"env": {**os.environ, "LOCALSQS_ADMIN_TOKEN": "s3cret"}},
    }[how]
    with Server(**options) as server:
        assert _reset_status(server) == 401, "the server is guarded"
        assert _reset_status(server, {"Authorization": "Bearer s3cret"}) == 200
        sqs = server.client()
        sqs.create_queue(QueueName="guarded")
        server.reset()
        assert sqs.list_queues().get("QueueUrls", []) == []
        assert server.advance(60)["offset_ms"] >= 60_000
        assert server.health()["status"] == "ok"


def test_port_in_use_is_a_clear_error():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        server = Server(port=taken.getsockname()[1])
        with pytest.raises(ServerStartError, match="Address already in use"):
            server.start()
    assert not server.running


def test_unknown_flag_error_includes_stderr():
    with pytest.raises(ServerStartError, match="--no-such-flag"):
        Server(extra_args=["--no-such-flag"]).start()


def test_missing_binary_given_as_argument(tmp_path):
    missing = tmp_path / "bin" / "localsqs"
    server = Server(binary=missing)
    with pytest.raises(BinaryNotFoundError) as err:
        server.start()
    assert str(missing) in str(err.value)
    assert isinstance(err.value, FileNotFoundError)
    assert server.process is None


def test_missing_binary_given_by_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("LOCALSQS_BIN", raising=False)
    monkeypatch.setenv("LOCALSQS_BINARY", str(tmp_path / "nope"))
    with pytest.raises(BinaryNotFoundError, match=r"\$LOCALSQS_BINARY"):
        Server().start()


def test_LOCALSQS_BIN_comes_before_LOCALSQS_BINARY(monkeypatch, tmp_path):
    # LOCALSQS_BIN is the name the Node, Go and Java helpers read too.
    monkeypatch.delenv("LOCALSQS_BIN", raising=False)
    monkeypatch.delenv("LOCALSQS_BINARY", raising=False)
    real = localsqs.find_binary()
    monkeypatch.setenv("LOCALSQS_BINARY", str(tmp_path / "not-this-one"))
    monkeypatch.setenv("LOCALSQS_BIN", real)
    assert localsqs.find_binary() == real
    monkeypatch.setenv("LOCALSQS_BIN", str(tmp_path / "nope"))
    with pytest.raises(BinaryNotFoundError, match=r"\$LOCALSQS_BIN "):
        Server().start()


def test_a_port_held_by_another_localsqs_is_an_error_not_a_silent_reuse():
    with Server() as first:
        second = Server(port=first.port)
        with pytest.raises(ServerStartError, match="Address already in use"):
            second.start()
        assert not second.running
        first.client().list_queues()  # the first one is untouched


def test_binary_not_installed_anywhere(monkeypatch, tmp_path):
    monkeypatch.delenv("LOCALSQS_BIN", raising=False)
    monkeypatch.delenv("LOCALSQS_BINARY", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(localsqs._server, "_candidate_dirs", lambda: [tmp_path])
    with pytest.raises(BinaryNotFoundError, match="pip install localsqs"):
        Server().start()


def test_stop_really_ends_the_process():
    server = Server().start()
    process, pid, port = server.process, server.pid, server.port
    assert process.poll() is None
    code = server.stop()
    assert code == 0, server.output()  # SIGTERM is a clean shutdown
    assert process.returncode == 0
    with pytest.raises(ProcessLookupError):  # exited and reaped
        os.kill(pid, 0)
    assert _refused(port)
    assert "shutting down" in server.output()
    assert server.stop() is None  # idempotent
    with pytest.raises(localsqs.LocalSQSError):
        server.reset()


def test_stop_kills_a_server_that_ignores_sigterm(tmp_path):
    # A stand-in binary that answers /health but ignores SIGTERM.
    fake = tmp_path / "stubborn-localsqs"
    fake.write_text(
        f"#!{sys.executable}\n"
        + textwrap.dedent(
            """\
            import http.server, signal, sys
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            port = int(sys.argv[sys.argv.index("--port") + 1])

            class Health(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = b'{"status": "ok", "ready": true}'
                    self.send_response(200)
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)

                def log_message(self, *args):
                    pass

            http.server.HTTPServer(("127.0.0.1", port), Health).serve_forever()
            """
        )
    )
    fake.chmod(0o755)
    server = Server(binary=fake, stop_timeout=0.5).start()
    process = server.process
    # Should stop() fail to kill it, this ends the stand-in anyway, so the test fails on the
    # time it took rather than hanging.
    watchdog = threading.Timer(10.0, lambda: os.kill(process.pid, signal.SIGKILL))
    watchdog.start()
    try:
        started = time.monotonic()
        code = server.stop()
        elapsed = time.monotonic() - started
    finally:
        watchdog.cancel()
    assert 0.5 <= elapsed < 5.0
    assert code == -signal.SIGKILL
    assert process.poll() == -signal.SIGKILL


def test_client_without_boto3_is_a_clear_import_error(monkeypatch):
    with Server() as server:
        monkeypatch.setitem(sys.modules, "boto3", None)  # makes `import boto3` fail
        with pytest.raises(ImportError, match="pip install boto3"):
            server.client()


def test_client_keyword_arguments_override_defaults():
    with Server(region="ap-southeast-2") as server:
        sqs = server.client(region_name="us-west-2")
        assert sqs.meta.region_name == "us-west-2"
        assert sqs.meta.endpoint_url == server.endpoint_url
