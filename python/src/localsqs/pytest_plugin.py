"""pytest plugin (entry point ``pytest11``: ``localsqs``): a local SQS server for tests.

Fixtures:

``localsqs``
    A running :class:`localsqs.Server`, started once per test session (once per worker under
    pytest-xdist) and reset before every test that uses it, so each test starts with no queues.
``sqs_client``
    ``localsqs.client()``: a boto3 SQS client for that server (needs boto3).

While a test uses ``localsqs`` (and while session-scoped fixtures built on it are set up), the
environment points the code under test at the server, as moto's ``mock_aws`` does:
``AWS_ENDPOINT_URL_SQS`` (and ``AWS_ENDPOINT_URL`` with ``--localsqs-set-endpoint-url``),
dummy credentials ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` (set whatever they were,
so nothing reaches real AWS; ``AWS_SESSION_TOKEN`` is removed), ``AWS_DEFAULT_REGION`` and
``AWS_REGION``; boto3's default session is set aside, so ``boto3.client("sqs")`` built anywhere
reaches localsqs. Each variable is restored when the test ends. ``--localsqs-no-env`` leaves
the environment alone.

Options (command line, then the ini key of the same name, e.g. ``localsqs_region``):
``--localsqs-binary``, ``--localsqs-data-dir``, ``--localsqs-config``, ``--localsqs-region``,
``--localsqs-account-id``, ``--localsqs-no-reset``, ``--localsqs-set-endpoint-url``,
``--localsqs-no-env``. The marker ``@pytest.mark.localsqs_no_reset`` keeps the state of the
previous tests for one test. Disable the plugin with ``-p no:localsqs``.
"""

from __future__ import annotations

import os
import sys
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
# (option suffix, ini key, help) of the on/off options.
_FLAG_OPTIONS = (
    ("no-reset", "do not reset the localsqs server (drop all queues) before each test"),
    (
        "set-endpoint-url",
        "also set AWS_ENDPOINT_URL while a test uses localsqs, so clients of every AWS service "
        "reach it (it answers SQS only); AWS_ENDPOINT_URL_SQS is always set",
    ),
    ("no-env", "leave the environment alone: no AWS_ENDPOINT_URL_SQS, credentials or region"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("localsqs", "localsqs: local SQS server fixtures")
    for suffix, help_text in _VALUE_OPTIONS:
        key = "localsqs_" + suffix.replace("-", "_")
        group.addoption(f"--localsqs-{suffix}", dest=key, default=None, metavar="VALUE",
                        help=help_text)
        parser.addini(key, help_text, default=None)
    for suffix, help_text in _FLAG_OPTIONS:
        key = "localsqs_" + suffix.replace("-", "_")
        group.addoption(
            f"--localsqs-{suffix}", dest=key, action="store_true", default=None, help=help_text
        )
        parser.addini(key, help_text, type="bool", default=False)


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


def _flag(config: pytest.Config, suffix: str) -> bool:
    """An on/off option: the command line, else the ini key."""
    key = "localsqs_" + suffix.replace("-", "_")
    cli = config.getoption(key)
    return bool(cli) if cli is not None else bool(config.getini(key))


def _no_reset(config: pytest.Config) -> bool:
    return _flag(config, "no-reset")


# What moto's mock_aws sets too: credentials that are not real, whatever the environment held.
DUMMY_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}


def redirect_env(server: Server, all_services: bool = False) -> Dict[str, Optional[str]]:
    """The environment that points AWS SDKs at ``server``; ``None`` means "unset"."""
    env: Dict[str, Optional[str]] = {
        "AWS_ENDPOINT_URL_SQS": server.endpoint_url,
        **DUMMY_CREDENTIALS,
        # A token belongs to real keys: sent with dummy ones it is meaningless at best.
        "AWS_SESSION_TOKEN": None,
        "AWS_SECURITY_TOKEN": None,
        "AWS_DEFAULT_REGION": server.region,
        "AWS_REGION": server.region,
        # Set, it makes botocore ignore the AWS_ENDPOINT_URL* variables.
        "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS": None,
    }
    if all_services:
        env["AWS_ENDPOINT_URL"] = server.endpoint_url
    return env


class _Redirect:
    """The environment, and boto3's default session, pointed at one server; undone exactly.

    boto3's default session caches the credentials it resolved, so it is set aside while the
    redirection holds (as moto does) and put back afterwards.
    """

    _UNSET = object()

    def __init__(self, values: Dict[str, Optional[str]]) -> None:
        self.values = values
        self._saved: Optional[Dict[str, Optional[str]]] = None
        self._session: Any = self._UNSET

    @property
    def active(self) -> bool:
        return self._saved is not None

    def apply(self) -> None:
        if self.active:
            return
        self._saved = {k: os.environ.get(k) for k in self.values}
        for k, v in self.values.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        boto3 = sys.modules.get("boto3")
        if boto3 is not None:
            self._session = boto3.DEFAULT_SESSION
            boto3.DEFAULT_SESSION = None

    def restore(self) -> None:
        if self._saved is None:
            return
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        self._saved = None
        boto3 = sys.modules.get("boto3")
        if boto3 is not None:
            # A default session made meanwhile holds the dummy credentials: drop it.
            saved = self._session
            boto3.DEFAULT_SESSION = None if saved is self._UNSET else saved
        self._session = self._UNSET


# The session's redirection, once `localsqs` has started; kept on the session's config, so that
# a pytest session run inside another (pytester) has its own. One per xdist worker.
_REDIRECT = pytest.StashKey[Optional[_Redirect]]()


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
    config = request.config
    server = Server(**server_settings(config))
    server.start()
    redirect = None
    if not _flag(config, "no-env"):
        # From here on, so that session-scoped fixtures built on this one are redirected too;
        # `_localsqs_env` takes it back around the tests that do not use the server.
        redirect = _Redirect(redirect_env(server, _flag(config, "set-endpoint-url")))
        redirect.apply()
    config.stash[_REDIRECT] = redirect
    try:
        yield server
    finally:
        config.stash[_REDIRECT] = None
        if redirect is not None:
            redirect.restore()
        server.stop()


@pytest.fixture(autouse=True)
def _localsqs_env(request: pytest.FixtureRequest) -> Iterator[None]:
    # The environment points at the server exactly while a test uses it: a test that does not
    # (and runs after one that did) sees the environment it would have seen without localsqs.
    uses = "localsqs" in request.fixturenames
    if uses:
        request.getfixturevalue("localsqs")
    redirect = request.config.stash.get(_REDIRECT, None)
    if redirect is None:
        yield
        return
    if uses:
        redirect.apply()
        yield
    else:
        redirect.restore()
        try:
            yield
        finally:
            redirect.apply()


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
