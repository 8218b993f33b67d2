"""The installed Python module on a CPU without AVX, under an emulator.

The extension is built like the wheel (setup.py: -O3, -DKK_TARGET_CLONES, no -march), so
every kernel has a baseline copy and an x86-64-v3 copy picked at load time. Here the same
interpreter runs the module under `qemu-x86_64 -cpu Nehalem` (SSE4.2, no AVX): the loader
must pick the baseline copies, and every kernel must give this machine's results. A control
first shows that the emulator really refuses AVX2/FMA code (it dies with SIGILL), so a build
that used AVX unconditionally would fail here. Skipped without qemu-user (`apt-get install
qemu-user`; `.ci/run` installs it when it can) or off x86-64.
"""
from __future__ import annotations

import platform
import shutil
import subprocess
import sys

import numpy as np
import pytest

QEMU = shutil.which("qemu-x86_64")
pytestmark = [
    pytest.mark.system,
    pytest.mark.skipif(platform.machine() != "x86_64" or QEMU is None or shutil.which("gcc") is None,
                       reason="needs x86-64, gcc and qemu-user (qemu-x86_64)"),
]
BASELINE_CPU = "Nehalem"  # x86-64 with SSE4.2, no AVX, AVX2 or FMA

AVX2_PROBE = r"""
#include <immintrin.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    (void)argv;
    __m256d a = _mm256_set1_pd((double)argc);
    a = _mm256_fmadd_pd(a, a, a);
    double o[4];
    _mm256_storeu_pd(o, a);
    printf("%g\n", o[0]);
    return 0;
}
"""

# Every kernel of the module at a few fixed states, written to an .npz (argv[1]).
EVALUATE = r"""
import sys
import numpy as np
import krang_kernels as kk

rng = np.random.default_rng(7)
n = kk.N_DOF
q = rng.uniform(-np.pi, np.pi, (5, n))
dq = rng.uniform(-2.0, 2.0, (5, n))
ddq = rng.uniform(-3.0, 3.0, (5, n))
out = dict(A=kk.compute_A(q), C=kk.compute_C(q, dq), Q=kk.compute_Q(q), h=kk.bias(q, dq),
           tau=kk.inverse_dynamics(q, dq, ddq), f=kk.friction(dq))
out["ddq"] = kk.forward_dynamics(q, dq, out["tau"])
for ee in kk.END_EFFECTORS:
    for frame in ("world", "local"):
        out[f"J_{ee}_{frame}"] = np.stack([kk.jacobian(x, ee, frame) for x in q])
    out[f"T_{ee}"] = np.stack([kk.fk(x, ee) for x in q])
    out[f"a_{ee}"] = np.stack([kk.jdot_qdot(x, v, ee) for x, v in zip(q, dq)])
np.savez(sys.argv[1], **out)
"""


def _run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


def test_emulator_refuses_avx2(tmp_path):
    src, exe = tmp_path / "probe.c", tmp_path / "probe"
    src.write_text(AVX2_PROBE)
    subprocess.run(["gcc", "-O2", "-mavx2", "-mfma", str(src), "-o", str(exe)], check=True)
    if "avx2" in open("/proc/cpuinfo").read():
        assert _run([str(exe)]).returncode == 0  # the probe itself is fine on this machine
    r = _run([QEMU, "-cpu", BASELINE_CPU, str(exe)])
    assert r.returncode in (-4, 132) or "Illegal instruction" in r.stderr, (r.returncode, r.stderr[-300:])


def test_module_on_baseline_cpu_matches_this_machine(tmp_path):
    script = tmp_path / "evaluate.py"
    script.write_text(EVALUATE)
    host, emu = tmp_path / "host.npz", tmp_path / "emu.npz"
    r = _run([sys.executable, str(script), str(host)])
    assert r.returncode == 0, r.stderr[-2000:]
    r = _run([QEMU, "-cpu", BASELINE_CPU, sys.executable, str(script), str(emu)])
    assert r.returncode == 0, f"the module fails on a {BASELINE_CPU} CPU: {r.stderr[-2000:]}"
    a, b = np.load(host), np.load(emu)
    assert sorted(a.files) == sorted(b.files)
    for k in a.files:
        # the two copies may contract multiply-adds differently: rounding-level differences
        scale = 1.0 + np.abs(a[k]).max()
        assert np.abs(a[k] - b[k]).max() <= 1e-12 * scale, k


# constrained_dynamics_derivatives at one state, its six outputs printed (one number a line)
CONTACT_DRIVER = r"""
#include <stdio.h>
#include "LNAME_kernels.h"
static const double q[] = {Q}, v[] = {V}, tau[] = {TAU}, ref[] = {REF};
int main(void)
{
    static double p[UNAME_NP], out[6][UNAME_NDOF * UNAME_NDOF];
    LNAME_default_params(p);
    LNAME_constrained_dynamics_derivatives(q, v, tau, p, MASK, KP, KD, 0.0, ref, out[0], out[1], out[2], out[3],
                                          out[4], out[5]);
    for (int k = 0; k < 6; ++k) {
        const int n = (k < 3 ? UNAME_NDOF : UNAME_NCROWS) * UNAME_NDOF;
        for (int i = 0; i < n; ++i) {
            printf("%.17g\n", out[k][i]);
        }
    }
    return 0;
}
"""


def test_contact_derivatives_portable_build_on_both_copies(tmp_path):
    """A portable build's constrained_dynamics_derivatives has a baseline copy of its dense passes
    and an AVX2 + FMA one, picked at run time (templates/c/contacts.c.j2): both give the
    native module's derivatives (which tests/test_contact_dynamics.py checks against Pinocchio).
    Solo12 with a flat and a point foot active and the Baumgarte gains on: every branch of the
    passes (the 6d placement error's Jacobian, the base's translation columns)."""
    import re
    from concurrent.futures import ThreadPoolExecutor

    import codegen
    from codegen.build.flags import FLAGS, X86_FLAGS
    from reference.robot_data import robots_dir
    contacts = ["FL_FOOT:6d", "FR_FOOT:3d", "HL_FOOT:3d", "HR_FOOT:6d"]
    kk = codegen.import_urdf(robots_dir() / "solo_description/robots/solo12.urdf", floating_base=True,
                             contacts=contacts, quiet=True)
    codegen.export(kk, tmp_path)
    (c_file,) = tmp_path.glob("*_kernels.c")
    name = c_file.name[:-len("_kernels.c")]
    rng = np.random.default_rng(5)
    q = rng.uniform(-1.0, 1.0, kk.N_Q)
    q[3:7] /= np.linalg.norm(q[3:7])
    v, tau = rng.uniform(-2, 2, kk.N_DOF), rng.uniform(-10, 10, kk.N_DOF)
    pose = lambda: np.hstack([np.eye(3), rng.uniform(-0.3, 0.3, (3, 1))]).ravel()  # noqa: E731 - [R | p] rows
    ref = np.concatenate([pose(), rng.uniform(-0.3, 0.3, 6), pose()])  # FL's pose, FR's and HL's points, HR's
    mask, kp, kd = 0b0011, 20.0, 3.0
    expected = np.concatenate([x.ravel() for x in kk.constrained_dynamics_derivatives(q, v, tau, mask, kp, kd,
                                                                                    ref=ref)])
    arr = lambda x: "{" + ", ".join(repr(float(a)) for a in x) + "}"  # noqa: E731
    driver = (CONTACT_DRIVER.replace("LNAME", name).replace("UNAME", name.upper()).replace("{Q}", arr(q))
              .replace("{V}", arr(v)).replace("{TAU}", arr(tau)).replace("{REF}", arr(ref)).replace("MASK", str(mask))
              .replace("KP", repr(kp)).replace("KD", repr(kd)))
    (tmp_path / "driver.c").write_text(driver)
    flags = [*FLAGS, *X86_FLAGS, "-I", str(tmp_path)]
    parts = int(re.search(r"^#define KKNPARTS (\d+)$", c_file.read_text(), re.M)[1])

    def compile_part(k):
        return _run(["gcc", *flags, f"-DKKPART={k}", "-c", str(c_file), "-o", str(tmp_path / f"part{k}.o")])

    with ThreadPoolExecutor(2) as pool:  # each kernel three times (target_clones): the parts two at a time
        for r in pool.map(compile_part, range(1, parts + 1)):
            assert r.returncode == 0, r.stderr[-2000:]
    exe = tmp_path / "driver"
    r = _run(["gcc", *flags, str(tmp_path / "driver.c"), *(str(tmp_path / f"part{k}.o") for k in range(1, parts + 1)),
              "-lm", "-o", str(exe)])
    assert r.returncode == 0, r.stderr[-2000:]
    for command in ([str(exe)], [QEMU, "-cpu", BASELINE_CPU, str(exe)]):
        r = _run(command)
        assert r.returncode == 0, (command, r.stderr[-2000:])
        got = np.array([float(x) for x in r.stdout.split()])
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() <= 1e-10 * (1.0 + np.abs(expected).max()), command
