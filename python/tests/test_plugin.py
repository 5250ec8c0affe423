"""The pytest plugin's options, ini keys and reset behaviour, run as inner pytest sessions."""

import textwrap

# Two tests in order: the second passes only if the first one's queue is still there.
KEEPS_STATE = """
import pytest

def test_1_creates(localsqs):
    localsqs.client().create_queue(QueueName="from-test-1")

{marker}
def test_2_expects_it(localsqs):
    urls = localsqs.client().list_queues().get("QueueUrls", [])
    assert [u.rsplit("/", 1)[1] for u in urls] == ["from-test-1"]
"""

URL_AND_ARN = """
def test_url_and_arn(sqs_client):
    url = sqs_client.create_queue(QueueName="q")["QueueUrl"]
    assert url.endswith("/111122223333/q")
    attrs = sqs_client.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    assert attrs["Attributes"]["QueueArn"] == "arn:aws:sqs:ap-south-1:111122223333:q"
    assert sqs_client.meta.region_name == "ap-south-1"
"""


def test_region_and_account_options(pytester):
    pytester.makepyfile(test_inner=URL_AND_ARN)
    result = pytester.runpytest(
        "--localsqs-region=ap-south-1", "--localsqs-account-id=111122223333"
    )
    result.assert_outcomes(passed=1)
    # And the same test fails on the defaults, so the options really are what made it pass.
    pytester.runpytest().assert_outcomes(failed=1)


def test_region_and_account_ini_keys(pytester):
    pytester.makeini(
        """
        [pytest]
        localsqs_region = ap-south-1
        localsqs_account_id = 111122223333
        """
    )
    pytester.makepyfile(test_inner=URL_AND_ARN)
    pytester.runpytest().assert_outcomes(passed=1)


def test_each_test_gets_a_clean_server_by_default(pytester):
    pytester.makepyfile(test_inner=KEEPS_STATE.format(marker=""))
    result = pytester.runpytest("-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*test_2_expects_it FAILED*"])


def test_no_reset_command_line_flag(pytester):
    pytester.makepyfile(test_inner=KEEPS_STATE.format(marker=""))
    pytester.runpytest("--localsqs-no-reset").assert_outcomes(passed=2)


def test_no_reset_ini_key(pytester):
    pytester.makeini("[pytest]\nlocalsqs_no_reset = true\n")
    pytester.makepyfile(test_inner=KEEPS_STATE.format(marker=""))
    pytester.runpytest().assert_outcomes(passed=2)


def test_no_reset_marker(pytester):
    pytester.makepyfile(test_inner=KEEPS_STATE.format(marker="@pytest.mark.localsqs_no_reset"))
    pytester.runpytest("--strict-markers").assert_outcomes(passed=2)


def test_config_ini_key_relative_to_the_ini_file_and_redeclared_after_reset(
    pytester, monkeypatch
):
    pytester.makeini("[pytest]\nlocalsqs_config = conf/queues.toml\n")
    conf = pytester.mkdir("conf")
    (conf / "queues.toml").write_text('[[queue]]\nname = "declared"\n')
    pytester.makepyfile(
        test_inner="""
        def names(localsqs):
            urls = localsqs.client().list_queues().get("QueueUrls", [])
            return sorted(u.rsplit("/", 1)[1] for u in urls)

        def test_a(localsqs):
            assert names(localsqs) == ["declared"]
            localsqs.client().create_queue(QueueName="extra")
            assert names(localsqs) == ["declared", "extra"]

        def test_b(localsqs):
            assert names(localsqs) == ["declared"]
        """
    )
    # Run from another directory: the ini's relative path must not depend on the cwd.
    monkeypatch.chdir(pytester.mkdir("elsewhere"))
    pytester.runpytest(str(pytester.path)).assert_outcomes(passed=2)


def test_config_option_on_the_command_line(pytester):
    pytester.path.joinpath("q.toml").write_text('[[queue]]\nname = "declared"\n')
    pytester.makepyfile(
        test_inner="""
        def test_declared(sqs_client):
            assert sqs_client.get_queue_url(QueueName="declared")["QueueUrl"]
        """
    )
    pytester.runpytest("--localsqs-config=q.toml").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(failed=1)


def test_data_dir_option_keeps_state_across_sessions(pytester):
    pytester.makepyfile(
        test_first="""
        def test_create(localsqs):
            assert localsqs.health()["mode"] == "durable"
            url = localsqs.client().create_queue(QueueName="durable")["QueueUrl"]
            localsqs.client().send_message(QueueUrl=url, MessageBody="from session 1")
        """,
        test_second="""
        def test_still_there(localsqs):
            sqs = localsqs.client()
            url = sqs.get_queue_url(QueueName="durable")["QueueUrl"]
            got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
            assert [m["Body"] for m in got["Messages"]] == ["from session 1"]
        """,
    )
    args = ["--localsqs-data-dir=state", "--localsqs-no-reset"]
    pytester.runpytest(*args, "test_first.py").assert_outcomes(passed=1)
    assert any(pytester.path.joinpath("state").iterdir())
    pytester.runpytest(*args, "test_second.py").assert_outcomes(passed=1)
    # With the default reset, the next session's test starts from an empty server.
    pytester.runpytest("--localsqs-data-dir=state", "test_second.py").assert_outcomes(failed=1)


def test_missing_binary_errors_the_tests_that_use_the_fixture(pytester):
    pytester.makepyfile(
        test_inner="""
        def test_uses_server(localsqs):
            pass

        def test_does_not(tmp_path):
            pass
        """
    )
    result = pytester.runpytest("--localsqs-binary=./no/such/localsqs")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["localsqs: binary not found", "*not an executable file*"])


def test_help_lists_the_options(pytester):
    result = pytester.runpytest("--help")
    for flag in (
        "--localsqs-data-dir",
        "--localsqs-config",
        "--localsqs-region",
        "--localsqs-account-id",
        "--localsqs-no-reset",
        "--localsqs-binary",
    ):
        result.stdout.fnmatch_lines([f"*{flag}*"])
    result.stdout.fnmatch_lines(["*localsqs_no_reset*"])


def test_plugin_can_be_disabled(pytester):
    pytester.makepyfile(
        test_inner=textwrap.dedent(
            """
            def test_needs_it(localsqs):
                pass
            """
        )
    )
    result = pytester.runpytest("-p", "no:localsqs")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'localsqs' not found*"])
