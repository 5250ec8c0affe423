"""Start, use and stop a ``localsqs`` server process from Python.

Only the standard library is used here; boto3 is imported lazily by :meth:`Server.client`.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Dict, Iterable, Optional, Union

__all__ = [
    "BinaryNotFoundError",
    "LocalSQSError",
    "Server",
    "ServerStartError",
    "find_binary",
]

StrPath = Union[str, "os.PathLike[str]"]

# Environment variables that name the binary, the first one set wins. LOCALSQS_BIN is the name
# the Node, Go and Java helpers read too; LOCALSQS_BINARY is this package's original one.
BINARY_ENVS = ("LOCALSQS_BIN", "LOCALSQS_BINARY")
BINARY_ENV = BINARY_ENVS[1]  # kept for code that imported it
# A server whose log level hides its "localsqs is serving" line must have lived this long before
# a /health answer is taken as its own (see Server._wait_healthy).
_QUIET_GRACE = 0.5
DEFAULT_REGION = "us-east-1"
DEFAULT_ACCOUNT_ID = "000000000000"

# Environment variables the binary reads for the settings a Server passes explicitly. They are
# removed from the child's environment so that ``Server()`` means "in memory, defaults" even in
# a shell that exports, say, LOCALSQS_DATA_DIR for a long-running instance.
_MANAGED_ENV = (
    "LOCALSQS_HOST",
    "LOCALSQS_PORT",
    "LOCALSQS_DATA_DIR",
    "LOCALSQS_REGION",
    "LOCALSQS_ACCOUNT_ID",
    "LOCALSQS_CONFIG",
)


class LocalSQSError(RuntimeError):
    """Base class of the errors raised by this package."""


class BinaryNotFoundError(LocalSQSError, FileNotFoundError):
    """The ``localsqs`` executable could not be found (or is not executable)."""


class ServerStartError(LocalSQSError):
    """The server exited during start-up or did not become healthy in time."""


def _exe_name() -> str:
    return "localsqs.exe" if os.name == "nt" else "localsqs"


def _candidate_dirs() -> Iterable[Path]:
    """Directories where pip puts the wheel's ``localsqs`` script, best guess first."""
    seen = set()
    paths = [sysconfig.get_path("scripts")]
    # A venv's python is often called through a symlink: its own directory is the venv's bin/.
    paths.append(os.path.dirname(sys.executable))
    try:  # `pip install --user`
        paths.append(sysconfig.get_path("scripts", f"{os.name}_user"))
    except KeyError:  # pragma: no cover - scheme missing on exotic builds
        pass
    for p in paths:
        if p and p not in seen:
            seen.add(p)
            yield Path(p)


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_binary(binary: Optional[StrPath] = None) -> str:
    """Return the path of the ``localsqs`` executable to run.

    Order: the ``binary`` argument, then the ``LOCALSQS_BIN`` (or ``LOCALSQS_BINARY``)
    environment variable, then the scripts directory of the running interpreter (where ``pip
    install localsqs`` puts it), then ``PATH``. Raises :class:`BinaryNotFoundError` with what was
    tried.
    """
    env_name = next((name for name in BINARY_ENVS if os.environ.get(name)), None)
    if binary is not None or env_name is not None:
        source = "binary=" if binary is not None else f"${env_name}"
        raw = os.fspath(binary) if binary is not None else os.environ[env_name]
        path = Path(raw)
        if not path.is_absolute() and os.sep not in raw:
            found = shutil.which(raw)
            if found:
                return found
        if _is_executable(path):
            return str(path)
        raise BinaryNotFoundError(
            f"localsqs binary given by {source} is not an executable file: {raw!r}"
        )
    tried = []
    for directory in _candidate_dirs():
        candidate = directory / _exe_name()
        tried.append(str(candidate))
        if _is_executable(candidate):
            return str(candidate)
    found = shutil.which(_exe_name())
    if found:
        return found
    tried.append("PATH")
    raise BinaryNotFoundError(
        "cannot find the localsqs binary (tried: "
        + ", ".join(tried)
        + f"). Install it with `pip install localsqs`, put it on PATH, or pass binary=... or "
        f"set ${BINARY_ENVS[0]} to its path."
    )


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago on ``host``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _connect_host(host: str) -> str:
    """The address to reach a server listening on ``host`` (wildcards mean loopback)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host in ("::", "[::]"):
        return "::1"
    return host


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


class Server:
    """A ``localsqs`` server in a child process.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`::

        with localsqs.Server() as server:
            sqs = server.client()
            sqs.create_queue(QueueName="orders")

    ``port=None`` picks a free port. ``data_dir`` makes state durable in that directory
    (default: in memory). ``config`` is a TOML file of queues to create at start. ``region`` and
    ``account_id`` appear in queue ARNs and URLs. ``binary`` overrides where the executable is
    found (see :func:`find_binary`). ``extra_args`` are appended to the command line.
    ``admin_token`` starts the server with ``--admin-token`` and sends the token on the admin
    calls (``reset``, ``advance``, …); a token given in ``extra_args`` or as
    ``LOCALSQS_ADMIN_TOKEN`` in the server's environment is sent too.
    """

    def __init__(
        self,
        port: Optional[int] = None,
        host: str = "127.0.0.1",
        data_dir: Optional[StrPath] = None,
        config: Optional[StrPath] = None,
        region: Optional[str] = None,
        account_id: Optional[str] = None,
        binary: Optional[StrPath] = None,
        extra_args: Iterable[str] = (),
        *,
        startup_timeout: float = 30.0,
        stop_timeout: float = 10.0,
        env: Optional[Dict[str, str]] = None,
        admin_token: Optional[str] = None,
    ) -> None:
        self.requested_port = port
        self.host = host
        self.data_dir = None if data_dir is None else os.fspath(data_dir)
        self.config = None if config is None else os.fspath(config)
        self.region = region or DEFAULT_REGION
        self.account_id = account_id or DEFAULT_ACCOUNT_ID
        self._explicit_region = region
        self._explicit_account = account_id
        self.binary = binary
        self.extra_args = tuple(extra_args)
        self.startup_timeout = startup_timeout
        self.stop_timeout = stop_timeout
        self.env = env
        self.admin_token = admin_token
        self.port: Optional[int] = None
        self.process: Optional[subprocess.Popen] = None
        self._log = None  # the child's stdout+stderr, a temporary file
        self._last_output = ""  # the log of the last process, kept after stop()
        self._boto_session = None

    # ---------------------------------------------------------------- life cycle

    def start(self) -> "Server":
        """Launch the binary and wait until ``GET /health`` answers. Returns ``self``."""
        if self.running:
            raise LocalSQSError(f"server already running at {self.endpoint_url}")
        executable = find_binary(self.binary)
        # A port picked here may be taken by someone else before the child binds it: retry
        # with another one when we chose it and the child failed to bind.
        attempts = 3 if self.requested_port is None else 1
        for attempt in range(attempts):
            port = self.requested_port if self.requested_port is not None else free_port(
                _connect_host(self.host)
            )
            try:
                self._launch(executable, port)
                return self
            except ServerStartError as e:
                if attempt + 1 < attempts and "in use" in str(e).lower():
                    continue
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _command(self, executable: str, port: int) -> list:
        cmd = [executable, "--host", self.host, "--port", str(port)]
        if self.data_dir is not None:
            cmd += ["--data-dir", self.data_dir]
        if self.config is not None:
            cmd += ["--config", self.config]
        if self._explicit_region is not None:
            cmd += ["--region", self._explicit_region]
        if self._explicit_account is not None:
            cmd += ["--account-id", self._explicit_account]
        if self.admin_token is not None:
            cmd += ["--admin-token", self.admin_token]
        cmd += list(self.extra_args)
        return cmd

    def _token(self) -> Optional[str]:
        """The admin token the server was started with, if any: ``admin_token``, else one in
        ``extra_args``, else ``LOCALSQS_ADMIN_TOKEN`` in the child's environment."""
        if self.admin_token is not None:
            return self.admin_token
        args = list(self.extra_args)
        for i, arg in enumerate(args):
            if arg == "--admin-token" and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith("--admin-token="):
                return arg.split("=", 1)[1]
        env = os.environ if self.env is None else self.env
        return env.get("LOCALSQS_ADMIN_TOKEN") or None

    def _launch(self, executable: str, port: int) -> None:
        env = dict(os.environ if self.env is None else self.env)
        for key in _MANAGED_ENV:
            env.pop(key, None)
        env.setdefault("NO_COLOR", "1")  # the log goes to a file, not a terminal
        if self.data_dir is not None:
            os.makedirs(self.data_dir, exist_ok=True)
        log = tempfile.TemporaryFile(prefix="localsqs-", suffix=".log")
        try:
            process = subprocess.Popen(
                self._command(executable, port),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
        except OSError as e:
            log.close()
            raise BinaryNotFoundError(f"cannot run the localsqs binary {executable!r}: {e}") from e
        self._log, self.process, self.port = log, process, port
        _live_servers.add(self)
        try:
            self._wait_healthy()
        except BaseException:
            self._terminate()
            raise

    def _wait_healthy(self) -> None:
        assert self.process is not None
        started = time.monotonic()
        deadline = started + self.startup_timeout
        last_error: Optional[BaseException] = None
        while True:
            code = self.process.poll()
            if code is not None:
                raise ServerStartError(
                    f"localsqs exited with code {code} during start-up "
                    f"(command: {' '.join(self.process.args)}). Its output:\n"
                    f"{self.output().rstrip() or '(nothing)'}"
                )
            try:
                status, body = self._request("GET", "/health", timeout=1.0)
                # The answer must come from this child: another process may hold the port (a
                # server left over on a fixed port), and this one is then about to fail to bind
                # it. The child logs "localsqs is serving" once it listens; when its log level
                # hides that line, it must have lived for a moment instead.
                ours = (
                    "localsqs is serving" in self.output()
                    or time.monotonic() - started > _QUIET_GRACE
                )
                if (
                    status == 200
                    and json.loads(body or b"{}").get("ready", True)
                    and ours
                    and self.process.poll() is None
                ):
                    return
            except (OSError, ValueError) as e:  # refused, reset, timeout, not JSON yet
                last_error = e
            if time.monotonic() >= deadline:
                raise ServerStartError(
                    f"localsqs did not answer GET /health within {self.startup_timeout:g}s "
                    f"on {self.endpoint_url} (last error: {last_error!r}). Its output:\n"
                    f"{self.output().rstrip() or '(nothing)'}"
                )
            time.sleep(0.02)

    def stop(self, timeout: Optional[float] = None) -> Optional[int]:
        """Send SIGTERM, wait up to ``timeout`` seconds (default ``stop_timeout``), then kill.

        Returns the process's exit code (``None`` if it was not running). Safe to call twice.
        """
        if self.process is None:
            return None
        code = self._terminate(self.stop_timeout if timeout is None else timeout)
        return code

    def _terminate(self, timeout: float = 5.0) -> Optional[int]:
        process, self.process = self.process, None
        _live_servers.discard(self)
        code = None
        if process is not None:
            if process.poll() is None:
                try:
                    process.send_signal(signal.SIGTERM)
                except ProcessLookupError:  # pragma: no cover - exited in between
                    pass
                try:
                    process.wait(timeout)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            code = process.returncode
            self._last_output = self._read_log()
        if self._log is not None:
            self._log.close()
            self._log = None
        return code

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        """True while the child process is alive."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> Optional[int]:
        return None if self.process is None else self.process.pid

    def _read_log(self) -> str:
        if self._log is None:
            return self._last_output
        self._log.flush()
        self._log.seek(0)
        data = self._log.read()
        self._log.seek(0, os.SEEK_END)
        return data.decode("utf-8", errors="replace")

    def output(self) -> str:
        """Everything the server has written to stdout and stderr so far (its log)."""
        return self._read_log()

    # ---------------------------------------------------------------- HTTP

    @property
    def endpoint_url(self) -> str:
        """``http://host:port`` of the running server, for SDKs' ``endpoint_url``."""
        if self.port is None:
            raise LocalSQSError("the server has not been started")
        return f"http://{_url_host(_connect_host(self.host))}:{self.port}"

    def _request(
        self, method: str, path: str, body: Optional[dict] = None, timeout: float = 10.0
    ) -> "tuple[int, bytes]":
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.endpoint_url + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        token = self._token()
        if token is not None:
            # Under --admin-token every admin endpoint but the health checks needs it.
            req.add_header("Authorization", f"Bearer {token}")
        # A proxy from the environment must never sit between a test and its local server.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(req, timeout=timeout) as resp:
                return resp.status, resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def _admin(self, method: str, path: str, body: Optional[dict] = None) -> Dict[str, Any]:
        if not self.running:
            raise LocalSQSError("the server is not running")
        status, raw = self._request(method, path, body)
        if status == 404:
            raise LocalSQSError(
                f"{method} {path} is not supported by this localsqs binary (404); "
                "it may be older than this Python package"
            )
        if status != 200:
            raise LocalSQSError(f"{method} {path} answered {status}: {raw.decode(errors='replace')}")
        return json.loads(raw)

    def health(self) -> Dict[str, Any]:
        """The JSON of ``GET /health``."""
        return self._admin("GET", "/health")

    def reset(self) -> None:
        """Return the server to its starting state (``POST /_localsqs/reset``): every queue
        and message is dropped, then the queues, fault rules and clock that its ``config`` file
        declares are restored.
        """
        answer = self._admin("POST", "/_localsqs/reset")
        if answer.get("reset") is not True:
            raise LocalSQSError(f"reset failed: {answer!r}")

    def restart(self) -> None:
        """Stop the server and start it again with the same settings on the same port."""
        if self.process is None or self.port is None:
            raise LocalSQSError("the server is not running")
        executable, port = self.process.args[0], self.port
        self._terminate(self.stop_timeout)
        self._launch(executable, port)

    def advance(self, seconds: float) -> Dict[str, Any]:
        """Move the server's clock forward by ``seconds`` (``POST /_localsqs/clock``).

        Visibility timeouts, delays and retention then behave as if that time had passed.
        Returns the server's answer, ``{"now_ms": ..., "offset_ms": ..., "frozen": ...}``.
        """
        return self._admin("POST", "/_localsqs/clock", {"advance_seconds": seconds})

    def client(self, **kwargs: Any) -> Any:
        """A boto3 SQS client for this server.

        ``endpoint_url``, ``region_name`` and dummy credentials are filled in; any keyword
        argument of ``boto3.client`` overrides them.
        """
        try:
            import boto3
        except ImportError as e:
            raise ImportError(
                "Server.client() needs boto3, which is not installed: "
                "`pip install boto3` (or `pip install localsqs[boto3]`)"
            ) from e
        kwargs.setdefault("endpoint_url", self.endpoint_url)
        kwargs.setdefault("region_name", self.region)
        kwargs.setdefault("aws_access_key_id", "test")
        kwargs.setdefault("aws_secret_access_key", "test")
        if self._boto_session is None:
            self._boto_session = boto3.session.Session()
        return self._boto_session.client("sqs", **kwargs)

    def __repr__(self) -> str:
        state = f"running at {self.endpoint_url}" if self.running else "stopped"
        return f"<localsqs.Server {state}>"


# Servers still running when the interpreter exits are stopped, so a forgotten stop() leaves
# no orphan process behind. Strong references: a running server is not garbage-collected.
_live_servers: "set[Server]" = set()


@atexit.register
def _stop_all() -> None:
    for server in list(_live_servers):
        try:
            server.stop(timeout=5.0)
        except Exception:  # pragma: no cover - best effort at exit
            pass
