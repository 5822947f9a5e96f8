"""PCL's correspondence-grouping tutorial from numpy arrays, against grip-host on the same files and config."""

import json
import subprocess

import numpy as np

import grip
from grip.pcd import read_pcd


def test_tutorial_matches_grip_host(plugin_path, tutorial_files, tutorial_config, grip_host):
    model_file, scene_file = tutorial_files
    out = subprocess.run([grip_host, "--plugin", plugin_path, "run", "--config", tutorial_config, "--set",
                          "pipeline.device=cpu", "--model", model_file, "--scene", scene_file, "--json"],
                         capture_output=True, text=True, check=True)
    expected = json.loads(out.stdout)

    milk, scene = read_pcd(model_file), read_pcd(scene_file)
    assert milk.xyz.shape == (12575, 3) and scene.xyz.shape == (480, 640, 3)
    with grip.Pipeline(tutorial_config, overrides=["pipeline.device=cpu"], plugin=plugin_path) as p:
        r = p.recognise([milk.xyz], scene.xyz)  # plain arrays: no name, colour or viewpoint (0 0 0 in the files)

    assert r.to_dict()["counts"] == expected["counts"]
    assert expected["counts"]["model_keypoints"] == [686] and expected["counts"]["scene_keypoints"] == 3747
    assert r.correspondences == expected["counts"]["correspondences"]
    assert len(r.instances) == len(expected["instances"]) == 1
    got, want = r.instances[0], expected["instances"][0]
    assert got.model == want["model"] and got.correspondences == want["correspondences"]
    np.testing.assert_allclose(got.pose.reshape(-1), want["pose"], rtol=0, atol=1e-5)
    np.testing.assert_allclose([got.fitness, got.rmse], [want["fitness"], want["rmse"]], rtol=0, atol=1e-5)
