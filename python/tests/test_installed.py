"""The wheel as installed: the Python package, its version and its bundled binary agree."""

import importlib.metadata
import subprocess
import sysconfig
from pathlib import Path

import localsqs


def test_package_is_imported_from_the_environment_not_the_source_tree():
    installed = Path(sysconfig.get_path("purelib")).resolve()
    assert Path(localsqs.__file__).resolve().parent == installed / "localsqs"


def test_binary_is_installed_next_to_the_interpreter_and_found(monkeypatch):
    monkeypatch.delenv("LOCALSQS_BIN", raising=False)
    monkeypatch.delenv("LOCALSQS_BINARY", raising=False)
    found = Path(localsqs.find_binary())
    assert found == Path(sysconfig.get_path("scripts")) / "localsqs"


def test_versions_follow_the_crate():
    version = importlib.metadata.version("localsqs")
    assert localsqs.__version__ == version
    out = subprocess.run(
        [localsqs.find_binary(), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == f"localsqs {version}"


def test_pytest_plugin_is_registered_by_entry_point(pytestconfig):
    entry_points = importlib.metadata.entry_points(group="pytest11")
    assert [ep.value for ep in entry_points if ep.name == "localsqs"] == ["localsqs.pytest_plugin"]
    assert pytestconfig.pluginmanager.has_plugin("localsqs")
