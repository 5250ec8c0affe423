"""The plugin points the code under test at localsqs, as moto's ``mock_aws`` does: application
code that builds its own ``boto3.client("sqs")`` reaches the session's server, with dummy
credentials and the server's region, and the environment is put back afterwards.

Each inner session runs in a subprocess, so that the environment it changes is its own.
"""

# An application module: it knows nothing of localsqs and builds its client the usual way.
APP = """
import boto3

def enqueue(queue_name, body):
    sqs = boto3.client("sqs")
    url = sqs.create_queue(QueueName=queue_name)["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody=body)
    return sqs
"""

# The variables the inner tests look at, with values "from the user's shell".
SHELL = {
    "AWS_ACCESS_KEY_ID": "AKIAREALLOOKINGKEY00",
    "AWS_SECRET_ACCESS_KEY": "real-looking-secret",
    "AWS_SESSION_TOKEN": "real-looking-token",
    "AWS_DEFAULT_REGION": "ap-northeast-1",
}

APP_TESTS = """
import os

import boto3

import app

SHELL = {shell!r}

def test_before_any_server():
    for k, v in SHELL.items():
        assert os.environ[k] == v
    assert "AWS_ENDPOINT_URL_SQS" not in os.environ

def test_application_code_reaches_localsqs(localsqs):
    sqs = app.enqueue("orders", "hello")
    assert sqs.meta.endpoint_url == localsqs.endpoint_url
    assert sqs.meta.region_name == localsqs.region
    assert os.environ["AWS_ENDPOINT_URL_SQS"] == localsqs.endpoint_url
    assert os.environ["AWS_ACCESS_KEY_ID"] == "test"
    assert os.environ["AWS_SECRET_ACCESS_KEY"] == "test"
    assert "AWS_SESSION_TOKEN" not in os.environ
    assert os.environ["AWS_DEFAULT_REGION"] == os.environ["AWS_REGION"] == localsqs.region
    assert "AWS_ENDPOINT_URL" not in os.environ
    url = localsqs.client().get_queue_url(QueueName="orders")["QueueUrl"]
    got = localsqs.client().receive_message(QueueUrl=url)["Messages"]
    assert [m["Body"] for m in got] == ["hello"]

def test_a_test_without_the_fixture_sees_the_shell_again():
    for k, v in SHELL.items():
        assert os.environ[k] == v
    assert "AWS_ENDPOINT_URL_SQS" not in os.environ
    assert "AWS_REGION" not in os.environ
    assert boto3.client("sqs").meta.endpoint_url.startswith("https://sqs.ap-northeast-1.")

def test_and_with_it_again(localsqs):
    assert boto3.client("sqs").meta.endpoint_url == localsqs.endpoint_url
"""


def _shell(monkeypatch):
    for k, v in SHELL.items():
        monkeypatch.setenv(k, v)
    for k in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(k, raising=False)


def test_application_code_reaches_localsqs_and_the_environment_comes_back(
    pytester, monkeypatch
):
    _shell(monkeypatch)
    pytester.makepyfile(app=APP, test_app=APP_TESTS.format(shell=SHELL))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=4)


def test_session_fixtures_built_on_localsqs_are_redirected(pytester, monkeypatch):
    _shell(monkeypatch)
    pytester.makepyfile(
        app=APP,
        test_session="""
        import boto3
        import pytest

        @pytest.fixture(scope="session")
        def app_client(localsqs):
            # Built once, before any test body runs: it must reach localsqs too.
            return boto3.client("sqs")

        def test_uses_it(app_client, localsqs):
            assert app_client.meta.endpoint_url == localsqs.endpoint_url
            app_client.create_queue(QueueName="made-by-app")
            assert localsqs.client().get_queue_url(QueueName="made-by-app")
        """,
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_set_endpoint_url_redirects_every_service(pytester, monkeypatch):
    _shell(monkeypatch)
    pytester.makepyfile(
        test_all="""
        import os

        def test_it(localsqs):
            assert os.environ["AWS_ENDPOINT_URL"] == localsqs.endpoint_url
            assert os.environ["AWS_ENDPOINT_URL_SQS"] == localsqs.endpoint_url
        """
    )
    pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--localsqs-set-endpoint-url"
    ).assert_outcomes(passed=1)
    pytester.makeini("[pytest]\nlocalsqs_set_endpoint_url = true\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)


def test_no_env_leaves_the_environment_alone(pytester, monkeypatch):
    _shell(monkeypatch)
    pytester.makepyfile(
        test_alone=f"""
        import os

        def test_it(localsqs):
            assert "AWS_ENDPOINT_URL_SQS" not in os.environ
            assert os.environ["AWS_ACCESS_KEY_ID"] == {SHELL["AWS_ACCESS_KEY_ID"]!r}
            assert localsqs.client().list_queues().get("QueueUrls", []) == []
        """
    )
    pytester.runpytest_subprocess("-p", "no:cacheprovider", "--localsqs-no-env").assert_outcomes(
        passed=1
    )
    pytester.makeini("[pytest]\nlocalsqs_no_env = true\n")
    pytester.runpytest_subprocess("-p", "no:cacheprovider").assert_outcomes(passed=1)
