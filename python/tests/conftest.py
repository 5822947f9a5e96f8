"""Fixtures: the plugin (GRIP_PLUGIN, as ctest sets it, else wherever grip.find_plugin() finds one), the shared
data folder (GRIP_DATA, else ../shared/data beside the source tree) and grip-host (GRIP_HOST, else build/)."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "python"))  # the package under test, not an installed copy
sys.path.insert(0, HERE)

import grip  # noqa: E402


@pytest.fixture(scope="session")
def plugin_path():
    try:
        return grip.find_plugin()
    except grip.PluginNotFoundError as e:
        pytest.skip(f"no grip plugin to test: {e}")


@pytest.fixture(scope="session")
def plugin(plugin_path):
    return grip.load_plugin(plugin_path)


@pytest.fixture(scope="session")
def repo():
    return REPO


@pytest.fixture(scope="session")
def tutorial_config():
    return os.path.join(REPO, "configs", "pcl_tutorial.conf")


@pytest.fixture(scope="session")
def tutorial_files():
    data = os.environ.get("GRIP_DATA") or os.path.join(REPO, "..", "shared", "data")
    folder = os.path.join(data, "pcl", "data_repo", "correspondence_grouping")
    files = [os.path.join(folder, f) for f in ("milk.pcd", "milk_cartoon_all_small_clorox.pcd")]
    if not all(os.path.isfile(f) for f in files):
        pytest.skip(f"the PCL tutorial pair is not in {folder}")
    return files


@pytest.fixture(scope="session")
def grip_host():
    host = os.environ.get("GRIP_HOST") or os.path.join(REPO, "build", "grip-host")
    if not os.access(host, os.X_OK):
        pytest.skip(f"grip-host is not at {host} (set GRIP_HOST)")
    return host
