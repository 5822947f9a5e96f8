"""The pipeline on a generated scene (no data files), each stage alone, and the lifetime of plugin objects."""

import gc
import threading

import numpy as np
import pytest

import grip
import synthetic

# the tutorial's settings, but finer keypoints and coarser Hough bins for the generated object (with these, each of
# 15 generated scenes gives the one right instance)
CONFIG = {
    "pipeline": {"device": "cpu"},
    "descriptor": {"impl": "shot", "model_leaf": 0.008, "scene_leaf": 0.008, "radius": 0.03},
    "index": {"impl": "bruteforce"},
    "match": {"impl": "knn", "k": 1, "max_sqdist": 0.25},
    "group": {"impl": "hough3d", "frame_radius": 0.015, "bin_size": 0.02, "threshold": 5},
    "verify": {"impl": "icp"},
}


@pytest.fixture(scope="module")
def generated():
    model = synthetic.model(spacing=0.003)
    scene, pose = synthetic.scene(model, spacing=0.003)
    return model, scene, pose


def test_generated_scene_is_recognised(plugin, generated):
    model, scene, pose = generated
    with grip.Pipeline(CONFIG, plugin=plugin) as p:
        r = p.recognise([model], scene, model_names=["L"])
    assert len(r.instances) == 1
    inst = r.instances[0]
    assert inst.accepted and inst.model == 0 and inst.model_name == "L"
    assert inst.pose.shape == (4, 4) and inst.pose.dtype == np.float64
    assert np.abs(inst.pose[:3, 3] - pose[:3, 3]).max() < 0.002  # 2 mm
    assert np.abs(inst.pose[:3, :3] - pose[:3, :3]).max() < 0.01
    assert inst.fitness > 0.9 and inst.rmse < 0.002
    assert r.correspondences == len(r.matches) > inst.correspondences >= 5
    assert len(inst.members) == inst.correspondences
    assert r.model_keypoints[0].shape == (len(r.model_keypoint_indices[0]), 3)
    assert r.scene_keypoints.dtype == np.float32 and r.scene_keypoint_indices.dtype == np.uint32
    np.testing.assert_array_equal(r.scene_keypoints, scene[r.scene_keypoint_indices])
    assert set(r.timings_ms) == set(grip.KINDS) | {"total"}
    d = r.to_dict()
    assert d["counts"]["correspondences"] == r.correspondences and len(d["instances"]) == 1
    assert len(d["rejected"]) == len(r.hypotheses) - 1 and all(x["rejected_by"] for x in d["rejected"])


def test_stages_one_by_one_match_the_pipeline(plugin, generated):
    model, scene, _ = generated
    with grip.Pipeline(CONFIG, plugin=plugin) as p:
        whole = p.recognise(model, scene)  # one cloud alone is a list of one
    with plugin.context() as ctx:
        stages = {k: ctx.stage(k, CONFIG[k]["impl"], {**{a: b for a, b in CONFIG[k].items() if a != "impl"},
                                                      **({"device": "cpu"} if k != "group" and k != "verify"
                                                         else {})})
                  for k in grip.KINDS}
        m = stages["descriptor"].describe(model, "model")
        s = stages["descriptor"].describe(grip.Cloud(scene, name="generated scene"), "scene")
        assert m.descriptor_dim == 352 and m.descriptors.shape == (len(m), 352)
        assert m.normals.shape == (len(model), 4) and m.frames.shape == (len(m), 9)
        index = stages["index"].build(m.descriptors, np.zeros(len(m), np.uint32))
        assert (index.rows, index.dim, index.n_models) == (len(m), 352, 1)
        ids, sq = index.search(m.descriptors[:5], k=2)
        assert ids.shape == (5, 2) and list(ids[:, 0]) == [0, 1, 2, 3, 4] and np.all(sq[:, 0] == 0)
        matches = stages["match"].match(index, s)
        hyps = stages["group"].group([m], s, matches)
        verdicts = stages["verify"].verify([m], s, hyps)
        assert len(matches) == whole.correspondences
        assert len(hyps) == len(whole.hypotheses) and len(verdicts) == len(hyps)
        v = verdicts[0]
        for x in verdicts:  # a rejection says which test made it (ABI 1.1)
            assert (x.rejected_by == "") == x.accepted and x.rejected_by in grip._abi.VERDICT_REASON_KEYS, x
        np.testing.assert_array_equal(v.pose, whole.hypotheses[v.hypothesis].pose)
        with pytest.raises(TypeError, match="no describe"):
            stages["index"].describe(model)
        with pytest.raises(TypeError, match="float32"):
            stages["index"].build(m.descriptors.astype(np.float64))


def test_describe_many_gives_each_clouds_describe(plugin, generated):
    model, scene, _ = generated
    far = model.copy()
    far[-1] = (1e12, 0, 0)  # too far out for a support_leaf grid
    with plugin.context() as ctx:
        shot = ctx.stage("descriptor", "shot", device="cpu", model_leaf=0.02, scene_leaf=0.03, clouds_in_flight=3)
        many = shot.describe_many([model, grip.Cloud(scene, name="the scene"), model[::2]], ["model", "scene", "model"])
        one = [shot.describe(model, "model"), shot.describe(scene, "scene"), shot.describe(model[::2], "model")]
        assert [f.role for f in many] == ["model", "scene", "model"]
        for a, b in zip(many, one):
            for field in ("keypoints", "keypoint_xyz", "normals", "frames", "descriptors"):
                np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
        assert shot.describe_many([]) == []
        assert len(shot.describe_many([model])) == 1
        with pytest.raises(ValueError, match="2 roles for 3 clouds"):
            shot.describe_many([model, model, model], ["model", "scene"])
        thin = ctx.stage("descriptor", "shot", device="cpu", support_leaf=0.001)
        with pytest.raises(grip.GripError, match=r"failed on cloud 'far'.*clouds\[1\]: descriptor.support_leaf"):
            thin.describe_many([model, grip.Cloud(far, name="far")])


def test_release_is_tied_to_python_lifetime(plugin, generated):
    model, _, _ = generated
    ctx = plugin.context()
    shot = ctx.stage("descriptor", "shot", device="cpu", model_leaf=0.02)
    f = shot.describe(model, "model")
    kp = f.keypoints  # a copy: it outlives the features
    f.close()
    f.close()  # a second close does nothing
    assert f.closed and len(kp) > 0
    with pytest.raises(ValueError, match="closed"):
        f.descriptors
    with shot.describe(model, "model") as g:
        assert not g.closed
    assert g.closed
    dropped = shot.describe(model, "model")
    finalizer = dropped._finalizer
    del dropped
    gc.collect()
    assert not finalizer.alive  # released by the garbage collector
    kept = shot.describe(model, "model")
    ctx.close()  # closes what was made from it first
    assert shot.closed and kept.closed and ctx.closed
    with pytest.raises(ValueError, match="closed"):
        shot.describe(model)
    ctx.close()
    kept.close()


def test_objects_collected_in_any_order_and_from_other_threads(plugin, generated):
    model, _, _ = generated
    for _ in range(3):
        ctx = plugin.context(threads=1)
        shot = ctx.stage("descriptor", "shot", device="cpu", model_leaf=0.03)
        feats = [shot.describe(model, "model") for _ in range(2)]
        del ctx, shot  # the features keep the context alive
        gc.collect()
        assert not feats[0].closed
        t = threading.Thread(target=lambda fs=feats: fs.clear())
        t.start()
        t.join()
        del feats
        gc.collect()
