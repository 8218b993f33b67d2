"""The benchmark harness's floating-base path (`make bench-robots`, NAME_fb rows), without timing
and without compiling Pinocchio: the states file carries q of NQ entries (version 2, read back
by bench_common.h), the Pinocchio side is the free-flyer model with our first 7 q and 6 v
entries as its own, and the model file names the free-flyer (FF) first in the order line."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

pin = pytest.importorskip("pinocchio")

from benchmarks.inputs import draw_floating_states, draw_states, write_states  # noqa: E402
from benchmarks.pin_model import pin_harness_text  # noqa: E402
from benchmarks.python_level import pin_config  # noqa: E402
from benchmarks.urdf_case import pin_model_from_urdf  # noqa: E402
from reference.robot_data import robots_dir  # noqa: E402
from codegen.read.urdf import load_urdf  # noqa: E402

HARNESS = Path(__file__).resolve().parents[1] / "benchmarks" / "harness"
SOLO12 = "solo_description/robots/solo12.urdf"
READER = r"""
#include "bench_common.h"
int main(int argc, char **argv)
{
    bench_states s = bench_read_states(argv[1]);
    (void)argc;
    printf("%d %d %d %d %.17g %.17g\n", s.nstates, s.ndof, s.nq, s.np,
           s.q[(size_t)s.nstates * s.nq - 1], s.dq[(size_t)s.nstates * s.ndof - 1]);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler")
@pytest.mark.parametrize("floating", [False, True])
def test_states_file_round_trip(tmp_path, floating):
    q, dq = (draw_floating_states if floating else draw_states)(5, 18, 3)
    assert q.shape == (5, 19 if floating else 18) and dq.shape == (5, 18)
    if floating:
        assert np.allclose(np.linalg.norm(q[:, 3:7], axis=1), 1.0)
    path = tmp_path / "states.bin"
    write_states(path, [1.0, 2.0], q, dq)
    assert path.read_bytes()[4:8] == (b"\x02" if floating else b"\x01") + b"\0\0\0"
    src, exe = tmp_path / "reader.c", tmp_path / "reader"
    src.write_text(READER)
    subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-Wno-unused-function", "-I", str(HARNESS), str(src), "-o", str(exe)],
                   check=True)
    n, nd, nq, np_, qlast, dqlast = subprocess.run([str(exe), str(path)], capture_output=True, text=True,
                                                   check=True).stdout.split()
    assert (int(n), int(nd), int(nq), int(np_)) == (5, 18, q.shape[1], 2)
    assert float(qlast) == q[-1, -1] and float(dqlast) == dq[-1, -1]


def test_free_flyer_configuration_and_model_file(tmp_path):
    path = robots_dir() / SOLO12
    pm = pin_model_from_urdf(path, floating=True)
    assert pm.joints[1].shortname() == "JointModelFreeFlyer" and pm.nv == 18
    names = list(load_urdf(path, floating_base=True).model.joint_names[6:])
    perm = np.r_[0:6, [pm.joints[pm.getJointId(n)].idx_v for n in names]]
    q, _ = draw_floating_states(1, 18, 4)
    qp = pin_config(pm, perm, q[0])
    assert (qp[:7] == q[0, :7]).all()
    for i, n in enumerate(names):
        assert qp[pm.joints[pm.getJointId(n)].idx_q] == q[0, 7 + i]
    text = pin_harness_text(pm, path, [pm.names[1], *names], [("FL_FOOT", "FL_FOOT")])
    assert f"joint {pm.names[1]} universe FF " in text
    assert f"order {pm.names[1]} {' '.join(names)}\n" in text


def test_own_floating_root_joint(tmp_path):
    """A URDF whose root joint is floating: the free-flyer reader keeps it, the fixed-base one
    refuses it naming the joint."""
    text = (robots_dir() / SOLO12).read_text()
    root = text.index("<link")
    own = tmp_path / "solo12_own_floating.urdf"
    own.write_text(text[:root] + '<link name="world"/><joint name="root" type="floating"><parent link="world"/>'
                   '<child link="base_link"/></joint>' + text[root:])
    assert pin_model_from_urdf(own, floating=True).names[1] == "root"
    with pytest.raises(ValueError, match=r"root \(JointModelFreeFlyer\)"):
        pin_model_from_urdf(own)
