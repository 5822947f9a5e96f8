"""Point clouds as the plugin takes them: numpy arrays (N x 3 float32, or H x W x 3 for an organized cloud) or an
``open3d.geometry.PointCloud``, with optional normals, colours and the sensor's viewpoint."""

import ctypes
import sys

import numpy as np

from . import _abi


def _check_points(what, a, lead=None, cols=(3,), dtype=np.float32):
    """`a` as a C-contiguous array of `dtype` with rows of one of `cols` values, N x C or H x W x C; TypeError for a
    wrong type or dtype, ValueError for a wrong shape (or leading shape `lead`, that of the points)."""
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{what} must be a numpy array of {np.dtype(dtype).name}, not {type(a).__name__} "
                        f"(convert with np.asarray({what}, dtype=np.{np.dtype(dtype).name}))")
    if a.dtype != dtype:
        raise TypeError(f"{what} must be {np.dtype(dtype).name}, not {a.dtype} "
                        f"(convert with {what}.astype(np.{np.dtype(dtype).name}))")
    shapes = " or ".join(f"N x {c} or H x W x {c}" for c in cols)
    if a.ndim not in (2, 3) or a.shape[-1] not in cols:
        raise ValueError(f"{what} must be {shapes}, not of shape {a.shape}")
    if lead is not None and a.shape[:-1] != lead:
        raise ValueError(f"{what} has shape {a.shape}, but the points are {lead} x 3: one row per point")
    return np.ascontiguousarray(a)


class Cloud:
    """A point cloud for the plugin.

    xyz        float32, N x 3 (unorganized) or H x W x 3 (organized: a range image, rows of W points; a NaN
               coordinate marks a missing point, which keeps its place)
    normals    optional float32 of the same layout, 3 (or 4, curvature last) values a point; None: the descriptor
               stage computes them
    rgb        optional uint8 of the same layout, 3 values a point
    viewpoint  where the sensor was, in the cloud's frame (computed normals are flipped toward it); default 0, 0, 0
    name       optional, used in the plugin's error texts

    Other dtypes raise TypeError and other shapes ValueError; arrays that are not C-contiguous are copied.
    """

    def __init__(self, xyz, normals=None, rgb=None, viewpoint=(0.0, 0.0, 0.0), name=None):
        self.xyz = _check_points("xyz", xyz)
        lead = self.xyz.shape[:-1]
        self.normals = None if normals is None else _check_points("normals", normals, lead, (3, 4))
        self.rgb = None if rgb is None else _check_points("rgb", rgb, lead, (3,), np.uint8)
        if self.xyz.ndim == 3:
            self.height, self.width = self.xyz.shape[0], self.xyz.shape[1]
        else:
            self.height, self.width = 1, self.xyz.shape[0]
        if self.width * self.height == 0:
            raise ValueError(f"xyz has no points (shape {self.xyz.shape})")
        vp = np.asarray(viewpoint, dtype=np.float64)
        if vp.shape != (3,) or not np.all(np.isfinite(vp)):
            raise ValueError(f"viewpoint must be 3 finite numbers, not {viewpoint!r}")
        self.viewpoint = tuple(float(v) for v in vp)
        self.name = None if name is None else str(name)

    @property
    def n(self):
        """Number of points (width x height), missing ones included."""
        return self.width * self.height

    @property
    def organized(self):
        return self.height > 1

    def _struct(self):
        """The grip_cloud over this cloud's arrays (valid while this object lives)."""
        n = self.n

        def array(dtype, a):
            if a is None:
                return _abi.host_array(dtype, 0, 0, None)
            flat = a.reshape(n, a.shape[-1])
            return _abi.host_array(dtype, n, flat.shape[1], flat.ctypes.data)

        c = _abi.Cloud()
        c.struct_size = ctypes.sizeof(_abi.Cloud)
        c.width, c.height = self.width, self.height
        c.xyz = array(_abi.F32, self.xyz)
        c.normals = array(_abi.F32, self.normals)
        c.rgb = array(_abi.U8, self.rgb)
        c.name = self.name.encode() if self.name is not None else None
        c.viewpoint[:] = self.viewpoint
        return c

    def __repr__(self):
        shape = f"{self.height} x {self.width}" if self.organized else f"{self.width}"
        extras = [w for w, a in (("normals", self.normals), ("rgb", self.rgb)) if a is not None]
        return f"<grip.Cloud {shape} points{' with ' + ', '.join(extras) if extras else ''}" \
               f"{' ' + repr(self.name) if self.name else ''}>"


def _is_open3d(obj):
    module = type(obj).__module__ or ""
    if not module.startswith("open3d"):
        return False
    o3d = sys.modules.get("open3d")
    return o3d is not None and isinstance(obj, o3d.geometry.PointCloud)


def _from_open3d(pc, name=None):
    """open3d keeps float64 points and [0, 1] colours: converted to float32 and uint8."""
    xyz = np.asarray(pc.points, dtype=np.float64).astype(np.float32)
    normals = np.asarray(pc.normals, dtype=np.float64).astype(np.float32) if pc.has_normals() else None
    rgb = None
    if pc.has_colors():
        rgb = np.clip(np.rint(np.asarray(pc.colors, dtype=np.float64) * 255.0), 0, 255).astype(np.uint8)
    return Cloud(xyz, normals=normals, rgb=rgb, name=name)


def as_cloud(obj, name=None):
    """`obj` as a :class:`Cloud`: a Cloud as is, a numpy array as its xyz, an open3d PointCloud converted."""
    if isinstance(obj, Cloud):
        return obj
    if isinstance(obj, np.ndarray):
        return Cloud(obj, name=name)
    if _is_open3d(obj):
        return _from_open3d(obj, name)
    raise TypeError(f"a cloud must be a numpy array (N x 3 or H x W x 3 float32), a grip.Cloud or an "
                    f"open3d.geometry.PointCloud, not {type(obj).__name__}")
