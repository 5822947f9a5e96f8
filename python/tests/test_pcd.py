"""The small PCD reader the tests and examples use."""

import numpy as np
import pytest

from grip import pcd

HEADER = ("# .PCD v0.7\nVERSION 0.7\nFIELDS x y z rgb\nSIZE 4 4 4 4\nTYPE F F F U\nCOUNT 1 1 1 1\nWIDTH {w}\n"
          "HEIGHT {h}\nVIEWPOINT 1 2 3 1 0 0 0\nPOINTS {n}\nDATA {data}\n")


def test_ascii_and_binary(tmp_path):
    xyz = np.array([[0.5, -1, 2], [np.nan, np.nan, np.nan], [3, 4, 5.25], [1, 1, 1]], np.float32)
    rgb = np.array([0x102030, 0, 0xFFFFFF, 0x0000FF], np.uint32)
    a = tmp_path / "a.pcd"
    a.write_text(HEADER.format(w=2, h=2, n=4, data="ascii") +
                 "".join(f"{p[0]} {p[1]} {p[2]} {c}\n" for p, c in zip(xyz, rgb)))
    b = tmp_path / "b.pcd"
    rec = np.zeros(4, dtype=[("xyz", "<f4", 3), ("rgb", "<u4")])
    rec["xyz"], rec["rgb"] = xyz, rgb
    b.write_bytes(HEADER.format(w=4, h=1, n=4, data="binary").encode() + rec.tobytes())
    for f, shape in ((a, (2, 2, 3)), (b, (4, 3))):
        c = pcd.read_pcd(f)
        assert c.xyz.shape == shape and c.viewpoint == (1, 2, 3) and c.name == str(f)
        np.testing.assert_array_equal(c.xyz.reshape(4, 3), xyz)
        assert c.rgb.reshape(4, 3)[0].tolist() == [0x10, 0x20, 0x30] and c.rgb.reshape(4, 3)[3].tolist() == [0, 0, 255]


def test_pure_python_lzf_agrees_with_liblzf(tutorial_files):
    milk = pcd.read_pcd(tutorial_files[0])  # binary_compressed
    data = open(tutorial_files[0], "rb").read()
    _, start = pcd._header(data, "milk.pcd")
    packed, unpacked = np.frombuffer(data, dtype="<u4", count=2, offset=start)
    src = data[start + 8:start + 8 + int(packed)]
    assert pcd.lzf_decompress(src, int(unpacked)) == pcd._lzf_decompress(src, int(unpacked))
    assert milk.xyz.shape == (12575, 3) and np.isfinite(milk.xyz).all()
    with pytest.raises(pcd.PCDError):
        pcd.lzf_decompress(src[:-5], int(unpacked))
