"""Context.stats(): the context's counters (grip_ctx_stats, ABI 1.2) after a run, on the CPU and, when there is a
device, on CUDA."""

import pytest

import grip
import synthetic
from test_pipeline import CONFIG

FIELDS = {"device", "h2d_bytes", "d2h_bytes", "h2d_copies", "d2h_copies", "h2d_ns", "d2h_ns", "pool_reserved_bytes",
          "pool_reserved_high_bytes", "pool_used_bytes", "pool_used_high_bytes", "pool_grows"}


@pytest.fixture(scope="module")
def generated():
    model = synthetic.model(spacing=0.003)
    scene, _ = synthetic.scene(model, spacing=0.003)
    return model, scene


def test_plugin_speaks_abi_1_2(plugin):
    assert (grip.ABI_MAJOR, grip.ABI_MINOR) == (1, 4)
    assert plugin.abi >= (1, 2) and plugin._table.ctx_stats and plugin._table.cloud_resolution


def test_cpu_run_leaves_the_device_untouched(plugin, generated):
    model, scene = generated
    with grip.Pipeline(CONFIG, plugin=plugin) as p:  # pipeline.device = cpu
        ctx = p.stage("descriptor").context
        assert ctx.stats() == {**{k: 0 for k in FIELDS}, "device": -1}  # a fresh context
        r = p.recognise([model], scene)
        assert len(r.instances) == 1
        stats = ctx.stats()
    # plugin.h: a context that never used a device reads device -1 and 0 everywhere else
    assert set(stats) == FIELDS
    assert stats == {**{k: 0 for k in FIELDS}, "device": -1}


def test_cuda_run_counts_its_copies_and_pool(plugin, generated):
    model, scene = generated
    with plugin.context() as probe:
        if probe.device_count() == 0:
            pytest.skip("no CUDA device")
    config = {**CONFIG, "pipeline": {"device": "cuda"}}
    with grip.Pipeline(config, plugin=plugin) as p:
        ctx = p.stage("descriptor").context
        p.recognise([model], scene)
        first = ctx.stats()
        r = p.recognise([model], scene)
        second = ctx.stats()
    assert len(r.instances) == 1
    assert first["device"] >= 0 and second["device"] == first["device"]
    # the clouds went up, results came down
    assert first["h2d_bytes"] >= model.nbytes + scene.nbytes and first["h2d_copies"] > 0
    assert first["d2h_bytes"] > 0 and first["d2h_copies"] > 0
    for s in (first, second):
        assert 0 <= s["pool_used_bytes"] <= s["pool_reserved_bytes"] <= s["pool_reserved_high_bytes"]
        assert s["pool_used_bytes"] <= s["pool_used_high_bytes"] <= s["pool_reserved_high_bytes"]
    # counts only grow; the second, identical run uploads its clouds again, and no more than the first moved (which
    # may include one-off uploads)
    assert all(second[k] >= first[k] for k in FIELDS - {"device", "pool_reserved_bytes", "pool_used_bytes"})
    assert model.nbytes + scene.nbytes <= second["h2d_bytes"] - first["h2d_bytes"] <= first["h2d_bytes"]
    assert 0 < second["d2h_bytes"] - first["d2h_bytes"] <= first["d2h_bytes"]


def test_stats_of_a_closed_context_is_refused(plugin):
    ctx = plugin.context()
    ctx.close()
    with pytest.raises(ValueError, match="closed"):
        ctx.stats()
