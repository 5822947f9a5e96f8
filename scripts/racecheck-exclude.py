#!/usr/bin/env python3
"""racecheck-exclude.py BUILD_DIR -- the kernel-name substrings compute-sanitizer's racecheck may skip, on one line:
"cub" and each kernel of ours that uses no shared memory. Run from the repository root on a machine with cuobjdump.

Racecheck checks shared-memory accesses only, so a kernel with none loses nothing by being skipped, and its launches
then run at full speed. A kernel of ours uses shared memory when cuobjdump -res-usage gives it SHARED > 0 (static)
or when its body declares `extern __shared__` (dynamic, which -res-usage does not show; found in cuda/ by source).
A name is listed only when it is in no shared-memory kernel's mangled name, as --kernel-name-exclude kns= matches
substrings of mangled names. CUB's kernels are skipped whole ("cub"): the sorts and scans run unfiltered in the
cases that do not set this (docs/trust.md)."""
import glob, os, re, subprocess, sys

build = sys.argv[1] if len(sys.argv) > 1 else "build"
binaries = [os.path.join(build, "libgrip.so")] + sorted(glob.glob(os.path.join(build, "tests", "test_*")))

def dynamic_shared_kernels():
    """Kernels whose own body declares extern __shared__; a __device__ function declaring it makes every kernel of
    its file count as using shared memory (returned as the file's kernels)."""
    names = set()
    for path in glob.glob("cuda/**/*.cu*", recursive=True):
        text = open(path).read()
        heads = [(m.start(), m.group(1)) for m in re.finditer(r"__(global|device)__", text)]
        for m in re.finditer(r"extern\s+__shared__", text):
            before = [h for h in heads if h[0] < m.start()]
            if not before:
                continue
            start, kind = before[-1]
            if kind == "device":
                names |= set(re.findall(r"__global__[^(]*?(\w+)\s*\(", text.replace("__launch_bounds__", "")))
            else:
                head = re.sub(r"__launch_bounds__\s*\((?:[^()]|\([^()]*\))*\)", "", text[start:m.start()])
                names.add(re.search(r"(\w+)\s*\(", head).group(1))
    return names

usage = {}
for b in binaries:
    if not os.path.isfile(b):
        continue
    out = subprocess.run(["cuobjdump", "-res-usage", b], capture_output=True, text=True).stdout
    for m in re.finditer(r"Function ([^\s:]+):\s*\n\s*REG:\d+ STACK:\d+ SHARED:(\d+)", out):
        usage[m.group(1)] = max(usage.get(m.group(1), 0), int(m.group(2)))
mangled = sorted(usage)
demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True).stdout.split("\n")

def base_name(d):
    d = d.replace("(anonymous namespace)::", "")
    while True:
        e = re.sub(r"<[^<>]*>", "", d)
        if e == d:
            break
        d = e
    return d.split("(")[0].strip().split(" ")[-1].split("::")[-1]

dynamic = dynamic_shared_kernels()
shared, plain = set(), set()
for m, d in zip(mangled, demangled):
    name = d.split("(")[0]
    if "cub" in name or "thrust" in name:
        continue
    b = base_name(d)
    (shared if usage[m] > 0 or b in dynamic else plain).add(b)
plain -= shared
shared_mangled = [m for m, d in zip(mangled, demangled) if base_name(d) in shared]
print(" ".join(["cub"] + sorted(p for p in plain if not any(p in s for s in shared_mangled))))
