"""Solo12 trotting in Crocoddyl: its own gait problem solved by its own FDDP, once as built (Pinocchio's
contact and impulse dynamics) and once with every node's dynamics from our kernels, side by side.

    .venv-crocoddyl/bin/python -m examples.crocoddyl_quadruped            (`make crocoddyl-env` first)
    .venv-crocoddyl/bin/python -m examples.crocoddyl_quadruped --short    (10-knot steps: what CI runs)

Crocoddyl 3.2.1 is built against libpinocchio 4.0.0 and crashes next to the pin 4.1.0 of .venv, so it
runs in an environment of its own, .venv-crocoddyl (pyproject.toml's [crocoddyl] extra, `make
crocoddyl-env`); the generator builds Solo12's module there as in examples/quadruped_mpc.py (the same
URDF, codegen.import_urdf(..., floating_base=True, contacts=FEET); the module needs no Pinocchio).

The problem: crocoddyl.utils.quadruped.SimpleQuadrupedalGaitProblem(...).createTrottingProblem(...)
for Solo12 from its URDF and SRDF ("standing"), with the trot of Crocoddyl's quadrupedal_gaits
example (steps of 0.15 m, 0.1 m high, 10 ms knots, 25 knots a step, 2 of support; --short: 10 knots),
solved from x0 and the problem's quasiStatic torques by crocoddyl.SolverFDDP (100 iterations at most,
its default stopping threshold 1e-9), twice:
* native: the ShootingProblem as built (DifferentialActionModelContactFwdDynamics: Pinocchio's
  computeAllTerms, forwardDynamics with the contacts' KKT system, computeRNEADerivatives and
  getKKTSystemInverse for the derivatives);
* ours: the same ShootingProblem with every contact node's differential model (the terminal one too)
  replaced by KernelContactDAM, a Python subclass of crocoddyl.DifferentialActionModelAbstract. Its
  calc takes ddq and the stance feet's forces lambda from the module's constrained_dynamics, its
  calcDiff d ddq/d(q, v, tau) and d lambda/d(q, v, tau) from constrained_dynamics_derivatives
  (Pinocchio's tangent-space convention, q (+) dq, as Crocoddyl's; tau = [0; u], Crocoddyl's
  ActuationModelFloatingBase, so d/du is the tau columns of the joints), with the node's own contacts
  (ContactModel3D, LOCAL_WORLD_ALIGNED, Baumgarte gains [0, 50]: kp = 0, kd = 50/s). Its cost is the
  native node's own CostModelSum (CoM and swing-foot tracking, friction cones, state and control
  regularization, state bounds), evaluated on the native node's DataCollectorMultibodyInFrictionalContact
  whose contact forces are ours (ContactModelMultiple.updateForce / updateForceDiff write our lambda and
  its derivatives into each contact's data: the friction-cone cost sees our forces). Pinocchio still
  computes the cost's kinematics: the feet's placements and the CoM (centerOfMass, updateFramePlacements)
  in calc, the joint Jacobians and the CoM's Jacobian (computeJointJacobians, jacobianCenterOfMass) in
  calcDiff; the touchdown nodes' too.
  Each touchdown's ActionModelImpulseFwdDynamics is replaced by KernelImpulseModel, a Python
  crocoddyl.ActionModelAbstract: x+ = (q, v+), v+ from the module's impulse_dynamics, d v+/d(q, v) from
  impulse_dynamics_derivatives, the native touchdown's own costs on its data, its impulses ours (updateForce).
Checks (assertions: the example fails otherwise), against Crocoddyl, which we did not write: at the
initial guess and at a perturbed state, the first node of each contact set gives the same ddq, lambda,
their derivatives and the cost's derivatives as the native model, the first touchdown of each the same
x+, impulses, d x+/dx and cost derivatives (1e-9 relative to the largest entry), and both solves end at
the same cost (1e-6 relative). Prints iterations, costs, time per iteration of both (wall and process CPU
time; ours pays a Python call per node and per calc/calcDiff: the solver's loop is Crocoddyl's C++, the
node's work crosses into Python and back) and one node's calc and calcDiff of each; saves a PNG of the
base trajectory and the contact forces (matplotlib; else skipped, one line).
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from examples.plotting import pyplot, save
from examples.quadruped_mpc import plot_base
from reference.crocoddyl_quadruped import (SHORT, TROT, KernelContactDAM, KernelImpulseModel, best, build_problem,
                                           compare_nodes, crocoddyl, node_times, pinocchio, solve, with_kernels)
from reference.solo12_contacts import FEET, load_robot


def trajectories(solver, problem):
    """Base positions per knot, and each contact node's stance forces (4 x 3, world axes; NaN in swing)."""
    xs = np.array(solver.xs)
    problem.calc(solver.xs, solver.us)  # the nodes' data at the solution (the solver's last calc may be a trial's)
    F = np.full((problem.T, 4, 3), np.nan)
    for k, (action, data) in enumerate(zip(problem.runningModels, solver.problem.runningDatas)):
        diff = getattr(action, "differential", None)
        if diff is None or not hasattr(diff, "contacts") and not isinstance(diff, KernelContactDAM):
            continue
        native = diff.native if isinstance(diff, KernelContactDAM) else diff
        nd = data.differential.native if isinstance(diff, KernelContactDAM) else data.differential
        cd = nd.multibody.contacts.contacts
        for c in native.contacts.contacts:
            F[k, FEET.index(c.key()[:-len("_contact")])] = cd[c.key()].f.linear
    return xs, F


def plot(runs, dt, path):
    plt = pyplot()
    if plt is None:
        return
    (xs, F), (xs_n, F_n) = runs
    t = dt * np.arange(len(xs))  # knots (a touchdown takes no time: plotted as one)
    fig, ax = plt.subplots(2, 1, figsize=(8, 7), sharex=True)
    plot_base(ax[0], t, xs, xs_n, "Solo12 trotting, Crocoddyl's FDDP on our contact kernels (dotted: native)")
    for f, name in enumerate(FEET):
        ax[1].plot(t[:-1], F[:, f, 2], label=name)
        ax[1].plot(t[:-1], F_n[:, f, 2], "k:", lw=1)
    ax[1].set_ylabel("normal force (N)")
    ax[1].set_xlabel("knot x dt (s)")
    ax[1].legend(fontsize=8, ncol=4)
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="10-knot steps instead of 25 (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/crocoddyl_quadruped.png"))
    ap.add_argument("--calls", type=int, default=2000, help="calls per node timing")
    ap.add_argument("--repeat", type=int, default=3, help="solves of each problem, the fastest timed")
    args = ap.parse_args(argv)
    gait = SHORT if args.short else TROT
    m = load_robot()
    model, native, x0 = build_problem(m, gait)
    ours, _keep = with_kernels(native, m, model)
    us0 = native.quasiStatic([x0] * native.T)
    swapped = sum(isinstance(getattr(a, "differential", None), KernelContactDAM) for a in ours.runningModels)
    touchdowns = sum(isinstance(a, KernelImpulseModel) for a in ours.runningModels)
    print(f"crocoddyl {crocoddyl.__version__}, pinocchio {pinocchio.__version__}; Solo12, Crocoddyl's trot "
          f"({gait}): {native.T} nodes, {swapped} contact nodes and the terminal one ours, {touchdowns} touchdowns ours, "
          f"{native.T - swapped - touchdowns} native")
    print(f"first node of each contact set, ours vs native (max |difference| / max(max |native|, 1); stance in {FEET}'s order):")
    worst = compare_nodes(native, ours, model, x0, us0)
    print(f"largest difference ours vs native: {worst:.3e}")
    # Best of --repeat solves each (the machine is shared): process CPU, and wall. Both on one thread: a problem
    # with Python models gets nthreads = 1; the native one's default (2 on this machine) made its FDDP ~5x
    # slower here (16 ms against 3 ms an iteration, --short), though setting nthreads warns that PyPI's build
    # has no multithreading: it is timed as well.
    threads = native.nthreads
    wd, pd = best(solve(native, x0, us0, 100) for _ in range(args.repeat))[2:]
    native.nthreads = 1
    (sn, cn, wn, pn), (so, co, wo, po) = (best(solve(p, x0, us0, 100) for _ in range(args.repeat)) for p in (native, ours))
    rel = abs(so.cost - sn.cost) / sn.cost
    print(f"iterations: native {sn.iter}, ours {so.iter} (converged: native {cn}, ours {co})")
    print(f"final cost: native {sn.cost:.9e}, ours {so.cost:.9e} (relative difference {rel:.3e})")
    print(f"time per iteration: native {1e3 * pn:.2f} ms, ours {1e3 * po:.2f} ms (process CPU, one thread each; wall: "
          f"native {1e3 * wn:.2f} ms, ours {1e3 * wo:.2f} ms; best of {args.repeat} solves); native with its default "
          f"nthreads = {threads}: {1e3 * pd:.2f} ms (wall {1e3 * wd:.2f} ms)")
    nc, nd, oc, od, kc, kd, ic, idf, jc, jdf = node_times(native, ours, x0, us0[0], args.calls)
    print(f"one contact node (four feet), process CPU per call: calc native {nc:.1f} us, ours {oc:.1f} us "
          f"(constrained_dynamics {kc:.1f} us); calcDiff native {nd:.1f} us, ours {od:.1f} us "
          f"(constrained_dynamics_derivatives {kd:.1f} us)")
    print(f"one touchdown (two feet): calc native {ic:.1f} us, ours {jc:.1f} us; calcDiff native {idf:.1f} us, "
          f"ours {jdf:.1f} us")
    xs, F = trajectories(so, ours)
    xs_n, F_n = trajectories(sn, native)
    print(f"max base position difference ours vs native: {np.abs(xs[:, :3] - xs_n[:, :3]).max():.3e} m; base "
          f"travelled {xs[-1, 0] - xs[0, 0]:.3e} m")
    assert rel < 1e-6, f"the final costs differ: native {sn.cost}, ours {so.cost}"
    plot(((xs, F), (xs_n, F_n)), gait["timeStep"], args.png)


if __name__ == "__main__":
    main()
