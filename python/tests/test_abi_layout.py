"""grip._abi mirrors plugin.h byte for byte: every field's offset and every struct's size, as a C compiler lays
them out, equals ctypes'. Compiles a small program with $CC (else cc); skipped when there is none."""

import ctypes
import os
import shutil
import subprocess

import pytest

from grip import _abi

# ctypes mirror -> the C type it stands for
STRUCTS = {
    _abi.Array: "grip_array", _abi.Cloud: "grip_cloud", _abi.CtxOptions: "grip_ctx_options",
    _abi.CtxStats: "grip_ctx_stats", _abi.ParamInfo: "grip_param_info", _abi.KV: "grip_kv",
    _abi.Features: "grip_features", _abi.Index: "struct grip_index", _abi.Matches: "grip_matches",
    _abi.Hypothesis: "grip_hypothesis", _abi.Hypotheses: "grip_hypotheses", _abi.Verdict: "grip_verdict",
    _abi.Verdicts: "grip_verdicts", _abi.View: "grip_view", _abi.StageImpl: "grip_stage_impl",
    _abi.Plugin: "grip_plugin",
}


def _c_layout(repo, tmp_path):
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to lay plugin.h out")
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "plugin.h"', "int main(void) {"]
    for cls, c in STRUCTS.items():
        lines.append(f'    printf("{cls.__name__} sizeof %zu\\n", sizeof({c}));')
        for name, _ in cls._fields_:
            lines.append(f'    printf("{cls.__name__} {name} %zu\\n", offsetof({c}, {name}));')
    lines += ["    return 0;", "}"]
    src, exe = tmp_path / "layout.c", tmp_path / "layout"
    src.write_text("\n".join(lines) + "\n")
    subprocess.run([cc, "-std=c11", "-I", repo, str(src), "-o", str(exe)], check=True, capture_output=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    return {tuple(line.split()[:2]): int(line.split()[2]) for line in out.splitlines()}


def test_every_struct_matches_plugin_h(repo, tmp_path):
    c = _c_layout(repo, tmp_path)
    ours = {}
    for cls in STRUCTS:
        ours[(cls.__name__, "sizeof")] = ctypes.sizeof(cls)
        for name, _ in cls._fields_:
            ours[(cls.__name__, name)] = getattr(cls, name).offset
    assert ours == c


def test_abi_version_matches_plugin_h(repo):
    with open(os.path.join(repo, "plugin.h")) as f:
        text = f.read()
    assert f"#define GRIP_ABI_MAJOR {_abi.ABI_MAJOR}\n" in text
    assert f"#define GRIP_ABI_MINOR {_abi.ABI_MINOR}\n" in text
