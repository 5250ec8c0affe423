"""PEP 517 build backend of the localsqs Python package: maturin's, behind a check for cargo.

Building from source compiles the Rust binary, so it needs cargo. When cargo is missing,
maturin's own backend asks for ``puccinialin`` and downloads a Rust toolchain (about 1 GB) into
the user's cache without asking. This backend stops instead, before anything is downloaded
(``pyproject.toml`` lists no build requirement: maturin is asked for only once cargo is found),
with a message saying how to get a prebuilt wheel. With cargo on PATH every hook is maturin's.
"""

from __future__ import annotations

import shutil
import sys
from typing import Any, Mapping, Optional

# Kept in step with [build-system] of pyproject.toml before this backend took over.
MATURIN = "maturin>=1.5,<2.0"

# The Rust version Cargo.toml's rust-version names; cargo itself refuses an older one.
RUST_VERSION = "1.90"

MESSAGE = f"""
localsqs: this is a build from source, which compiles the localsqs server (Rust) and needs
cargo, Rust {RUST_VERSION} or newer, on PATH. No cargo was found, so the build stops here
rather than download a Rust toolchain.

Install a prebuilt wheel instead; it carries the server binary and needs no Rust:

    pip install --only-binary=localsqs localsqs

Wheels are published for Linux (x86_64 and aarch64, glibc and musl), macOS (x86_64 and
arm64) and Windows (x86_64). On another platform, install Rust (https://rustup.rs) and run
the same command again, or use a release binary or the container image: docs/install.md in
https://github.com/localsqs/localsqs.
"""


def _require_cargo() -> None:
    # The same test maturin's backend makes before it reaches for puccinialin.
    if shutil.which("cargo") is None:
        sys.stderr.write(MESSAGE)
        sys.stderr.flush()
        raise SystemExit(1)


def _maturin():  # type: ignore[no-untyped-def]
    _require_cargo()
    import maturin

    return maturin


def get_requires_for_build_wheel(config_settings: Optional[Mapping[str, Any]] = None) -> list[str]:
    _require_cargo()
    return [MATURIN]


def get_requires_for_build_sdist(config_settings: Optional[Mapping[str, Any]] = None) -> list[str]:
    _require_cargo()
    return [MATURIN]


def get_requires_for_build_editable(config_settings: Optional[Mapping[str, Any]] = None) -> list[str]:
    _require_cargo()
    return [MATURIN]


def prepare_metadata_for_build_wheel(
    metadata_directory: str, config_settings: Optional[Mapping[str, Any]] = None
) -> str:
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def prepare_metadata_for_build_editable(
    metadata_directory: str, config_settings: Optional[Mapping[str, Any]] = None
) -> str:
    return _maturin().prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _maturin().build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: Optional[Mapping[str, Any]] = None,
    metadata_directory: Optional[str] = None,
) -> str:
    return _maturin().build_editable(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: Optional[Mapping[str, Any]] = None) -> str:
    return _maturin().build_sdist(sdist_directory, config_settings)
