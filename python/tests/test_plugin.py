"""Finding and loading the plugin, its stage and parameter tables, and configuration errors."""

import os

import pytest

import grip


def test_stages_and_parameter_tables(plugin):
    assert plugin.name == "grip" and plugin.abi[0] == grip.ABI_MAJOR
    kinds = {s.kind for s in plugin.stages}
    assert kinds == set(grip.KINDS)
    shot = plugin.stage("descriptor", "shot")
    assert plugin.stage("descriptor") is plugin.stages_of("descriptor")[0]  # the kind's default: the first
    assert "cpu" in shot.backends
    radius = shot.param("radius")
    assert radius.name == "radius" and radius.type == "float"
    assert radius.default == "0.02" and radius.default_value == pytest.approx(0.02)
    assert radius.range[0] > 0 and radius.range[1] >= radius.range[0]
    assert "radius" in radius.doc
    device = shot.param("device")
    assert device.type == "enum" and device.choices == ("auto", "cuda", "cpu") and device.range is None
    for s in plugin.stages:
        for p in s.params:
            assert p.key and p.type in ("bool", "int", "float", "enum", "string")
            assert p.key not in ("impl", "plugin")
    with pytest.raises(KeyError, match="radiuss"):
        shot.param("radiuss")
    with pytest.raises(KeyError, match="available: .*shot"):
        plugin.stage("descriptor", "nope")
    with pytest.raises(ValueError, match="unknown stage kind"):
        plugin.stages_of("descriptors")
    assert [p.key for p in grip.PIPELINE_PARAMS] == ["device", "cuda_device", "threads"]


def test_bad_key_is_a_grip_error_with_the_plugins_text(plugin):
    with plugin.context() as ctx:
        with pytest.raises(grip.GripError) as e:
            ctx.stage("descriptor", "shot", radiuss=0.02)
        assert e.value.status == grip.Status.ECONFIG
        assert "radiuss" in e.value.message and e.value.status_text
        assert "radiuss" in ctx.last_error
        with pytest.raises(grip.GripError, match="out of range") as e:
            ctx.stage("descriptor", "shot", radius=-1)
        assert e.value.status == grip.Status.ECONFIG


def test_pipeline_reports_every_bad_key_at_once(plugin):
    config = {"descriptor": {"impl": "shot", "radiuss": 0.02}, "match": {"k": 0.5}}
    with pytest.raises(grip.ConfigError) as e:
        grip.Pipeline(config, plugin=plugin)
    err = e.value
    assert isinstance(err, grip.GripError) and err.status == grip.Status.ECONFIG
    assert len(err.problems) == 2
    assert err.problems[0].startswith("descriptor 'shot': ") and "radiuss" in err.problems[0]
    assert err.problems[0].endswith("; did you mean 'radius' for 'radiuss'?")
    assert err.problems[1].startswith("match 'knn'")


def test_unknown_impl_section_and_pipeline_key(plugin):
    with pytest.raises(grip.ConfigError, match="unknown implementation 'shott'.*did you mean 'shot'"):
        grip.Pipeline({"descriptor": {"impl": "shott"}}, plugin=plugin)
    with pytest.raises(grip.ConfigError, match="unknown section.*did you mean 'descriptor'"):
        grip.Pipeline({"descripter": {"impl": "shot"}}, plugin=plugin)
    with pytest.raises(grip.ConfigError, match="pipeline.device: 'gpu' is not one of auto|cuda|cpu"):
        grip.Pipeline({"pipeline": {"device": "gpu"}}, plugin=plugin)
    with pytest.raises(grip.ConfigError, match="expected section.key=value"):
        grip.Pipeline(None, overrides=["descriptor.radius"], plugin=plugin)


def test_ini_format(tmp_path, tutorial_config):
    sections = grip.read_config(tutorial_config)
    assert sections["descriptor"]["impl"] == "shot" and sections["group"]["threshold"] == "5"
    assert sections["pipeline"] == {"device": "auto"}
    f = tmp_path / "c.conf"
    f.write_text("\ufeff# comment\n; also a comment\n[descriptor]\n  radius = 0.03   # trailing\n"
                 "name = a#b\n\n[match]\nk=2\r\n")
    assert grip.read_config(f) == {"descriptor": {"radius": "0.03", "name": "a#b"}, "match": {"k": "2"}}
    f.write_text("[descriptor]\nradius = 1\nradius = 2\n[nope]\nx = 1\nstray\n")
    with pytest.raises(grip.ConfigError) as e:
        grip.read_config(f)
    assert e.value.problems == [
        f"{f}:3: descriptor.radius: duplicate key (first set at line 2)",
        f"{f}:4: nope: unknown section (known: pipeline, descriptor, index, match, group, verify)",
        f"{f}:6: nope: missing '=' in 'stray' (expected key = value)"]
    with pytest.raises(grip.ConfigError, match="cannot open"):
        grip.read_config(tmp_path / "absent.conf")


def test_missing_plugin_path(tmp_path, monkeypatch):
    missing = tmp_path / "nowhere" / "libgrip.so"
    with pytest.raises(grip.PluginNotFoundError) as e:
        grip.Plugin(missing)
    assert isinstance(e.value, FileNotFoundError) and isinstance(e.value, grip.GripError)
    assert str(missing) in str(e.value)
    monkeypatch.setenv("GRIP_PLUGIN", str(missing))
    with pytest.raises(grip.PluginNotFoundError, match="GRIP_PLUGIN"):
        grip.find_plugin()
    with pytest.raises(grip.PluginNotFoundError):
        grip.Pipeline()


def test_not_a_plugin(tmp_path):
    fake = tmp_path / "libgrip.so"
    fake.write_text("not an ELF file\n")
    with pytest.raises(grip.PluginLoadError, match="not a loadable shared object"):
        grip.Plugin(fake)
    assert grip.find_plugin(tmp_path) == os.path.join(tmp_path, "libgrip.so")  # a folder means its libgrip.so


def test_search_order(plugin_path, tmp_path, monkeypatch):
    """An explicit path, then GRIP_PLUGIN, then the path recorded at install (grip/_install.py)."""
    import sys
    import types
    monkeypatch.setenv("GRIP_PLUGIN", plugin_path)
    assert grip.find_plugin() == plugin_path
    with pytest.raises(grip.PluginNotFoundError):
        grip.find_plugin(tmp_path / "other.so")  # an explicit path is not replaced by another
    monkeypatch.delenv("GRIP_PLUGIN")
    recorded = types.ModuleType("grip._install")
    recorded.PLUGIN_PATH = plugin_path
    monkeypatch.setitem(sys.modules, "grip._install", recorded)
    assert grip.find_plugin() == plugin_path
    recorded.PLUGIN_PATH = str(tmp_path / "moved" / "libgrip.so")  # stale: the search goes on, and says so
    try:
        found = grip.find_plugin()
        assert found != recorded.PLUGIN_PATH
    except grip.PluginNotFoundError as e:
        assert e.looked[0] == recorded.PLUGIN_PATH
