"""What the Python layer costs per run, beside grip-host, on the same clouds and config:
    python3 python/examples/overhead.py GRIP_HOST CONFIG MODEL.pcd SCENE.pcd [RUNS] [--set section.key=value]...

In one process each, after one warm-up run: grip-host's `run --repeat RUNS` (median time of each stage; their sum)
and RUNS calls of Pipeline.recognise() (median wall time of the call, and median sum of the same stage times, taken
around the plugin's calls as grip-host takes them). Then whole processes, RUNS of each: grip-host run, and python3
reading the same files and recognising (import, PCD reading and plugin loading included). Prints medians in ms."""

import json
import os
import statistics
import subprocess
import sys
import time

import grip
from grip.pcd import read_pcd

host, config, model_file, scene_file = sys.argv[1:5]
runs = int(sys.argv[5]) if len(sys.argv) > 5 and not sys.argv[5].startswith("--") else 5
sets = [a for a in sys.argv[5:] if a != "--set" and "=" in a]
set_args = [x for s in sets for x in ("--set", s)]
stages = list(grip.KINDS)


def host_run(repeat):
    out = subprocess.run([host, "run", "--config", config, *set_args, "--model", model_file, "--scene", scene_file,
                          "--json", "--repeat", str(repeat)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


# in-process: grip-host (--repeat gives each stage's median; one extra run as warm-up is not possible there, so the
# median of RUNS + 1 is taken) and Python
c = host_run(runs + 1)
c_stage_sum = sum(c["timings_ms"][s] for s in stages)

milk, scene = read_pcd(model_file), read_pcd(scene_file)
walls, sums = [], []
with grip.Pipeline(config, overrides=sets) as p:
    p.recognise([milk], scene)  # warm-up
    for _ in range(runs):
        t = time.perf_counter()
        r = p.recognise([milk], scene)
        walls.append((time.perf_counter() - t) * 1e3)
        sums.append(sum(r.timings_ms[s] for s in stages))
assert r.to_dict()["counts"] == c["counts"], (r.to_dict()["counts"], c["counts"])
overheads = [w - s for w, s in zip(walls, sums)]

# whole processes
script = (f"import grip; from grip.pcd import read_pcd; "
          f"grip.recognise([read_pcd({model_file!r})], read_pcd({scene_file!r}), {config!r}, overrides={sets!r})")
c_proc, py_proc = [], []
for _ in range(runs):
    t = time.perf_counter()
    host_run(1)
    c_proc.append((time.perf_counter() - t) * 1e3)
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", script], check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    py_proc.append((time.perf_counter() - t) * 1e3)

med = statistics.median
print(f"counts {r.to_dict()['counts']}; {runs} runs each; plugin {grip.load_plugin().path}")
c_stages = ", ".join(f"{s} {c['timings_ms'][s]:.1f}" for s in stages)
print(f"grip-host, in process: stage medians {c_stages}; sum {c_stage_sum:.1f}")
print(f"Python, in process:    stage sum {med(sums):.1f}; recognise() wall {med(walls):.1f}; "
      f"Python overhead {med(overheads):.2f} (min {min(overheads):.2f}, max {max(overheads):.2f})")
print(f"whole process:         grip-host {med(c_proc):.0f}; python3 {med(py_proc):.0f}")
