"""The Panda point-to-point of examples/casadi_trajopt.py, shared with its benchmark
(benchmarks/casadi_external.py): the arm's URDF with fixed fingers, the model from this project's
CasADi externals and from ADAM's symbolic expressions (an independent reference), CasADi's generated
C of the latter, the Opti + IPOPT problem, and the timing of a function from Python and from C.
The problem and both models are described in the example's docstring."""
from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np

EE = "panda_hand"
JOINTS = tuple(f"panda_joint{i}" for i in range(1, 8))
Q_A = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
Q_B = np.array([1.2, -0.3, -0.5, -1.8, 0.4, 2.0, 0.2])
T = 1.0


def cflags() -> list:
    """The external library's own flags (codegen.build.casadi_library, native), for CasADi's generated C, but
    -fvisibility=hidden (its functions are not marked for export; visibility does not change the code)."""
    from codegen.build.casadi_library import c_flags
    return [f for f in c_flags(native=True) if f != "-fvisibility=hidden"] + ["-shared"]


def arm_urdf(directory: Path) -> Path:
    """example-robot-data's Panda with fixed fingers and no <mimic>, written into `directory`."""
    from reference.robot_data import robots_dir

    text = (robots_dir() / "panda_description" / "urdf" / "panda.urdf").read_text()
    text = re.sub(r"<mimic[^>]*/>", "", text)
    for joint in ("panda_finger_joint1", "panda_finger_joint2"):
        text, n = re.subn(rf'(<joint name="{joint}" type=")prismatic', r"\1fixed", text)
        assert n == 1, joint
    path = directory / "panda_arm.urdf"
    path.write_text(text)
    return path


def external_model(urdf: Path, out: Path):
    """(fd, fk, module, build seconds, set-up seconds): this project's externals."""
    import casadi as ca

    import codegen

    t0 = time.perf_counter()
    lib = codegen.import_urdf(urdf, end_effectors=[EE], friction=False, casadi=True, out=out, quiet=True)
    module = codegen.import_urdf(urdf, end_effectors=[EE], friction=False, quiet=True)
    t1 = time.perf_counter()
    fd = ca.external("panda_arm_forward_dynamics", str(lib))
    fk = ca.external(f"panda_arm_fk_{EE}", str(lib))
    return fd, fk, module, t1 - t0, time.perf_counter() - t1


def symbolic_model(urdf: Path, g: float):
    """(fd, fk, set-up seconds): ADAM's CasADi expressions, fixed base."""
    import casadi as ca
    from adam.casadi import KinDynComputations

    t0 = time.perf_counter()
    kd = KinDynComputations(str(urdf), list(JOINTS), gravity=np.array([0, 0, -g, 0, 0, 0]))
    q, v, tau = ca.SX.sym("q", 7), ca.SX.sym("v", 7), ca.SX.sym("tau", 7)
    base = ca.SX.eye(4)
    M = kd.mass_matrix(base, q)[6:, 6:]
    h = kd.bias_force(base, q, ca.SX.zeros(6), v)[6:]
    fd = ca.Function("fd_sym", [q, v, tau], [ca.solve(M, tau - h)], ["q", "v", "tau"], ["ddq"])
    fk = ca.Function("fk_sym", [q], [kd.forward_kinematics(EE, base, q)[:3, 3]])
    return fd, fk, time.perf_counter() - t0


def solve(fd, fk, module, n: int, exact_hessian: bool = False) -> dict:
    """The point-to-point problem with dynamics fd and hand position fk; its solution and IPOPT's timing."""
    import casadi as ca

    lim = module.JOINT_LIMITS
    dt = T / n
    target = module.fk(Q_B, 0)[:3, 3]
    t0 = time.perf_counter()
    opti = ca.Opti()
    q, v, tau = opti.variable(7, n + 1), opti.variable(7, n + 1), opti.variable(7, n)
    cost = 0
    for k in range(n):
        v_next = v[:, k] + dt * fd(q[:, k], v[:, k], tau[:, k])
        opti.subject_to(v[:, k + 1] == v_next)
        opti.subject_to(q[:, k + 1] == q[:, k] + dt * v[:, k + 1])
        opti.subject_to(opti.bounded(-lim["effort"], tau[:, k], lim["effort"]))
        cost += dt * ca.sumsqr(tau[:, k])
    for k in range(n + 1):
        opti.subject_to(opti.bounded(lim["lower"], q[:, k], lim["upper"]))
        opti.subject_to(opti.bounded(-lim["velocity"], v[:, k], lim["velocity"]))
    opti.subject_to(q[:, 0] == Q_A)
    opti.subject_to(v[:, 0] == 0)
    opti.subject_to(v[:, n] == 0)
    opti.subject_to(fk(q[:, n]) == target)
    opti.minimize(cost)
    for k in range(n + 1):  # a straight line in joint space, at rest
        opti.set_initial(q[:, k], Q_A + (Q_B - Q_A) * k / n)
    g_hold = module.inverse_dynamics(Q_A, np.zeros(7), np.zeros(7))
    opti.set_initial(tau, np.tile(g_hold[:, None], (1, n)))
    ipopt = {"print_level": 0, "sb": "yes", "tol": 1e-8, "max_iter": 1000}
    if not exact_hessian:
        ipopt["hessian_approximation"] = "limited-memory"
    opti.solver("ipopt", {"print_time": False, "record_time": True}, ipopt)
    sol = opti.solve()
    wall = time.perf_counter() - t0
    stats = sol.stats()
    return {"status": stats["return_status"], "iterations": stats["iter_count"], "objective": float(sol.value(cost)),
            "q": np.asarray(sol.value(q)), "tau": np.asarray(sol.value(tau)), "solver_s": stats["t_wall_total"],
            "total_s": wall}


def _per_call(f, args, calls: int) -> float:
    """Seconds per evaluation of f: a serial map of `calls` evaluations in one CasADi call (no Python per call)."""
    fm = f.map(calls, "serial")
    batch = [np.tile(np.asarray(a, float).reshape(-1, 1), (1, calls)) for a in args]
    fm(*batch)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        fm(*batch)
        best = min(best, time.perf_counter() - t0)
    return best / calls


def generated_c(fd_sym, directory: Path):
    """(fd, jac_fd, compile seconds): CasADi's generated C of the symbolic model and of its Jacobian, compiled
    with cflags() and loaded back as externals."""
    import casadi as ca

    jac = fd_sym.jacobian()
    gen = ca.CodeGenerator("fd_sym_gen.c")
    gen.add(fd_sym)
    gen.add(jac)
    gen.generate(str(directory) + os.sep)
    cc = os.environ.get("CC", "cc")
    t0 = time.perf_counter()
    subprocess.run([cc, *cflags(), "fd_sym_gen.c", "-o", "fd_sym_gen.so", "-lm"], cwd=directory, check=True)
    seconds = time.perf_counter() - t0
    lib = str(directory / "fd_sym_gen.so")
    return ca.external("fd_sym", lib), ca.external(jac.name(), lib), seconds


DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
typedef long long casadi_int;
typedef int (*fn)(const double **, double **, casadi_int *, double *, int);
#define DECL(f) int f(const double **arg, double **res, casadi_int *iw, double *w, int mem)
DECL(panda_arm_forward_dynamics); DECL(jac_panda_arm_forward_dynamics); DECL(fd_sym); DECL(jac_fd_sym);
static double w[1 << 16];
static casadi_int iw[1 << 10];
static double seconds(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
/* best of 5 runs of n calls, microseconds per call; q[0] moves so that no call is hoisted */
static double us(fn f, const double **arg, double **res, double *q0, int n) {
    double best = 1e9, sink = 0.0;
    int i, k;
    for (k = 0; k < 5; ++k) {
        double t0 = seconds(), t;
        for (i = 0; i < n; ++i) { *q0 += 1e-12; f(arg, res, iw, w, 0); sink += res[0][1]; }
        t = (seconds() - t0) / n;
        if (t < best) best = t;
    }
    return 1e6 * best + 0.0 * sink;
}
int main(int argc, char **argv) {
    double q[7], v[7], tau[7], ddq[7], d1[49], d2[49], d3[49];
    const double *arg[4] = {q, v, tau, ddq};
    double *res[1] = {ddq}, *jres[3] = {d1, d2, d3};
    int i, n = argc > 1 ? atoi(argv[1]) : 100000;
    for (i = 0; i < 7; ++i) { q[i] = 0.1 * i; v[i] = 0.2 - 0.05 * i; tau[i] = 1.0 + i; }
    printf("%f %f\n", us(panda_arm_forward_dynamics, arg, res, q, n), us(fd_sym, arg, res, q, n));
    printf("%f %f\n", us(jac_panda_arm_forward_dynamics, arg, jres, q, n), us(jac_fd_sym, arg, jres, q, n));
    return 0;
}
"""


def from_c(directory: Path, lib_x: Path, lib_c: Path, calls: int) -> list:
    """[(external us, generated C us)] for forward dynamics and its Jacobian, called from a C loop (DRIVER)
    through the CasADi API of both libraries: the functions alone, without CasADi's per-call machinery."""
    cc = os.environ.get("CC", "cc")
    (directory / "driver.c").write_text(DRIVER.replace("#include <time.h>", "#include <time.h>\n#include <stdlib.h>"))
    subprocess.run([cc, "-O2", "-std=c99", "driver.c", "-o", "driver", str(lib_x), str(lib_c),
                    f"-Wl,-rpath,{lib_x.parent}", f"-Wl,-rpath,{lib_c.parent}"], cwd=directory, check=True)
    out = subprocess.run([str(directory / "driver"), str(calls)], capture_output=True, text=True, check=True).stdout
    return [tuple(float(x) for x in line.split()) for line in out.strip().splitlines()]
