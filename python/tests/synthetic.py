"""Generated clouds for tests that need no data files: an asymmetric object made of boxes and a sphere, sampled
on its surface, and a scene that holds it at a known pose on a table beside a distractor."""

import numpy as np


def _box(rng, lo, hi, spacing):
    """Points on the six faces of the axis-aligned box [lo, hi], about `spacing` apart."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    faces = []
    for axis in range(3):
        u, v = [a for a in range(3) if a != axis]
        area = (hi[u] - lo[u]) * (hi[v] - lo[v])
        n = max(4, int(area / spacing ** 2))
        for side in (lo[axis], hi[axis]):
            p = np.empty((n, 3))
            p[:, axis] = side
            p[:, u] = rng.uniform(lo[u], hi[u], n)
            p[:, v] = rng.uniform(lo[v], hi[v], n)
            faces.append(p)
    return np.concatenate(faces)


def _sphere(rng, centre, radius, spacing):
    n = max(8, int(4 * np.pi * radius ** 2 / spacing ** 2))
    d = rng.normal(size=(n, 3))
    return np.asarray(centre) + radius * d / np.linalg.norm(d, axis=1, keepdims=True)


def model(seed=1, spacing=0.002):
    """An L of two boxes with a ball on one end, about 12 x 8 x 6 cm, as float32 N x 3."""
    rng = np.random.default_rng(seed)
    parts = [_box(rng, (0, 0, 0), (0.12, 0.04, 0.03), spacing),
             _box(rng, (0, 0.04, 0), (0.04, 0.08, 0.06), spacing),
             _sphere(rng, (0.12, 0.02, 0.045), 0.018, spacing)]
    return np.concatenate(parts).astype(np.float32)


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def scene(model_points, seed=2, spacing=0.002, noise=0.0003):
    """(scene float32 N x 3, true pose 4 x 4): the model's points moved by a known pose, on a table, beside a ball,
    with a little noise on every point."""
    rng = np.random.default_rng(seed)
    pose = np.eye(4)
    pose[:3, :3] = rotation((0.2, 0.3, 1.0), 0.7)
    pose[:3, 3] = (0.05, -0.02, 0.4)
    obj = model_points.astype(np.float64) @ pose[:3, :3].T + pose[:3, 3]
    table_n = int(0.25 * 0.25 / spacing ** 2)
    table = np.column_stack([rng.uniform(-0.08, 0.17, table_n), rng.uniform(-0.12, 0.13, table_n),
                             np.full(table_n, obj[:, 2].min() - 0.001)])
    ball = _sphere(rng, (-0.08, 0.1, obj[:, 2].min() + 0.03), 0.03, spacing)
    pts = np.concatenate([obj, table, ball])
    pts += rng.normal(scale=noise, size=pts.shape)
    return pts.astype(np.float32), pose
