"""pytest plugin (entry point ``pytest11``: ``localsqs``): a local SQS server for tests.

Fixtures:

``localsqs``
    A running :class:`localsqs.Server`, started once per test session (once per worker under
    pytest-xdist) and reset before every test that uses it, so each test starts with no queues.
``sqs_client``
    ``localsqs.client()``: a boto3 SQS client for that server (needs boto3).

Options (command line, then the ini key of the same name, e.g. ``localsqs_region``):
``--localsqs-binary``, ``--localsqs-data-dir``, ``--localsqs-config``, ``--localsqs-region``,
``--localsqs-account-id``, ``--localsqs-no-reset``. The marker
``@pytest.mark.localsqs_no_reset`` keeps the state of the previous tests for one test.
Disable the plugin with ``-p no:localsqs``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Dict, Iterator, Optional

import pytest

from ._server import BinaryNotFoundError, Server, find_binary

# (option suffix, help); each is --localsqs-<suffix> on the command line and localsqs_<suffix>
# with dashes as underscores in the ini file.
_VALUE_OPTIONS = (
    ("binary", "path of the localsqs executable (default: the one pip installed, then PATH)"),
    ("data-dir", "keep the server's state durably in this directory (default: in memory)"),
    ("config", "TOML file declaring queues to create when the server starts"),
    ("region", "region in queue ARNs and the clients' region_name (default us-east-1)"),
    ("account-id", "account id in queue URLs and ARNs (default 000000000000)"),
)
_PATH_OPTIONS = ("binary", "data-dir", "config")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localsqs", "localsqs: local SQS server fixtures")
    for suffix, help_text in _VALUE_OPTIONS:
        key = "localsqs_" + suffix.replace("-", "_")
        group.addoption(f"--localsqs-{suffix}", dest=key, default=None, metavar="VALUE",
                        help=help_text)
        parser.addini(key, help_text, default=None)
    group.addoption(
        "--localsqs-no-reset",
        dest="localsqs_no_reset",
        action="store_true",
        default=None,
        help="do not reset the localsqs server (drop all queues) before each test",
    )
    parser.addini(
        "localsqs_no_reset",
        "do not reset the localsqs server before each test",
        type="bool",
        default=False,
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "localsqs_no_reset: keep the localsqs server's state from earlier tests for this test",
    )


def pytest_report_header(config: pytest.Config) -> str:
    try:
        binary = find_binary(_option(config, "binary"))
    except BinaryNotFoundError:
        binary = "binary not found"
    return f"localsqs: {binary}"


def _option(config: pytest.Config, suffix: str) -> Optional[str]:
    """The command-line value, else the ini value; paths resolved against where each was given."""
    key = "localsqs_" + suffix.replace("-", "_")
    value = config.getoption(key)
    base = config.invocation_params.dir
    if value is None:
        value = config.getini(key)
        base = config.inipath.parent if config.inipath else config.rootpath
    if value is None or value == "":
        return None
    value = str(value)
    if suffix in _PATH_OPTIONS and (os.sep in value or suffix != "binary"):
        value = str(Path(base, os.path.expanduser(value)))
    return value


def _no_reset(config: pytest.Config) -> bool:
    cli = config.getoption("localsqs_no_reset")
    return bool(cli) if cli is not None else bool(config.getini("localsqs_no_reset"))


def server_settings(config: pytest.Config) -> Dict[str, Any]:
    """The ``Server`` keyword arguments the options of this run ask for."""
    data_dir = _option(config, "data-dir")
    worker = getattr(config, "workerinput", {}).get("workerid")
    if data_dir is not None and worker is not None:
        # pytest-xdist: each worker has its own server, and a data dir cannot be shared.
        data_dir = os.path.join(data_dir, worker)
    return {
        "binary": _option(config, "binary"),
        "data_dir": data_dir,
        "config": _option(config, "config"),
        "region": _option(config, "region"),
        "account_id": _option(config, "account-id"),
    }


@pytest.fixture(scope="session")
def localsqs(request: pytest.FixtureRequest) -> Iterator[Server]:
    """A running localsqs server for the session; reset before each test that uses it."""
    server = Server(**server_settings(request.config))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _localsqs_reset(request: pytest.FixtureRequest) -> None:
    # Autouse fixtures run before the other function-scoped fixtures, so a test's own fixtures
    # that create queues through `localsqs` see the clean server and keep what they made.
    if "localsqs" not in request.fixturenames:
        return
    if _no_reset(request.config) or request.node.get_closest_marker("localsqs_no_reset"):
        return
    request.getfixturevalue("localsqs").reset()


@pytest.fixture
def sqs_client(localsqs: Server) -> Any:
    """A boto3 SQS client for the session's localsqs server."""
    return localsqs.client()
