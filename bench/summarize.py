#!/usr/bin/env python3
"""summarize.py -- the markdown summary of bench/bench-descriptors.sh: device rates, descriptor throughput beside
each descriptor's floor, Bologna recall of exact and approximate SHOT, and the kernel benchmarks' own lines.

    python3 bench/summarize.py --rates R.json [--descriptors D.json]... [--recall R.json]... [--kernels K.txt]...
                               [--command-log L.txt] > bench-descriptors.md

Inputs are what `bench/device_rates.py` and `grip-host bench descriptors|recall --json` print; a missing or
unreadable input is named in the summary instead of stopping it (Python 3 standard library only).

THE FLOOR MODEL. A descriptor's floor is the least time the device could take for K keypoints of support s on a
cloud of N points: max(compute floor, memory floor), where
  compute floor = K * flops per keypoint / the measured FP32 FMA rate (2 flops per FMA), and
  memory floor  = bytes that must cross DRAM at least once (the cloud in, xyz and normals: 24 N; the descriptors
                  out: 4 D K) / the measured copy bandwidth (which counts bytes read and written).
"gather" is the traffic if every support point were read from DRAM for every keypoint (24 B each, no cache
reuse): not a floor, a measure of how much the caches must carry. Estimated work per keypoint (s = median support
size; flops count an FMA as 2, a sqrt or atan2 as the ~10-20 instructions it issues):

| descriptor | flops per keypoint | where they go (per support point unless said)                                    |
|------------|--------------------|----------------------------------------------------------------------------------|
| shot       | 140 s              | LRF: weighted covariance, sign votes (~30); projection into the LRF, cosine of   |
|            |                    | the normal, quadrilinear interpolation into 32 x 11 bins (~110)                  |
| fpfh       | 45 s M/K + 75 s    | SPFH of the M = min(N, K s) points within r of a keypoint, s pairs each (Darboux |
|            |                    | frame, 3 angles: ~45 a pair); the 1/distance-weighted sum of 33 bins (~75)       |
| pfh        | 60 s (s - 1) / 2   | every pair of support points: Darboux frame, 4 features, a 125-bin vote (~60)     |
| spin_image | 40 s               | alpha, beta (~12), the support-angle test (~6), bilinear votes into 153 bins (~20) |
| normals    | 400 per cloud point | covariance of k = 10 points (~20 each), a 3x3 eigensolve (~200)                  |
"""
import argparse
import json
import os
import re
import sys

FLOPS_PER_KEYPOINT = {
    "shot": lambda s, n, k: 140 * s,
    "fpfh": lambda s, n, k: 45 * s * min(n, k * s) / k + 75 * s,
    "pfh": lambda s, n, k: 60 * s * (s - 1) / 2,
    "spin_image": lambda s, n, k: 40 * s,
}
NORMALS_FLOPS_PER_POINT = 400
CLOUD_BYTES_PER_POINT = 24   # xyz and normal, float32
GATHER_BYTES_PER_SUPPORT = 24


def load_json(path, problems):
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text.splitlines()[-1]) if text else None
    except (OSError, ValueError, IndexError) as e:
        problems.append("%s: %s" % (path, e))
        return None


def fmt(v, digits=3):
    if v is None:
        return "—"
    if isinstance(v, (str, int)):
        return str(v)
    if v != 0 and (abs(v) >= 1e6 or abs(v) < 1e-3):
        return "%.*g" % (digits, v)
    return "%.*f" % (digits if abs(v) < 100 else 1, v)


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    out += ["| " + " | ".join(fmt(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def flops_rate(rates):
    """FP32 flop/s the floors use: the FMA kernel's, else the FP32 matmul's; None when neither was measured."""
    r = rates or {}
    t = r.get("fp32_fma_tflops") or r.get("fp32_matmul_tflops")
    return t * 1e12 if t else None


def floor_ms(impl, dim, n, k, s, rates):
    """(compute floor, memory floor, gather) in ms, or Nones when the impl has no model or no rates."""
    flops, bw = flops_rate(rates), (rates or {}).get("copy_gbps")
    model = FLOPS_PER_KEYPOINT.get(impl)
    if not model or not flops or not bw or not s:
        return None, None, None
    compute = k * model(s, n, k) / flops * 1e3
    memory = (CLOUD_BYTES_PER_POINT * n + 4 * dim * k) / (bw * 1e9) * 1e3
    gather = GATHER_BYTES_PER_SUPPORT * s * k / (bw * 1e9) * 1e3
    return compute, memory, gather


def rates_section(rates):
    lines = ["## Device rates (bench/device_rates.py)", ""]
    if not rates:
        return lines + ["not measured", ""]
    lines.append("Device: %s, %s multiprocessors; medians of %s event-timed runs." %
                 (rates.get("device"), rates.get("multiprocessors"), rates.get("runs")))
    lines.append("")
    rows = [["device-to-device copy (read + write)", rates.get("copy_gbps"), "GB/s"],
            ["FP32 FMA kernel", rates.get("fp32_fma_tflops"), "TFLOP/s"],
            ["FP64 FMA kernel", rates.get("fp64_fma_tflops"), "TFLOP/s"],
            ["FP32 matmul, TF32 off", rates.get("fp32_matmul_tflops"), "TFLOP/s"],
            ["FP64 matmul", rates.get("fp64_matmul_tflops"), "TFLOP/s"]]
    lines += [table(["rate", "measured", "unit"], rows), ""]
    lines += ["note: %s" % n for n in rates.get("notes", [])]
    return lines + [""]


def throughput_rows(d, rates):
    n, k, s = d["points"], d["keypoints"], d["support"]["median"]
    rows = []
    for r in d["results"]:
        if "skipped" in r or "failed" in r:
            why = "skipped: " + r["skipped"] if "skipped" in r else "FAILED: " + r["failed"]
            rows.append([r["impl"], why] + [None] * 10)
            continue
        given = r["given_normals"]["median_ms"]
        on_gpu = r["device"] == "cuda"  # the floors come from the GPU's rates: no measure of a CPU run
        compute, memory, gather = floor_ms(r["impl"], r["dim"], n, k, s, rates) if on_gpu else (None,) * 3
        floor = max(compute, memory) if compute is not None else None
        rows.append([r["impl"], r["device"], r["dim"], "%d/%d" % (r["valid"], k), r["median_ms"],
                     r["descriptors_per_s"], given, r["given_normals"]["descriptors_per_s"], r["normals_ms"],
                     floor, gather, min(given, r["median_ms"]) / floor if floor else None])
        if on_gpu and rates and flops_rate(rates):
            normals_floor = max(NORMALS_FLOPS_PER_POINT * n / flops_rate(rates),
                                (12 + 16) * n / (rates["copy_gbps"] * 1e9)) * 1e3
            rows.append(["(normals of %s)" % r["impl"], r["device"], None, None, None, None, None, None,
                         r["normals_ms"], normals_floor, None,
                         r["normals_ms"] / normals_floor if r["normals_ms"] > 0 else None])
    return rows


def throughput_section(runs, rates):
    lines = ["## Throughput (grip-host bench descriptors)", ""]
    head = ["impl", "device", "D", "valid", "ms (normals computed)", "descr/s", "ms (normals given)", "descr/s",
            "normals ms", "floor ms", "gather ms", "x floor"]
    for path, d in runs:
        if not d:
            lines += ["%s: no result" % path, ""]
            continue
        lines.append("`%s`: undulating torus of %d points, %d host-given keypoints, radius %g, support mean %.1f "
                     "median %.0f points; medians of %d timed describes after a warm-up." %
                     (os.path.basename(path), d["points"], d["keypoints"], d["radius"], d["support"]["mean"],
                      d["support"]["median"], d["repeat"]))
        lines += ["", table(head, throughput_rows(d, rates)), ""]
    lines += ["Times are wall clock around the synchronous describe() call: host cloud in (uploaded), descriptors "
              "out (left on the device for CUDA stages, in host memory for CPU ones). \"x floor\" = the "
              "faster of the two medians (both runs do all of the descriptor's work) over the floor; GPU rows only, "
              "the floor being computed from the GPU's rates. \"normals ms\" is the difference of the two medians: "
              "what computing the normals costs, if the stage takes given normals at no cost.", ""]
    return lines


def recall_section(runs):
    lines = ["## Bologna retrieval recall (grip-host bench recall --sweep)", ""]
    head = ["setting", "device", "max_neighbors", "recall@1", "within 2 mr", "scene ms", "model ms", "match ms"]
    for path, d in runs:
        if not d:
            lines += ["%s: no result" % path, ""]
            continue
        lines.append("`%s`: model %s (%d points), scene %s; mesh resolution %.4g (|scene - T model| rms %.3f mr); "
                     "%d keypoints (leaf %.4g), radius %.4g, support median %.0f." %
                     (os.path.basename(path), os.path.basename(d["model"]), d["points"], os.path.basename(d["scene"]),
                      d["mesh_resolution"], d["truth_rms_mr"], d["keypoints"], d["leaf"], d["radius"],
                      d["support"]["median"]))
        rows = []
        for r in d["results"]:
            if "skipped" in r or "failed" in r:
                rows.append([r["setting"], "skipped: " + r["skipped"] if "skipped" in r else "FAILED: " + r["failed"]]
                            + [None] * 6)
            else:
                rows.append([r["setting"], r["device"], r["max_neighbors"] if r["max_neighbors"] >= 0 else None,
                             r["recall_at_1"], r["within_2mr"], r["scene_ms"], r["model_ms"], r["match_ms"]])
        lines += ["", table(head, rows), ""]
    return lines


def kernels_section(paths):
    lines = ["## Kernel benchmarks (bench/bench_*, CUDA events, medians)", ""]
    for p in paths:
        try:
            with open(p) as f:
                text = f.read().strip()
        except OSError as e:
            text = str(e)
        lines += ["`%s`:" % os.path.basename(p), "", "```", text[-4000:], "```", ""]
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates")
    ap.add_argument("--descriptors", action="append", default=[])
    ap.add_argument("--recall", action="append", default=[])
    ap.add_argument("--kernels", action="append", default=[])
    ap.add_argument("--command-log")
    a = ap.parse_args()
    problems = []
    rates = load_json(a.rates, problems) if a.rates else None
    out = ["# Descriptor benchmarks%s" % (" — " + rates["device"] if rates and rates.get("device") else ""), ""]
    out += rates_section(rates)
    out += throughput_section([(p, load_json(p, problems)) for p in a.descriptors], rates)
    out += recall_section([(p, load_json(p, problems)) for p in a.recall])
    out += kernels_section(a.kernels)
    model = re.search(r"THE FLOOR MODEL\..*", __doc__, re.S).group(0)
    out += ["## The floor model (bench/summarize.py)", "", model.strip(), ""]
    if a.command_log:
        try:
            with open(a.command_log) as f:
                out += ["## Commands and exit statuses", "", "```", f.read().strip(), "```", ""]
        except OSError as e:
            problems.append(str(e))
    if problems:
        out += ["## Problems", ""] + ["- %s" % p for p in problems] + [""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
