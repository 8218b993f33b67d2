"""The portable build: the generated C compiled for baseline
x86-64 (-march=x86-64, no AVX) contains no AVX instruction and gives the
same kernels as a build for this machine; the default build (no -march)
carries target_clones copies for x86-64-v3 that the loader picks, with the
same results. On the mini model (seconds to compile); skipped off x86-64 or
without gcc and objdump."""
from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from reference.abi_ctypes import CFLAGS, Library, compile_shared
from tests.test_batch_kernels import MINI, _batch

from codegen.pipeline import generate_from_files
from codegen.build.module import X86_FLAGS
from codegen.read.model import load_model

pytestmark = [
    pytest.mark.builds,
    pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64") or shutil.which("gcc") is None,
                       reason="x86-64 with gcc only"),
]
BUILDS = {
    "baseline": ["-march=x86-64"],
    "clones": ["-DKK_TARGET_CLONES", *X86_FLAGS],
    "native": ["-march=native"],
}


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("portable")
    generate_from_files(*MINI, d)
    model = load_model(MINI[0])
    c = d / f"{model.name}_kernels.c"
    return {name: Library(model, compile_shared(c, d / f"lib_{name}.so", [*CFLAGS, "-O2", "-ffp-contract=fast", *f]))
            for name, f in BUILDS.items()}


def _disassembly(so: Path) -> str:
    if shutil.which("objdump") is None:
        pytest.skip("no objdump")
    return subprocess.run(["objdump", "-d", str(so)], capture_output=True, text=True, check=True).stdout


AVX = re.compile(r"%[yz]mm\d|\bv(fmadd\d*|add|mul|sub)[sp]d")


def test_baseline_build_has_no_avx(libs):
    text = _disassembly(Path(libs["baseline"].lib._name))
    assert "mini_compute_C_batch" in text  # the disassembly is of the kernels
    assert not AVX.search(text), "AVX in the baseline build"
    if "avx2" in Path("/proc/cpuinfo").read_text():  # the pattern does find AVX where there is some
        assert AVX.search(_disassembly(Path(libs["native"].lib._name)))


def _functions(text: str) -> dict:
    """{symbol: its disassembly} of objdump -d output."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            name = m.group(1)
            out[name] = []
        elif name:
            out[name].append(line)
    return {k: "\n".join(v) for k, v in out.items()}


def test_clones_build_has_avx2_and_avx512_copies(libs):
    text = _disassembly(Path(libs["clones"].lib._name))
    for arch in ("v3", "v4"):
        assert re.search(rf"<mini_compute_C\.arch_x86_64_{arch}>:", text), f"no x86-64-{arch} clone"
        # the trigonometric helper is cloned too, and each kernel clone calls its own copy
        assert re.search(rf"call\s+[0-9a-f]+ <sincos_q\.arch_x86_64_{arch}>", text)
    assert re.search(r"<mini_compute_C_batch\.default>:", text), "no baseline copy"
    assert re.search(r"%ymm\d", text)
    # the baseline copies, the ones a CPU without AVX runs, have no AVX instruction
    default = {k: v for k, v in _functions(text).items() if k.endswith(".default")}
    assert "sincos_q.default" in default and "mini_compute_A.default" in default
    assert not [k for k, v in default.items() if AVX.search(v)], "AVX in a default clone"
    # the AVX2 and AVX-512 copies of the batch kernels transpose in registers (KKSHUFFLES:
    # the preprocessor does not see a clone's target), and every copy checks the CPU first
    # (KKVECTOROK: the baseline copy loops over the scalar kernel where there is no AVX2)
    fns = _functions(text)
    for arch in ("v3", "v4"):
        for k in ("A", "C"):
            body = fns[f"mini_compute_{k}_batch.arch_x86_64_{arch}"]
            assert re.search(r"vunpck[lh]pd\s+.*%ymm", body), f"{k}_batch {arch}: no 256-bit transposition"
    assert all("__cpu_model" in fns[f"mini_compute_A_batch.{c}"] for c in ("default", "arch_x86_64_v3"))


def test_builds_agree(libs):
    rng = np.random.default_rng(4)
    ref = libs["native"]
    ndof = ref.model.ndof
    p = ref.default_params()
    q, dq = rng.uniform(-4, 4, (9, ndof)), rng.uniform(-2, 2, (9, ndof))
    for name in ("baseline", "clones"):
        lib = libs[name]
        for k in range(len(q)):
            for got, want in ((lib.compute_A(q[k], p), ref.compute_A(q[k], p)),
                              (lib.compute_C(q[k], dq[k], p), ref.compute_C(q[k], dq[k], p)),
                              (lib.compute_Q(q[k], p), ref.compute_Q(q[k], p))):
                np.testing.assert_allclose(got, want, rtol=0, atol=1e-14 * max(np.abs(want).max(), 1e-300))
        A = _batch(lib, "compute_A_batch", len(q), [q], p, ndof * ndof)
        np.testing.assert_allclose(A, _batch(ref, "compute_A_batch", len(q), [q], p, ndof * ndof),
                                   rtol=0, atol=1e-14 * np.abs(A).max())
