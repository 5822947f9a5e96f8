"""A small reader for PCL's PCD files (v0.7 and the older headers): DATA ascii, binary and binary_compressed, into a
:class:`grip.Cloud`. It keeps x y z (any numeric TYPE/SIZE, the first of a COUNT), normal_x/y/z and packed rgb /
rgba, the organization (WIDTH x HEIGHT) and the VIEWPOINT's translation, as grip-host's reader does; it checks less
than grip-host's reader (host-example/io/), which says exactly what is wrong with a malformed file.

binary_compressed data is LZF: decompressed by the system's liblzf when ctypes finds it, else in Python (a few
seconds for a 640 x 480 cloud).
"""

import ctypes
import ctypes.util
import os

import numpy as np

from .cloud import Cloud

_TYPES = {("F", 4): "<f4", ("F", 8): "<f8", ("U", 1): "u1", ("U", 2): "<u2", ("U", 4): "<u4", ("U", 8): "<u8",
          ("I", 1): "i1", ("I", 2): "<i2", ("I", 4): "<i4", ("I", 8): "<i8"}


class PCDError(ValueError):
    """A PCD file this reader cannot read."""


def _header(data, path):
    fields, at = {}, 0
    while True:
        end = data.find(b"\n", at)
        if end < 0:
            raise PCDError(f"{path}: no DATA line in the header")
        line = data[at:end].decode("ascii", "replace").strip()
        at = end + 1
        if not line or line.startswith("#"):
            continue
        key, *values = line.split()
        fields[key.upper()] = values
        if key.upper() == "DATA":
            return fields, at


def _lzf_decompress(src, size):
    lib = ctypes.util.find_library("lzf")
    if lib:
        try:
            lzf = ctypes.CDLL(lib)
            out = ctypes.create_string_buffer(size or 1)
            got = lzf.lzf_decompress(src, ctypes.c_uint(len(src)), out, ctypes.c_uint(size))
            if got == size:
                return out.raw[:size]
        except (OSError, AttributeError):
            pass
    return lzf_decompress(src, size)


def lzf_decompress(src, size):
    """LZF (liblzf's format) in pure Python: literal runs of 1-32 bytes and back references of 3-264 bytes."""
    try:
        return _lzf(src, size)
    except IndexError:  # a control byte promises more input than there is
        raise PCDError("corrupt LZF data (truncated)") from None


def _lzf(src, size):
    out = bytearray(size)
    ip = op = 0
    n = len(src)
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:
            run = ctrl + 1
            if op + run > size or ip + run > n:
                raise PCDError("corrupt LZF data (a literal run overflows)")
            out[op:op + run] = src[ip:ip + run]
            ip += run
            op += run
            continue
        run = ctrl >> 5
        ref = op - ((ctrl & 0x1F) << 8) - 1
        if run == 7:
            run += src[ip]
            ip += 1
        ref -= src[ip]
        ip += 1
        run += 2
        if ref < 0 or op + run > size:
            raise PCDError("corrupt LZF data (a back reference out of range)")
        if op - ref >= run:
            out[op:op + run] = out[ref:ref + run]
        else:  # overlapping: the run repeats the bytes it is writing
            for i in range(run):
                out[op + i] = out[ref + i]
        op += run
    if op != size:
        raise PCDError(f"LZF data decompresses to {op} bytes, the header says {size}")
    return bytes(out)


def read_pcd(path):
    """The cloud in the PCD file at `path` (organized H x W x 3 when HEIGHT > 1), named after the file."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    h, start = _header(data, path)
    names = h.get("FIELDS", [])
    n_fields = len(names)
    sizes = [int(s) for s in h.get("SIZE", ["4"] * n_fields)]
    types = [t.upper() for t in h.get("TYPE", ["F"] * n_fields)]
    counts = [int(c) for c in h.get("COUNT", ["1"] * n_fields)]
    if not (len(sizes) == len(types) == len(counts) == n_fields) or n_fields == 0:
        raise PCDError(f"{path}: FIELDS, SIZE, TYPE and COUNT disagree in length")
    points = int(h.get("POINTS", ["0"])[0])
    width = int(h.get("WIDTH", [str(points)])[0])
    height = int(h.get("HEIGHT", ["1"])[0])
    if width * height != points:
        raise PCDError(f"{path}: POINTS {points} is not WIDTH x HEIGHT ({width} x {height})")
    kind = h["DATA"][0].lower() if h["DATA"] else ""
    dtypes = []
    for name, size, t, count in zip(names, sizes, types, counts):
        if (t, size) not in _TYPES:
            raise PCDError(f"{path}: field '{name}' has TYPE {t} SIZE {size}, which this reader does not know")
        dtypes.append((name, np.dtype(_TYPES[t, size]), count))

    columns = {}
    if kind == "ascii":
        text = data[start:].split()
        row = sum(c for _, _, c in dtypes)
        if len(text) != points * row:
            raise PCDError(f"{path}: {len(text)} ascii values, {points} points x {row} values expected")
        values = np.array(text, dtype=np.float64).reshape(points, row) if points else np.empty((0, row))
        at = 0
        for name, dt, count in dtypes:
            columns[name] = values[:, at].astype(dt)
            at += count
    elif kind == "binary":
        record = np.dtype([(f"f{i}", dt, (count,)) for i, (_, dt, count) in enumerate(dtypes)])
        if len(data) - start < points * record.itemsize:
            raise PCDError(f"{path}: binary data truncated")
        recs = np.frombuffer(data, dtype=record, count=points, offset=start)
        for i, (name, _, _) in enumerate(dtypes):
            columns[name] = recs[f"f{i}"][:, 0]
    elif kind == "binary_compressed":
        packed, unpacked = np.frombuffer(data, dtype="<u4", count=2, offset=start)
        soa = _lzf_decompress(data[start + 8:start + 8 + int(packed)], int(unpacked))
        at = 0
        for name, dt, count in dtypes:
            if name == "_":  # padding is not stored compressed
                continue
            block = np.frombuffer(soa, dtype=dt, count=points * count, offset=at).reshape(points, count)
            columns[name] = block[:, 0]
            at += points * count * dt.itemsize
    else:
        raise PCDError(f"{path}: DATA '{kind}' is not ascii, binary or binary_compressed")

    if not all(k in columns for k in "xyz"):
        raise PCDError(f"{path}: no x y z fields")
    shape = (height, width, 3) if height > 1 else (points, 3)
    xyz = np.stack([columns[k].astype(np.float32) for k in "xyz"], axis=1).reshape(shape)
    normals = None
    if all(k in columns for k in ("normal_x", "normal_y", "normal_z")):
        normals = np.stack([columns[k].astype(np.float32) for k in ("normal_x", "normal_y", "normal_z")],
                           axis=1).reshape(shape)
    rgb = None
    packed_rgb = columns.get("rgb", columns.get("rgba"))
    if packed_rgb is not None and packed_rgb.dtype.itemsize == 4:
        bits = np.ascontiguousarray(packed_rgb).view("<u4")
        rgb = np.stack([(bits >> 16) & 0xFF, (bits >> 8) & 0xFF, bits & 0xFF], axis=1).astype(np.uint8).reshape(shape)
    viewpoint = [float(v) for v in h.get("VIEWPOINT", ["0", "0", "0"])[:3]]
    return Cloud(xyz, normals=normals, rgb=rgb, viewpoint=viewpoint, name=path)
