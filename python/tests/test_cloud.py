"""What a cloud may be: float32 N x 3 or H x W x 3 numpy arrays, grip.Cloud, open3d PointCloud; nothing else."""

import sys
import types

import numpy as np
import pytest

import grip


def test_unorganized_and_organized():
    c = grip.as_cloud(np.zeros((10, 3), np.float32))
    assert (c.width, c.height, c.n, c.organized) == (10, 1, 10, False)
    c = grip.as_cloud(np.zeros((4, 5, 3), np.float32))
    assert (c.width, c.height, c.n, c.organized) == (5, 4, 20, True)
    c = grip.Cloud(np.zeros((3, 3), np.float32)[:, [2, 1, 0]])  # not contiguous: copied
    assert c.xyz.flags.c_contiguous


@pytest.mark.parametrize("bad", [np.zeros((10, 3)), np.zeros((10, 3), np.float16), np.zeros((10, 3), np.int32)])
def test_wrong_dtype_is_a_type_error(bad):
    with pytest.raises(TypeError, match=f"xyz must be float32, not {bad.dtype}.*astype"):
        grip.as_cloud(bad)


@pytest.mark.parametrize("shape", [(10,), (10, 2), (10, 4), (2, 3, 4), (1, 2, 3, 3)])
def test_wrong_shape_is_a_value_error(shape):
    with pytest.raises(ValueError, match="xyz must be N x 3 or H x W x 3"):
        grip.as_cloud(np.zeros(shape, np.float32))


def test_other_mistakes():
    with pytest.raises(TypeError, match="numpy array"):
        grip.as_cloud([[0.0, 0.0, 0.0]])
    with pytest.raises(TypeError, match="xyz must be a numpy array"):
        grip.Cloud([[0.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="no points"):
        grip.as_cloud(np.zeros((0, 3), np.float32))
    xyz = np.zeros((10, 3), np.float32)
    with pytest.raises(ValueError, match="normals has shape"):
        grip.Cloud(xyz, normals=np.zeros((9, 3), np.float32))
    with pytest.raises(TypeError, match="rgb must be uint8"):
        grip.Cloud(xyz, rgb=np.zeros((10, 3), np.float32))
    with pytest.raises(ValueError, match="viewpoint"):
        grip.Cloud(xyz, viewpoint=(0, 0))
    grip.Cloud(xyz, normals=np.zeros((10, 4), np.float32), rgb=np.zeros((10, 3), np.uint8), viewpoint=(1, 2, 3))


def test_open3d_point_cloud(monkeypatch):
    """An open3d PointCloud (float64 points, [0, 1] colours) is converted; a stand-in module plays open3d."""
    o3d = types.ModuleType("open3d")
    o3d.geometry = types.SimpleNamespace()

    class PointCloud:
        def __init__(self, points, colors=None):
            self.points, self.colors, self.normals = points, colors if colors is not None else [], []

        def has_normals(self):
            return len(self.normals) > 0

        def has_colors(self):
            return len(self.colors) > 0

    PointCloud.__module__ = "open3d.cpu.pybind.geometry"
    o3d.geometry.PointCloud = PointCloud
    monkeypatch.setitem(sys.modules, "open3d", o3d)
    pc = PointCloud(np.arange(12, dtype=np.float64).reshape(4, 3), colors=np.full((4, 3), 0.5))
    c = grip.as_cloud(pc)
    assert c.xyz.dtype == np.float32 and c.xyz.shape == (4, 3) and c.xyz[3, 2] == 11
    assert c.rgb.dtype == np.uint8 and c.rgb[0, 0] == 128 and c.normals is None


def test_describe_checks_its_inputs(plugin):
    with plugin.context() as ctx, ctx.stage("descriptor", "shot", device="cpu") as shot:
        with pytest.raises(TypeError):
            shot.describe(np.zeros((100, 3)))
        with pytest.raises(ValueError, match="role"):
            shot.describe(np.zeros((100, 3), np.float32), role="both")
        with pytest.raises(ValueError, match="keypoint index 100 is out of range"):
            shot.describe(np.zeros((100, 3), np.float32), keypoints=[100])
        nan = np.full((50, 3), np.nan, np.float32)
        with pytest.raises(grip.GripError) as e:  # the plugin's own check: no finite point
            shot.describe(nan)
        assert e.value.status == grip.Status.EINVAL and e.value.message


def test_normals_choice(plugin):
    """A cloud's own normals, 2 pi long as some scanning tools write them: `normals = auto` rescales them to unit
    length and says so, `compute` ignores them, `file` refuses a cloud without normals with the plugin's text."""
    g = np.linspace(-0.05, 0.05, 30, dtype=np.float32)
    x, y = np.meshgrid(g, g)
    xyz = np.stack([x.ravel(), y.ravel(), np.full(x.size, 1.0, np.float32)], axis=1)
    up = np.tile(np.array([0, 0, -2 * np.pi], np.float32), (len(xyz), 1))
    with plugin.context() as ctx:
        for choice, source in (("auto", "cloud_rescaled"), ("file", "cloud_rescaled"), ("compute", "computed")):
            with ctx.stage("descriptor", "shot", device="cpu", normals=choice, keypoints="all") as shot:
                f = shot.describe(grip.Cloud(xyz, normals=up))
                assert f.normals_source == source
                if choice != "compute":
                    np.testing.assert_array_equal(f.normals[:, :3], np.tile([0, 0, -1], (len(xyz), 1)))
        with ctx.stage("descriptor", "shot", device="cpu", normals="file") as shot:
            with pytest.raises(grip.GripError, match="descriptor.normals = file: cloud .* carries no normals") as e:
                shot.describe(xyz)
            assert e.value.status == grip.Status.ECONFIG
