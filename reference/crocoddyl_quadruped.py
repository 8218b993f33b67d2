"""The Solo12 trot of examples/crocoddyl_quadruped.py, shared with its benchmark
(benchmarks/crocoddyl_quadruped.py): Crocoddyl's gait problem, its contact nodes and touchdowns
on this project's kernels (KernelContactDAM, KernelImpulseModel, Python subclasses of Crocoddyl's
abstract models), the checks against Crocoddyl's native models, the solve and the per-call timing.
The problem and both models are described in the example's docstring. Crocoddyl and its Pinocchio
live in .venv-crocoddyl (`make crocoddyl-env`): importing this module elsewhere exits with that."""
from __future__ import annotations

import time

import numpy as np

from reference.solo12_contacts import FEET, KD, solo_files

TROT = dict(stepLength=0.15, stepHeight=0.1, timeStep=1e-2, stepKnots=25, supportKnots=2)  # quadrupedal_gaits
SHORT = dict(TROT, stepKnots=10)
NQ, NV = 19, 18


def crocoddyl_modules():
    """crocoddyl and pinocchio, or exit with the reason (they live in .venv-crocoddyl, not .venv)."""
    try:
        import crocoddyl
        import pinocchio
    except ImportError as exc:
        raise SystemExit(f"{exc}: run it with .venv-crocoddyl/bin/python (make crocoddyl-env)")
    return crocoddyl, pinocchio


crocoddyl, pinocchio = crocoddyl_modules()


class KernelContactData(crocoddyl.DifferentialActionDataAbstract):
    """The abstract data (xout, Fx, Fu, cost and its derivatives) plus the native node's own data, whose
    Pinocchio data, contact data and cost data the native costs read."""

    def __init__(self, model):
        crocoddyl.DifferentialActionDataAbstract.__init__(self, model)
        self.native = model.native.createData()


class KernelContactDAM(crocoddyl.DifferentialActionModelAbstract):
    """A native DifferentialActionModelContactFwdDynamics's node with our constrained dynamics: the same
    state, actuation, contacts (their frames, gains) and costs."""

    def __init__(self, native, m, pin_model):
        crocoddyl.DifferentialActionModelAbstract.__init__(self, native.state, native.nu, native.costs.nr)
        self.native, self.m, self.pin_model, self.p = native, m, pin_model, m.default_params()
        contacts = native.contacts.contacts
        frames = [pin_model.frames[c.data().contact.id].name for c in contacts]
        self.mask = sum(1 << FEET.index(f) for f in frames)  # ContactModelMultiple: by name, FEET's order
        self.nc = native.contacts.nc
        for c in contacts:  # the same problem: 3d point contacts, world-aligned, kp = 0, kd = KD
            assert c.data().contact.type == pinocchio.LOCAL_WORLD_ALIGNED
            assert np.array_equal(c.data().contact.gains, [0.0, KD]), c.data().contact.gains
        self.tau = np.zeros(NV)

    def createData(self):
        return KernelContactData(self)

    def calc(self, data, x, u=None):
        q, v, nd, model = x[:NQ], x[NQ:], data.native, self.pin_model
        pd = nd.pinocchio  # the cost's kinematics: the CoM and the feet's placements
        pinocchio.centerOfMass(model, pd, q, False)
        pinocchio.updateFramePlacements(model, pd)
        if u is None:  # a terminal node: no dynamics, its cost only
            self.native.costs.calc(nd.costs, x)
        else:
            self.tau[6:] = u
            ddq, lam = self.m.constrained_dynamics(q, v, self.tau, self.mask, 0.0, KD, params=self.p)
            data.xout = ddq
            self.native.contacts.updateForce(nd.multibody.contacts, lam[:self.nc])
            self.native.costs.calc(nd.costs, x, u)
        data.cost = nd.costs.cost

    def calcDiff(self, data, x, u=None):
        q, v, nd, model = x[:NQ], x[NQ:], data.native, self.pin_model
        pd = nd.pinocchio
        pinocchio.computeJointJacobians(model, pd, q)  # the feet's Jacobians (getFrameJacobian)
        pinocchio.jacobianCenterOfMass(model, pd, q, False)
        if u is None:
            self.native.costs.calcDiff(nd.costs, x)
        else:
            self.tau[6:] = u
            aq, av, atau, lq, lv, ltau = self.m.constrained_dynamics_derivatives(q, v, self.tau, self.mask, 0.0, KD,
                                                                                 params=self.p)
            data.Fx = np.hstack([aq, av])
            data.Fu = atau[:, 6:]
            self.native.contacts.updateForceDiff(nd.multibody.contacts, np.hstack([lq, lv])[:self.nc],
                                                 ltau[:self.nc, 6:])
            self.native.costs.calcDiff(nd.costs, x, u)
            data.Lu, data.Luu, data.Lxu = nd.costs.Lu, nd.costs.Luu, nd.costs.Lxu
        data.Lx, data.Lxx = nd.costs.Lx, nd.costs.Lxx


class KernelImpulseData(crocoddyl.ActionDataAbstract):
    """The abstract data plus the native touchdown's own (Pinocchio data, impulse data, cost data)."""

    def __init__(self, model):
        crocoddyl.ActionDataAbstract.__init__(self, model)
        self.native = model.native.createData()


class KernelImpulseModel(crocoddyl.ActionModelAbstract):
    """A native ActionModelImpulseFwdDynamics's touchdown with our impulse dynamics: x+ = (q, v+), v+ from
    impulse_dynamics (plastic, as the native r_coeff = 0), its derivatives from impulse_dynamics_derivatives.
    The native node's costs (the landing feet on their targets, the state), on its data."""

    def __init__(self, native, m, pin_model):
        crocoddyl.ActionModelAbstract.__init__(self, native.state, 0, native.costs.nr)
        self.native, self.m, self.pin_model, self.p = native, m, pin_model, m.default_params()
        impulses = native.impulses.impulses
        self.mask = sum(1 << FEET.index(pin_model.frames[i.data().impulse.id].name) for i in impulses)
        self.nc = native.impulses.nc
        assert native.r_coeff == 0.0 and all(i.data().impulse.type == pinocchio.LOCAL_WORLD_ALIGNED for i in impulses)
        self.zero = np.zeros(NV)

    def createData(self):
        return KernelImpulseData(self)

    def calc(self, data, x, u=None):
        q, v, nd, model = x[:NQ], x[NQ:], data.native, self.pin_model
        pinocchio.centerOfMass(model, nd.pinocchio, q, False)  # the cost's kinematics, as KernelContactDAM
        pinocchio.updateFramePlacements(model, nd.pinocchio)
        # native: JMinvJt_damping 1e-12 on the contact system; ours an exact solve (mu = 0): ~1e-12 apart
        v_plus, impulse = self.m.impulse_dynamics(q, v, self.mask, params=self.p)
        data.xnext = np.concatenate([q, v_plus])
        self.native.impulses.updateForce(nd.multibody.impulses, impulse[:self.nc])
        self.native.costs.calc(nd.costs, x, self.zero[:0])
        data.cost = nd.costs.cost

    def calcDiff(self, data, x, u=None):
        q, v, nd, model, m = x[:NQ], x[NQ:], data.native, self.pin_model, self.m
        pinocchio.computeJointJacobians(model, nd.pinocchio, q)
        pinocchio.jacobianCenterOfMass(model, nd.pinocchio, q, False)
        Fx = np.eye(2 * NV)
        Fx[NV:, :NV], Fx[NV:, NV:] = m.impulse_dynamics_derivatives(q, v, self.mask, params=self.p)[:2]
        data.Fx = Fx
        self.native.costs.calcDiff(nd.costs, x, self.zero[:0])
        data.Lx, data.Lxx = nd.costs.Lx, nd.costs.Lxx


def build_problem(m, gait):
    """Crocoddyl's trot for Solo12 (Pinocchio's model from the module's URDF, SRDF's "standing"), x0."""
    from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

    urdf, srdf = solo_files()
    model = pinocchio.buildModelFromUrdf(str(urdf), pinocchio.JointModelFreeFlyer())
    pinocchio.loadReferenceConfigurations(model, str(srdf), False)
    q0 = model.referenceConfigurations["standing"].copy()
    x0 = np.concatenate([q0, np.zeros(model.nv)])
    problem = SimpleQuadrupedalGaitProblem(model, *FEET).createTrottingProblem(x0, **gait)
    return model, problem, x0


def is_contact(action):
    return isinstance(action, crocoddyl.IntegratedActionModelEuler) and isinstance(
        action.differential, crocoddyl.DifferentialActionModelContactFwdDynamics)


def with_kernels(problem, m, model):
    """The same ShootingProblem, each contact node's differential model ours (its Euler step, dt kept) and
    each touchdown ours; the Python models are returned too (kept alive with the problem)."""
    keep = []

    def swap(action):
        if isinstance(action, crocoddyl.ActionModelImpulseFwdDynamics):
            keep.append(KernelImpulseModel(action, m, model))
            return keep[-1]
        if not is_contact(action):
            return action
        dam = KernelContactDAM(action.differential, m, model)
        keep.append(dam)
        return crocoddyl.IntegratedActionModelEuler(dam, action.dt)

    ours = crocoddyl.ShootingProblem(problem.x0, [swap(a) for a in problem.runningModels], swap(problem.terminalModel))
    return ours, keep


def perturbed(model, x0, u0, rng):
    """x0 with the joints moved (0.1 rad), random velocities (0.5 rad/s or m/s), u0 plus 1 N m: a point where
    ddq is far from the initial guess's zero."""
    q = pinocchio.integrate(model, x0[:NQ], np.r_[np.zeros(6), rng.uniform(-0.1, 0.1, NV - 6)])
    return np.concatenate([q, rng.uniform(-0.5, 0.5, NV)]), u0 + rng.uniform(-1, 1, len(u0))


def compare_nodes(native, ours, model, x0, us0, tol=1e-9):
    """The first node of each contact set and the first touchdown of each (if ours), at the initial guess
    (x0, quasi-static u) and at a perturbed point: ours against the native model; asserts agreement to
    `tol` relative to each quantity's largest entry (or absolute below 1: at the initial guess ddq is zero
    to rounding). Returns the largest difference."""
    seen, worst, rng = set(), 0.0, np.random.default_rng(0)
    for k, (mn, mo) in enumerate(zip(native.runningModels, ours.runningModels)):
        ours_node = mo if isinstance(mo, KernelImpulseModel) else getattr(mo, "differential", None)
        if not isinstance(ours_node, (KernelContactDAM, KernelImpulseModel)) or (type(ours_node), ours_node.mask) in seen:
            continue
        seen.add((type(ours_node), ours_node.mask))
        for x, u, where in ((x0, us0[k], "initial guess"), (*perturbed(model, x0, us0[k], rng), "perturbed")):
            if isinstance(ours_node, KernelImpulseModel):
                diffs = impulse_differences(mn, mo, x)
            else:
                diffs = contact_differences(mn.differential, mo.differential, x, u)
            kind = "touchdown" if isinstance(ours_node, KernelImpulseModel) else "stance"
            feet = "".join("1" if ours_node.mask >> f & 1 else "0" for f in range(4))
            print(f"  node {k:2d} ({kind} {feet}), {where}: " + ", ".join(f"{n} {d:.1e}" for n, d in diffs.items()))
            bad = {n: d for n, d in diffs.items() if not d <= tol}
            assert not bad, f"node {k}, {where}: ours and Crocoddyl's native model differ: {bad}"
            worst = max(worst, *diffs.values())
    return worst


def relative(pairs):
    """max |native - ours| / max(max |native|, 1) for each named (native, ours) pair."""
    out = {}
    for name, (a, b) in pairs.items():
        a, b = np.asarray(a, float), np.asarray(b, float)
        out[name] = np.abs(a - b).max() / max(np.abs(a).max(), 1.0)
    return out


def contact_differences(dn, do, x, u):
    """One contact node's dynamics, forces, derivatives and cost derivatives, native (dn) and ours (do)."""
    an, ao = dn.createData(), do.createData()
    for model, data in ((dn, an), (do, ao)):
        model.calc(data, x, u)
        model.calcDiff(data, x, u)
    nc = dn.contacts.nc
    return relative({"ddq": (an.xout, ao.xout), "lambda": (an.pinocchio.lambda_c[:nc], forces(ao.native, dn)),
                     "d ddq/dx": (an.Fx, ao.Fx), "d ddq/du": (an.Fu, ao.Fu),
                     "d lambda/dx": (an.df_dx, stacked(ao.native, dn, "df_dx")),
                     "d lambda/du": (an.df_du, stacked(ao.native, dn, "df_du")),
                     "cost": (an.cost, ao.cost), "Lx": (an.Lx, ao.Lx), "Lu": (an.Lu, ao.Lu), "Lxx": (an.Lxx, ao.Lxx),
                     "Luu": (an.Luu, ao.Luu), "Lxu": (an.Lxu, ao.Lxu)})


def impulse_differences(mn, mo, x):
    """One touchdown's next state, impulses, d x+/dx and cost derivatives, native (mn) and ours (mo)."""
    an, ao = mn.createData(), mo.createData()
    u = np.zeros(0)
    for model, data in ((mn, an), (mo, ao)):
        model.calc(data, x, u)
        model.calcDiff(data, x, u)
    idata = ao.native.multibody.impulses.impulses
    ours_impulse = np.concatenate([idata[i.key()].f.linear for i in mn.impulses.impulses])
    return relative({"x+": (an.xnext, ao.xnext), "impulse": (an.pinocchio.impulse_c[:mn.impulses.nc], ours_impulse),
                     "d x+/dx": (an.Fx, ao.Fx), "cost": (an.cost, ao.cost), "Lx": (an.Lx, ao.Lx),
                     "Lxx": (an.Lxx, ao.Lxx)})


def forces(native_data, dam):
    """The stance feet's forces held by a node's contact data (world axes), stacked as lambda."""
    cd = native_data.multibody.contacts.contacts
    return np.concatenate([cd[c.key()].f.linear for c in dam.contacts.contacts])


def stacked(native_data, dam, name):
    cd = native_data.multibody.contacts.contacts
    return np.vstack([getattr(cd[c.key()], name) for c in dam.contacts.contacts])


def per_call(f, args, calls):
    """Process CPU time per call of f(*args), us (after one warm-up call)."""
    f(*args)
    t0 = time.process_time()
    for _ in range(calls):
        f(*args)
    return 1e6 * (time.process_time() - t0) / calls


def node_times(native, ours, x0, u0, calls):
    """The first contact node's calc and calcDiff, native and ours, and our two kernels alone (us per call)."""
    out = []
    for action in (native.runningModels[0].differential, ours.runningModels[0].differential):
        data = action.createData()
        out += [per_call(action.calc, (data, x0, u0), calls), per_call(action.calcDiff, (data, x0, u0), calls)]
    dam = ours.runningModels[0].differential
    args = (x0[:NQ], x0[NQ:], np.r_[np.zeros(6), u0], dam.mask, 0.0, KD)
    out += [per_call(dam.m.constrained_dynamics, args, calls), per_call(dam.m.constrained_dynamics_derivatives, args, calls)]
    k = next(k for k, a in enumerate(ours.runningModels) if isinstance(a, KernelImpulseModel))
    x = np.r_[x0[:NQ], np.random.default_rng(1).uniform(-0.5, 0.5, NV)]  # a touchdown at some velocity
    for action in (native.runningModels[k], ours.runningModels[k]):
        data = action.createData()
        out += [per_call(action.calc, (data, x, np.zeros(0)), calls), per_call(action.calcDiff, (data, x, np.zeros(0)), calls)]
    return out


def solve(problem, x0, us0, maxiter):
    """FDDP from x0 and us0 (Crocoddyl's quadrupedal_gaits example): the solver, the wall and process
    CPU times of the solve, per calcDiff pass (iter + 1: the last detects convergence)."""
    solver = crocoddyl.SolverFDDP(problem)
    xs0 = [x0] * (problem.T + 1)
    w0, c0 = time.perf_counter(), time.process_time()
    converged = solver.solve(xs0, list(us0), maxiter, False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    passes = solver.iter + 1
    return solver, converged, wall / passes, cpu / passes


def best(runs):
    """The run (solver, converged, wall, process CPU per iteration) with the least process CPU time, its wall
    time the least of all runs'."""
    runs = list(runs)
    run = min(runs, key=lambda r: r[3])
    return run[0], run[1], min(r[2] for r in runs), run[3]
