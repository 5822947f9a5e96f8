#!/usr/bin/env python3
"""device_rates.py -- the measured rates of the GPU the descriptor floors are computed from, as one JSON object.

    python3 bench/device_rates.py [--device N] [--runs R]

Each rate is the median of R timed runs (CUDA events) after warm-ups:
  copy_gbps            device-to-device copy of a 1 GiB tensor, counting the bytes read AND written (GB/s = 1e9 B/s)
  fp32_fma_tflops      FP32 fused multiply-adds of a compute-bound CuPy kernel (8 independent FMA chains a thread,
                       all in registers), 2 flops per FMA
  fp64_fma_tflops      the same kernel in FP64
  fp32_matmul_tflops   torch.matmul 8192^3 in FP32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 = False),
                       2 n^3 flops: what a tuned FP32 kernel reaches, no tensor cores
  fp64_matmul_tflops   the same in FP64 (4096^3); on Hopper cuBLAS runs it on the FP64 tensor cores (DMMA), which
                       no switch turns off: it may exceed the FMA kernel's FP64 rate
A rate that cannot be measured (no CuPy, say) is null, with the reason under "notes". bench/summarize.py reads
this object and the descriptor benchmark's to put each descriptor beside its floor.
"""
import argparse
import json
import statistics
import sys

FMA_CHAINS = 8       # independent accumulators a thread: enough to hide the FMA pipeline's latency
FMA_STEPS = 4096     # iterations of the chain loop: each does FMA_CHAINS FMAs
FMA_THREADS = 256
FMA_BLOCKS_PER_SM = 32

FMA_SOURCE = r"""
extern "C" __global__ void fma_chains(const T *seed, T *out, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T a = seed[0] + (T)i * (T)1e-7, b = seed[1];
    T x0 = a, x1 = a + (T)1, x2 = a + (T)2, x3 = a + (T)3, x4 = a + (T)4, x5 = a + (T)5, x6 = a + (T)6, x7 = a + (T)7;
    for (int s = 0; s < steps; ++s) {
        x0 = FMA(x0, b, a); x1 = FMA(x1, b, a); x2 = FMA(x2, b, a); x3 = FMA(x3, b, a);
        x4 = FMA(x4, b, a); x5 = FMA(x5, b, a); x6 = FMA(x6, b, a); x7 = FMA(x7, b, a);
    }
    out[i] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7; /* keeps every chain alive */
}
"""


def time_ms(torch, fn, runs, warmups=3):
    """Median milliseconds of fn() over `runs` event-timed calls after `warmups` untimed ones."""
    for _ in range(warmups):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def copy_rate(torch, runs):
    n = 1 << 28  # 2^28 floats: 1 GiB
    src = torch.ones(n, dtype=torch.float32, device="cuda")
    dst = torch.empty_like(src)
    ms = time_ms(torch, lambda: dst.copy_(src), runs)
    return 2 * src.numel() * src.element_size() / (ms * 1e-3) / 1e9


def matmul_rate(torch, dtype, n, runs):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    a = torch.rand(n, n, dtype=dtype, device="cuda")
    b = torch.rand(n, n, dtype=dtype, device="cuda")
    ms = time_ms(torch, lambda: torch.matmul(a, b), runs)
    return 2 * n ** 3 / (ms * 1e-3) / 1e12


def fma_rate(torch, cupy, ctype, runs):
    fma = "fmaf" if ctype == "float" else "fma"
    kernel = cupy.RawKernel("typedef %s T;\n#define FMA %s\n%s" % (ctype, fma, FMA_SOURCE), "fma_chains")
    dtype = cupy.float32 if ctype == "float" else cupy.float64
    sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    blocks = sms * FMA_BLOCKS_PER_SM
    seed = cupy.asarray([0.5, 0.999], dtype=dtype)
    out = cupy.empty(blocks * FMA_THREADS, dtype=dtype)
    launch = lambda: kernel((blocks,), (FMA_THREADS,), (seed, out, cupy.int32(FMA_STEPS)))
    ms = time_ms(torch, launch, runs)  # both launch on the legacy default stream: torch's events time CuPy's kernel
    fmas = blocks * FMA_THREADS * FMA_STEPS * FMA_CHAINS
    return 2 * fmas / (ms * 1e-3) / 1e12


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    out = {"device": None, "copy_gbps": None, "fp32_fma_tflops": None, "fp64_fma_tflops": None,
           "fp32_matmul_tflops": None, "fp64_matmul_tflops": None, "runs": args.runs, "notes": []}
    try:
        import torch
    except ImportError as e:
        out["notes"].append("no PyTorch: %s" % e)
        print(json.dumps(out))
        return 1
    if not torch.cuda.is_available():
        out["notes"].append("PyTorch sees no CUDA device")
        print(json.dumps(out))
        return 1
    torch.cuda.set_device(args.device)
    props = torch.cuda.get_device_properties(args.device)
    out["device"] = props.name
    out["multiprocessors"] = props.multi_processor_count
    out["copy_gbps"] = copy_rate(torch, args.runs)
    out["fp32_matmul_tflops"] = matmul_rate(torch, torch.float32, 8192, args.runs)
    out["fp64_matmul_tflops"] = matmul_rate(torch, torch.float64, 4096, args.runs)
    try:
        import cupy
        with cupy.cuda.Device(args.device):
            out["fp32_fma_tflops"] = fma_rate(torch, cupy, "float", args.runs)
            out["fp64_fma_tflops"] = fma_rate(torch, cupy, "double", args.runs)
    except Exception as e:  # CuPy missing or unable to compile: the matmul rates still stand
        out["notes"].append("no FMA kernel rates: %s: %s" % (type(e).__name__, e))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
