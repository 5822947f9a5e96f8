#!/usr/bin/env python3
"""Renders a `grip-host run|demo --overlay` PLY to a PNG, as the camera saw the scene: a pinhole projection
(Kinect-like intrinsics by default, which grip-host's generated scenes use; the scene's points are in the camera
frame), one z-buffer, the overlaid model points drawn 2 x 2 pixels and a few millimetres in front of the surface
they lie on so that they show. Standard library only (zlib writes the PNG).

    python3 docs/pictures/render_overlay.py overlay.ply overlay.png [--width 640 --height 480 --fx 525]
"""
import argparse
import struct
import zlib

TRUTH = (40, 220, 60)
PALETTE = {(230, 40, 40), (40, 90, 240), (250, 150, 20), (200, 40, 220), (20, 200, 220), (240, 230, 40),
           (140, 70, 20), (250, 120, 180)}


def read_ply(path):
    raw = open(path, "rb").read()
    end = raw.index(b"end_header\n") + len(b"end_header\n")
    header = raw[:end].decode()
    if "binary_little_endian" not in header or "property uchar red" not in header or "property float nx" in header:
        raise SystemExit(f"{path}: not a grip-host overlay (binary x y z red green blue)")
    n = int(header.split("element vertex ")[1].split()[0])
    return [struct.unpack_from("<fffBBB", raw, end + 15 * i) for i in range(n)]


def write_png(path, width, height, rgb):
    rows = b"".join(b"\x00" + bytes(rgb[y * width * 3:(y + 1) * width * 3]) for y in range(height))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    open(path, "wb").write(png)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ply")
    ap.add_argument("png")
    ap.add_argument("--width", type=int, default=640)
    ap.add_argument("--height", type=int, default=480)
    ap.add_argument("--fx", type=float, default=525.0)
    ap.add_argument("--lift", type=float, default=0.004, help="how far overlays are drawn in front (m)")
    a = ap.parse_args()
    w, h, f = a.width, a.height, a.fx
    cx, cy = (w - 1) / 2, (h - 1) / 2
    depth = [float("inf")] * (w * h)
    rgb = bytearray([255]) * (w * h * 3)
    for x, y, z, r, g, b in read_ply(a.ply):
        colour = (r, g, b)
        overlay = colour in PALETTE or colour == TRUTH
        if z <= 0:
            continue
        if overlay:  # instances in front of the truth, both in front of the scene
            z -= a.lift * (2 if colour in PALETTE else 1)
        u, v = int(round(f * x / z + cx)), int(round(f * y / z + cy))
        for du, dv in ((0, 0), (1, 0), (0, 1), (1, 1)) if overlay else ((0, 0),):
            uu, vv = u + du, v + dv
            if 0 <= uu < w and 0 <= vv < h and z < depth[vv * w + uu]:
                depth[vv * w + uu] = z
                rgb[3 * (vv * w + uu):3 * (vv * w + uu) + 3] = bytes(colour)
    write_png(a.png, w, h, rgb)


if __name__ == "__main__":
    main()
