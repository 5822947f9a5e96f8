#!/usr/bin/env python3
"""3D exact k-NN side by side with bench/bench_kdtree3d_cuda.c: what a PyTorch user gets on the same GPU.

The same cases as the C bench: n = 1e6 points, a uniform cube [-1, 1]^3 and a 2.5D surface (a height field
sampled row by row, as a range scan); queries that are other points (uniform in the cube, or other samples of the
surface) or the points themselves; k = 1 and 10.
  * torch.cdist + min / topk, chunked over the queries (brute force on the GPU; the 3D mode of
    /work/shared/tools/knn_bench_torch.py, which runs only the uniform cube with random queries, k = 1);
  * scipy.spatial.cKDTree on all CPU cores (build and query), when scipy is there.
recall@1 of each against an fp64 brute force on the first 2048 queries (a tie at the nearest distance counts as
correct). CUDA events around each call, the median of 3 runs after a warm-up (at 1e6 one run, no warm-up: the
brute force takes seconds, and the whole script about two minutes on an H100). One line per measurement (key=value words).
Usage: python3 bench/knn_torch_3d.py [n] (default 1000000); needs torch with a CUDA device.
"""
import math
import os
import sys
import time

import torch

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000000
DEV = "cuda"
CHECKED = 2048
REPS, WARM = (1, 0) if N >= 1000000 else (3, 1)  # a 1e6 x 1e6 brute-force run takes 8 s (k = 1) to 18 s (k = 10)


def cube(n, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    return torch.rand(n, 3, generator=g, device=DEV) * 2 - 1


def height(x, y, g):
    noise = (torch.rand(x.shape, generator=g, device=DEV) * 2 - 1) * 1e-3
    return 0.3 * torch.sin(2.5 * x) * torch.cos(1.5 * y) + 0.1 * torch.sin(7.0 * x + 3.0 * y) + noise


def surface(n, seed, scan_order):
    """the C bench's surface: rows of a sqrt(n) x sqrt(n) jittered grid (scan_order), or uniform (x, y)."""
    g = torch.Generator(device=DEV).manual_seed(seed)
    if scan_order:
        w = math.ceil(math.sqrt(n))
        i = torch.arange(n, device=DEV)
        pixel = 2.0 / w
        x = -1 + pixel * ((i % w).float() + torch.rand(n, generator=g, device=DEV))
        y = -1 + pixel * ((i // w).float() + torch.rand(n, generator=g, device=DEV))
    else:
        x = torch.rand(n, generator=g, device=DEV) * 2 - 1
        y = torch.rand(n, generator=g, device=DEV) * 2 - 1
    return torch.stack([x, y, height(x, y, g)], 1).contiguous()


def timed(fn, reps, warm=1):
    for _ in range(warm):
        out = fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        out = fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2], out


def cdist_knn(Q, R, k, budget=4e9):
    step = max(1, int(budget // (4 * R.shape[0])))
    out = []
    for s in range(0, Q.shape[0], step):
        d = torch.cdist(Q[s:s + step], R, compute_mode="use_mm_for_euclid_dist")
        out.append(d.min(1, keepdim=True)[1] if k == 1 else torch.topk(d, k, dim=1, largest=False, sorted=True)[1])
    return torch.cat(out)


def truth_d1(Qs, R):
    """fp64 nearest squared distance of each query in Qs (brute force, chunked over the points)."""
    Q64, best = Qs.double(), torch.full((Qs.shape[0],), float("inf"), device=DEV, dtype=torch.float64)
    for j in range(0, R.shape[0], 1 << 14):  # 2048 x 16384 x 3 doubles: 0.8 GB at a time
        d = ((Q64[:, None, :] - R[j:j + (1 << 14)].double()[None, :, :]) ** 2).sum(2)
        best = torch.minimum(best, d.min(1)[0])
    return best


def recall1(first_idx, Qs, R, gd):
    d = ((Qs.double() - R[first_idx].double()) ** 2).sum(1)
    return float((d <= gd * (1 + 1e-9) + 1e-30).float().mean())


def line(**kw):
    print("knn_torch_3d " + " ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in kw.items()),
          flush=True)


def bench_cloud(name, R, Qother):
    for qname, Q in (("others", Qother), ("points", R)):
        gd = truth_d1(Q[:CHECKED], R)
        for k in (1, 10):
            ms, idx = timed(lambda: cdist_knn(Q, R, k), reps=REPS, warm=WARM)
            line(method="torch.cdist_mm", cloud=name, n=R.shape[0], queries=qname, m=Q.shape[0], k=k, median_ms=ms,
                 runs=REPS, recall1=recall1(idx[:CHECKED, 0], Q[:CHECKED], R, gd))
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        line(method="scipy.cKDTree", note="scipy absent")
        return
    Rh, Qh = R.cpu().numpy(), Qother.cpu().numpy()
    t0 = time.perf_counter()
    tree = cKDTree(Rh)
    build = (time.perf_counter() - t0) * 1e3
    line(method="scipy.cKDTree", cloud=name, n=R.shape[0], op="build", ms=build, threads=1)
    for qname, Qq in (("others", Qh), ("points", Rh)):
        for k in (1, 10):
            t0 = time.perf_counter()
            tree.query(Qq, k=k, workers=-1)
            line(method="scipy.cKDTree", cloud=name, n=R.shape[0], queries=qname, m=Qq.shape[0], k=k,
                 ms=(time.perf_counter() - t0) * 1e3, threads=os.cpu_count())


if __name__ == "__main__":
    print(f"device={torch.cuda.get_device_name(0)} torch={torch.__version__} n={N}", flush=True)
    bench_cloud("cube", cube(N, 1), cube(N, 2))
    bench_cloud("surface", surface(N, 3, True), surface(N, 4, False))
