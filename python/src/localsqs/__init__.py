"""localsqs: a local, wire-compatible Amazon SQS emulator, started from Python.

``pip install localsqs`` puts the ``localsqs`` binary on PATH and installs this package, which
starts and stops it (:class:`Server`) and provides pytest fixtures (``localsqs``,
``sqs_client``) through the ``pytest11`` entry point.
"""

from ._server import (
    BinaryNotFoundError,
    LocalSQSError,
    Server,
    ServerStartError,
    find_binary,
    free_port,
)

try:
    from importlib.metadata import PackageNotFoundError, version as _version

    __version__ = _version("localsqs")
except PackageNotFoundError:  # pragma: no cover - imported from a source tree
    __version__ = "0+unknown"

__all__ = [
    "BinaryNotFoundError",
    "LocalSQSError",
    "Server",
    "ServerStartError",
    "__version__",
    "find_binary",
    "free_port",
]
