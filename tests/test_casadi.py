"""CasADi external functions (codegen.import_urdf(..., casadi=True), python -m codegen --casadi;
docs/casadi.md): values against the module and Pinocchio, Jacobians (jac_NAME, from the derivative
kernels) against the kernels and central differences, structural zeros, the p family, Opti + IPOPT,
and the wrapper under strict warnings. Skipped without casadi (the [casadi] extra)."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

ca = pytest.importorskip("casadi")
# the patterns below read the Panda's URDF (no compiler); the built library's tests are robots
pytestmark = pytest.mark.module

import codegen  # noqa: E402
from codegen.emit.casadi_external import Sparsity, _patterns, externals  # noqa: E402

EE = "panda_hand"


def _panda_path():
    pytest.importorskip("pinocchio")
    from reference.robot_data import robots_dir
    return robots_dir() / "panda_description" / "urdf" / "panda.urdf"


def _panda_model():
    from codegen.read.urdf import load_urdf
    from reference.robot_data import MIMIC
    return load_urdf(_panda_path(), name="panda", end_effectors=(EE,), mimic=MIMIC).model


# ---- fast: the sparsity patterns from the tree, no build ---------------------------------------

def test_sparsity_compressed_is_casadi_ccs():
    s = Sparsity.of(3, 2, lambda i, j: i != j)
    assert s.compressed == (3, 2, 0, 2, 4, 1, 2, 0, 2)
    assert s.nnz == 4 and Sparsity.dense(2, 2).nnz == 4


def test_patterns_of_panda_follow_the_tree():
    model = _panda_model()
    pat = _patterns(model)
    n = model.ndof  # 7 arm joints, then the two fingers, siblings on the hand
    related = np.array([[j in pat["related"].rows[c] for c in range(n)] for j in range(n)])
    assert related[:7, :].all() and related[:, :7].all()  # the arm is on every chain
    assert not related[7, 8] and not related[8, 7]  # one finger does not move the other
    assert all(len(r) == n for r in pat["coupled"].rows)  # one tree below the world: ddq dense
    names = model.param_names
    tau_p = pat["tau_p"]
    fv = names.index(next(x for x in names if x.startswith("Fv_")))
    assert len(tau_p.rows[fv]) == 1  # a joint's friction acts on its own row
    assert len(tau_p.rows[names.index("g")]) == n


def test_free_flying_q_blocks_map_the_tangent_columns():
    from codegen.emit.abi import describe
    from codegen.emit.cnames import cnames
    from codegen.read.urdf import load_urdf
    from reference.robot_data import MIMIC
    model = load_urdf(_panda_path(), name="panda", end_effectors=(EE,), mimic=MIMIC, floating_base=True).model
    names = cnames(model)
    fs = {f.name: f for f in externals(model, describe(model, names=names), names)}
    nq = model.nq  # 7 base entries + 9 joints
    fd_q = fs["jac_panda_forward_dynamics"].outputs[0].sparsity
    fk_q = fs[f"jac_panda_fk_{EE}"].outputs[0].sparsity
    assert fd_q.ncol == fk_q.ncol == nq == 16
    assert fd_q.rows[:3] == ((),) * 3  # the dynamics, in base axes, do not see the base's position
    assert all(len(r) == model.ndof for r in fd_q.rows[3:7])  # its orientation: gravity
    assert all(len(r) == 3 for r in fk_q.rows[:7]) and fk_q.rows[-2:] == ((), ())  # not the fingers


# ---- the Panda built: values, Jacobians, Opti -------------------------------------------------

@pytest.fixture(scope="module")
def panda(tmp_path_factory):
    from reference.robot_data import MIMIC
    out = tmp_path_factory.mktemp("panda_casadi")
    kw = dict(end_effectors=[EE], mimic=MIMIC, friction=False, quiet=True)  # friction=False: Pinocchio's rnea
    lib = codegen.import_urdf(_panda_path(), casadi=True, out=out, **kw)
    module = codegen.import_urdf(_panda_path(), **kw)
    return str(lib), module


def _states(module, n=4, seed=3):
    rng = np.random.default_rng(seed)
    nv = module.N_DOF
    return [(rng.uniform(-1.5, 1.5, nv), rng.standard_normal(nv), rng.standard_normal(nv) * 5) for _ in range(n)]


def _close(a, b, tol):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    scale = max(1.0, float(np.abs(b).max()))
    assert np.abs(a - b).max() <= tol * scale, np.abs(a - b).max() / scale


def _dense(x):
    return np.array(ca.DM(x).full())


@pytest.mark.robots
def test_library_exports_the_casadi_api_only(panda):
    lib, _ = panda
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("no nm")
    symbols = subprocess.run([nm, "-D", "--defined-only", lib], capture_output=True, text=True).stdout.split()
    names = [s for s in symbols if s.startswith(("panda_", "jac_panda_"))]
    assert "panda_forward_dynamics" in names and "jac_panda_forward_dynamics_p" in names
    assert not [s for s in symbols if s.startswith("kkca_")]  # the kernels stay inside


@pytest.mark.robots
def test_values_equal_module_and_pinocchio(panda):
    import pinocchio as pin
    lib, module = panda
    fd, id_, fk = (ca.external(f"panda_{f}", lib) for f in ("forward_dynamics", "inverse_dynamics", f"fk_{EE}"))
    pm = pin.buildModelFromUrdf(str(_panda_path()))
    data = pm.createData()
    fid = pm.getFrameId(EE)
    p = module.default_params()
    fd_p, id_p = ca.external("panda_forward_dynamics_p", lib), ca.external("panda_inverse_dynamics_p", lib)
    for q, v, u in _states(module):
        ddq = _dense(fd(q, v, u)).ravel()
        _close(ddq, module.forward_dynamics(q, v, u), 1e-12)
        _close(ddq, pin.aba(pm, data, q, v, u), 1e-12)
        _close(_dense(fd_p(q, v, u, p)).ravel(), ddq, 1e-14)
        tau = _dense(id_(q, v, u)).ravel()
        _close(tau, module.inverse_dynamics(q, v, u), 1e-12)
        _close(tau, pin.rnea(pm, data, q, v, u), 1e-12)
        _close(_dense(id_p(q, v, u, p)).ravel(), tau, 1e-14)
        pos = _dense(fk(q)).ravel()
        _close(pos, module.fk(q, 0)[:3, 3], 1e-14)
        pin.framesForwardKinematics(pm, data, q)
        _close(pos, data.oMf[fid].translation, 1e-12)


def _jac_fn(ext, n_in, wrt_sizes):
    """casadi.Function (inputs) -> (value, d value / d each input) of the external through ca.jacobian."""
    xs = [ca.MX.sym(f"x{i}", s) for i, s in enumerate(wrt_sizes[:n_in])]
    y = ext(*xs)
    return ca.Function("J", xs, [y] + [ca.jacobian(y, x) for x in xs])


def _central(f, args, k, h=1e-6):
    x = np.array(args[k], float)
    cols = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        plus = [a if i != k else x + e for i, a in enumerate(args)]
        minus = [a if i != k else x - e for i, a in enumerate(args)]
        cols.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * h))
    return np.array(cols).T


@pytest.mark.robots
def test_jacobians_are_the_derivative_kernels(panda):
    lib, module = panda
    n, np_ = module.N_DOF, module.N_PARAMS
    fd = ca.external("panda_forward_dynamics", lib)
    # CasADi found jac_panda_forward_dynamics (not finite differences, not an error)
    assert "jac_panda_forward_dynamics" in str(fd.jacobian()) and "External" in str(fd.jacobian())
    J_fd = _jac_fn(fd, 3, [n, n, n])
    J_id = _jac_fn(ca.external("panda_inverse_dynamics", lib), 3, [n, n, n])
    J_fk = _jac_fn(ca.external(f"panda_fk_{EE}", lib), 1, [n])
    for q, v, u in _states(module, 3):
        out = J_fd(q, v, u)
        dq, dv, minv = module.forward_dynamics_derivatives(q, v, u)
        for got, want in zip(out[1:], (dq, dv, minv)):
            _close(_dense(got), want, 1e-12)
        for k in range(3):
            _close(_dense(out[1 + k]), _central(module.forward_dynamics, [q, v, u], k), 1e-6)
        out = J_id(q, v, u)
        dq, dv = module.inverse_dynamics_derivatives(q, v, u)
        for got, want in zip(out[1:], (dq, dv, module.compute_A(q))):
            _close(_dense(got), want, 1e-12)
        for k in range(3):
            _close(_dense(out[1 + k]), _central(module.inverse_dynamics, [q, v, u], k), 1e-6)
        out = J_fk(q)
        _close(_dense(out[1]), module.jacobian(q, 0)[:3], 1e-12)
        _close(_dense(out[1]), _central(lambda x: module.fk(x, 0)[:3, 3], [q], 0), 1e-7)
        assert out[1].sparsity().nnz() == 3 * 7  # the fingers' columns are structural zeros
    del np_


@pytest.mark.robots
def test_parameter_jacobians(panda):
    lib, module = panda
    n, np_ = module.N_DOF, module.N_PARAMS
    p = module.default_params()
    J_fd = _jac_fn(ca.external("panda_forward_dynamics_p", lib), 4, [n, n, n, np_])
    J_id = _jac_fn(ca.external("panda_inverse_dynamics_p", lib), 4, [n, n, n, np_])
    J_fk = _jac_fn(ca.external(f"panda_fk_{EE}_p", lib), 2, [n, np_])
    for q, v, u in _states(module, 2):
        got = _dense(J_fd(q, v, u, p)[4])
        _close(got, _central(module.forward_dynamics, [q, v, u, p], 3, h=1e-7), 1e-6)
        got = _dense(J_id(q, v, u, p)[4])
        _close(got, _central(module.inverse_dynamics, [q, v, u, p], 3, h=1e-7), 1e-7)
        _close(_dense(J_fd(q, v, u, p)[1]), module.forward_dynamics_derivatives(q, v, u, p)[0], 1e-12)
        assert J_fk(q, p)[2].sparsity().nnz() == 0  # the URDF's geometry is not in p


@pytest.mark.robots
def test_opti_ipopt_reaches_a_point_within_torque_limits(panda):
    lib, module = panda
    n = module.N_DOF
    fk = ca.external(f"panda_fk_{EE}", lib)
    id_ = ca.external("panda_inverse_dynamics", lib)
    lim = module.JOINT_LIMITS
    lower, upper, effort = lim["lower"], lim["upper"], lim["effort"]
    q0 = 0.5 * (lower + upper)
    target = module.fk(q0 + 0.3, 0)[:3, 3]
    opti = ca.Opti()
    q = opti.variable(n)
    opti.minimize(ca.sumsqr(fk(q) - target) + 1e-2 * ca.sumsqr(q - q0))
    tau = id_(q, ca.DM.zeros(n), ca.DM.zeros(n))  # holding torques at rest
    opti.subject_to(opti.bounded(-effort, tau, effort))
    opti.subject_to(opti.bounded(lower, q, upper))
    opti.set_initial(q, q0)
    # first derivatives only (jac_NAME has no jac_jac_NAME): IPOPT's quasi-Newton Hessian
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes",
                                                 "hessian_approximation": "limited-memory"})
    sol = opti.solve()
    assert sol.stats()["return_status"] == "Solve_Succeeded"
    qs = np.asarray(sol.value(q)).ravel()
    miss = np.linalg.norm(module.fk(qs, 0)[:3, 3] - target)
    assert miss < 0.2 * np.linalg.norm(module.fk(q0, 0)[:3, 3] - target)
    assert np.all(np.abs(module.inverse_dynamics(qs, np.zeros(n), np.zeros(n))) <= effort + 1e-6)
    # the optimum's gradient, by CasADi through jac_..., is the kernels' (a KKT residual check)
    grad = ca.Function("g", [q], [ca.gradient(ca.sumsqr(fk(q) - target), q)])(qs)
    J = module.jacobian(qs, 0)[:3]
    _close(_dense(grad).ravel(), 2 * J.T @ (module.fk(qs, 0)[:3, 3] - target), 1e-12)


@pytest.mark.robots
def test_integrators(panda):
    """cvodes integrates with the external (its Newton iterations use jac_...); an rk integrator's
    sensitivity, which differentiates through the externals, equals central differences."""
    lib, module = panda
    n = module.N_DOF
    fd = ca.external("panda_forward_dynamics", lib)
    x, u = ca.MX.sym("x", 2 * n), ca.MX.sym("u", n)
    dae = {"x": x, "p": u, "ode": ca.vertcat(x[n:], fd(x[:n], x[n:], u))}
    q0 = np.array([0.3, -0.4, 0.2, -2.0, 0.1, 1.8, 0.5, 0.02, 0.02])
    x0, u0 = np.r_[q0, np.zeros(n)], module.inverse_dynamics(q0, np.zeros(n), np.zeros(n)) + 1.0

    def f(s):
        return np.r_[s[n:], module.forward_dynamics(s[:n], s[n:], u0)]
    ref, h = x0.copy(), 1e-4  # RK4 on the module, 1000 steps
    for _ in range(1000):
        k1 = f(ref)
        k2 = f(ref + h / 2 * k1)
        k3 = f(ref + h / 2 * k2)
        k4 = f(ref + h * k3)
        ref = ref + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    cvodes = ca.integrator("F", "cvodes", dae, 0, 0.1, {"abstol": 1e-12, "reltol": 1e-12})
    _close(_dense(cvodes(x0=x0, p=u0)["xf"]).ravel(), ref, 1e-8)
    rk = ca.integrator("G", "rk", dae, 0, 0.1, {"number_of_finite_elements": 20})
    sens = ca.Function("S", [x, u], [ca.jacobian(rk(x0=x, p=u)["xf"], u)])
    step = lambda uu: np.asarray(rk(x0=x0, p=uu)["xf"]).ravel()  # noqa: E731
    _close(_dense(sens(x0, u0)), _central(step, [u0], 0), 1e-6)


@pytest.mark.robots
def test_casadi_generated_c_calls_the_external(panda, tmp_path):
    """acados' path: CasADi generates C for a model that calls the external (an explicit ODE and
    its Jacobian, as acados' f_expl_expr), the C is compiled and linked against the library, and
    the compiled function equals the graph evaluated in CasADi."""
    from pathlib import Path
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    lib, module = panda
    n = module.N_DOF
    fd = ca.external("panda_forward_dynamics", lib)
    x, u = ca.SX.sym("x", 2 * n), ca.SX.sym("u", n)
    f_expl = ca.vertcat(x[n:], fd(x[:n], x[n:], u))
    model = ca.Function("panda_ode", [x, u], [f_expl, ca.jacobian(f_expl, x)])
    gen = ca.CodeGenerator("panda_ode.c")
    gen.add(model)
    gen.generate(f"{tmp_path}/")
    so = tmp_path / "libpanda_ode.so"
    libdir, libname = Path(lib).parent, Path(lib).name
    subprocess.run([cc, "-shared", "-fPIC", "-O2", str(tmp_path / "panda_ode.c"), "-o", str(so), f"-L{libdir}",
                    f"-l:{libname}", f"-Wl,-rpath,{libdir}"], check=True, capture_output=True, text=True)
    compiled = ca.external("panda_ode", str(so))
    rng = np.random.default_rng(11)
    for q, v, tau in _states(module, 3, seed=11):
        xx = np.r_[q, v]
        uu = tau + rng.standard_normal(n)
        want, got = model(xx, uu), compiled(xx, uu)
        _close(_dense(got[0]).ravel(), _dense(want[0]).ravel(), 1e-13)
        _close(_dense(got[1]), _dense(want[1]), 1e-13)
        _close(_dense(got[0]).ravel()[n:], module.forward_dynamics(q, v, uu), 1e-12)


@pytest.mark.robots
def test_library_is_rebuilt_only_when_stale(panda, tmp_path):
    from pathlib import Path

    from codegen.build.casadi_library import build_casadi_library
    d = tmp_path  # a copy: the library loaded by the other tests is never written to
    for f in Path(panda[0]).parent.iterdir():
        if f.is_file():
            shutil.copy2(f, d / f.name)
    lib = d / Path(panda[0]).name
    texts = [(d / f).read_text() for f in ("panda_kernels.c", "panda_kernels.h", "panda_casadi.c")]
    before = lib.stat().st_mtime_ns
    assert build_casadi_library(*texts, "panda", d) == lib and lib.stat().st_mtime_ns == before
    good = lib.read_bytes()
    lib.write_bytes(good + b"\0")  # not the bytes recorded: built again
    build_casadi_library(*texts, "panda", d)
    assert lib.read_bytes() != good + b"\0"


@pytest.mark.robots
def test_wrapper_compiles_under_strict_warnings(panda):
    lib, _ = panda
    from pathlib import Path
    directory = Path(lib).parent
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    for std in ("-std=c99", "-std=c11"):
        done = subprocess.run([cc, std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wshadow", "-Wconversion",
                               "-Wno-sign-conversion", "-fsyntax-only", "-Dpanda_kernels_prefix=kkca_",
                               str(directory / "panda_casadi.c")], capture_output=True, text=True, cwd=directory)
        assert done.returncode == 0, done.stderr


@pytest.mark.system
def test_trajopt_example_runs_short():
    """examples/casadi_trajopt.py --short: the external and ADAM's symbolic model reach one optimum."""
    import sys
    from pathlib import Path
    pytest.importorskip("adam.casadi")
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-m", "examples.casadi_trajopt", "--short"], cwd=root, capture_output=True,
                          text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.count("Solve_Succeeded") == 3
    dq = float(out.split("max |q_external - q_ADAM exact| = ")[1].split()[0])
    assert dq < 1e-4


@pytest.fixture(scope="module")
def floating(tmp_path_factory):
    from reference.robot_data import MIMIC
    out = tmp_path_factory.mktemp("panda_floating_casadi")
    kw = dict(end_effectors=[EE], mimic=MIMIC, friction=False, floating_base=True, quiet=True)
    lib = codegen.import_urdf(_panda_path(), casadi=True, out=out, **kw)
    return str(lib), codegen.import_urdf(_panda_path(), **kw)


@pytest.mark.robots
def test_free_flying_base_values_and_q_jacobian_in_nq_coordinates(floating):
    """q's Jacobian blocks are d f / dq in CasADi's NQ coordinates (position, raw quaternion, joints):
    central differences of the kernels in those coordinates, also at a non-unit quaternion."""
    lib, module = floating
    nv, nq = module.N_DOF, module.N_Q
    fd, id_, fk = (ca.external(f"panda_{f}", lib) for f in ("forward_dynamics", "inverse_dynamics", f"fk_{EE}"))
    J_fd = _jac_fn(fd, 3, [nq, nv, nv])
    J_id = _jac_fn(id_, 3, [nq, nv, nv])
    J_fk = _jac_fn(fk, 1, [nq])
    rng = np.random.default_rng(7)
    for scale in (1.0, 1.7):
        quat = rng.standard_normal(4)
        q = np.r_[rng.standard_normal(3), scale * quat / np.linalg.norm(quat), rng.uniform(-1, 1, nv - 6)]
        v, u = rng.standard_normal(nv), rng.standard_normal(nv) * 5
        out = J_fd(q, v, u)
        _close(_dense(out[0]).ravel(), module.forward_dynamics(q, v, u), 1e-12)
        _close(_dense(out[1]), _central(module.forward_dynamics, [q, v, u], 0), 1e-6)
        dq, dv, minv = module.forward_dynamics_derivatives(q, v, u)
        _close(_dense(out[1])[:, 7:], dq[:, 6:], 1e-12)  # the joints' columns are the kernel's
        _close(_dense(out[2]), dv, 1e-12)
        _close(_dense(out[3]), minv, 1e-12)
        out = J_id(q, v, u)
        _close(_dense(out[0]).ravel(), module.inverse_dynamics(q, v, u), 1e-12)
        _close(_dense(out[1]), _central(module.inverse_dynamics, [q, v, u], 0), 1e-6)
        out = J_fk(q)
        _close(_dense(out[0]).ravel(), module.fk(q, 0)[:3, 3], 1e-14)
        _close(_dense(out[1]), _central(lambda x: module.fk(x, 0)[:3, 3], [q], 0), 1e-7)


@pytest.mark.system
def test_command_line_builds_the_library(tmp_path):
    """python -m codegen ROBOT.urdf --casadi: the portable build, loaded by casadi.external."""
    import sys

    from reference.robot_data import MIMIC_FLAGS
    done = subprocess.run([sys.executable, "-m", "codegen", str(_panda_path()), "--out", str(tmp_path), "--name", "arm",
                           "--end-effector", EE, *MIMIC_FLAGS, "--kernels",
                           "core,forward_dynamics_derivatives,inverse_dynamics_derivatives", "--casadi"],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "libarm_casadi.so" in done.stdout
    fd = ca.external("arm_forward_dynamics", str(tmp_path / "libarm_casadi.so"))
    assert fd.size1_out(0) == 9 and "jac_arm_forward_dynamics" in str(fd.jacobian())
    done = subprocess.run([sys.executable, "-m", "codegen", str(_panda_path()), "--out", str(tmp_path / "core"),
                           "--end-effector", EE, *MIMIC_FLAGS, "--kernels", "core", "--casadi"],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode != 0 and "forward_dynamics_derivatives" in done.stderr


# ---- contacts: Solo12 on its four feet ----------------------------------------------------------

SOLO = "solo_description/robots/solo12.urdf"
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")


@pytest.fixture(scope="module")
def solo(tmp_path_factory):
    """libsolo12_casadi.so and the module (the same build as tests/test_contact_dynamics.py's)."""
    pytest.importorskip("pinocchio")
    from reference.robot_data import robots_dir
    kw = dict(floating_base=True, contacts=list(FEET), quiet=True)
    lib = codegen.import_urdf(robots_dir() / SOLO, casadi=True, out=tmp_path_factory.mktemp("solo_casadi"), **kw)
    return str(lib), codegen.import_urdf(robots_dir() / SOLO, **kw)


def _solo_state(rng, nq=19):
    q = rng.uniform(-1.0, 1.0, nq)
    q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.standard_normal(nq - 1), rng.standard_normal(nq - 1) * 3


def _bits(mask):
    return [float((mask >> k) & 1) for k in range(len(FEET))]


def test_constrained_dynamics_external_ports():
    """The contact external's inputs, outputs and Jacobian patterns, from the tree (no build)."""
    pytest.importorskip("pinocchio")
    from codegen.emit.abi import describe
    from codegen.emit.cnames import cnames
    from codegen.read.urdf import load_urdf
    from reference.robot_data import robots_dir
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    names = cnames(model, "solo12")
    fs = {f.name: f for f in externals(model, describe(model, names=names), names)}
    f, jac = fs["solo12_constrained_dynamics"], fs["jac_solo12_constrained_dynamics"]
    assert [(i.name, i.sparsity.nrow) for i in f.inputs] == [("q", 19), ("v", 18), ("tau", 18), ("mask", 4), ("kp", 1),
                                                              ("kd", 1), ("mu", 1), ("ref", 12)]
    assert [(o.name, o.sparsity.nrow) for o in f.outputs] == [("ddq", 18), ("lambda", 12)]
    assert [i.name for i in jac.inputs[8:]] == ["out_ddq", "out_lambda"] and jac.n_args == 8
    blocks = {o.name: o.sparsity for o in jac.outputs}
    assert len(blocks) == 16 and blocks["jac_lambda_mask"].nnz == blocks["jac_ddq_mask"].nnz == 0
    assert blocks["jac_ddq_q"].ncol == 19 and blocks["jac_ddq_q"].nnz == 18 * 19  # kp: the base's position too
    assert blocks["jac_lambda_kp"].nnz == 12  # declared, refused when asked for (never a silent zero)
    f, jac = fs["solo12_impulse_dynamics"], fs["jac_solo12_impulse_dynamics"]
    assert [(i.name, i.sparsity.nrow) for i in f.inputs] == [("q", 19), ("v", 18), ("mask", 4), ("restitution", 1),
                                                              ("mu", 1)]
    assert [(o.name, o.sparsity.nrow) for o in f.outputs] == [("v_plus", 18), ("impulse", 12)]
    blocks = {o.name: o.sparsity for o in jac.outputs}
    assert len(blocks) == 10 and blocks["jac_impulse_mask"].nnz == 0 and blocks["jac_impulse_restitution"].nnz == 12
    assert blocks["jac_v_plus_q"].rows[:3] == ((),) * 3 and blocks["jac_v_plus_q"].nnz == 18 * 16  # no kp
    # without the contact derivatives, no contact external
    plain = {f.name for f in externals(model, describe(model, names=names, kernels=(
        "forward_dynamics_derivatives", "inverse_dynamics_derivatives", "contact_dynamics")), names)}
    assert "solo12_constrained_dynamics" not in plain and "solo12_forward_dynamics" in plain
    assert "solo12_impulse_dynamics" not in plain


@pytest.mark.robots
def test_constrained_dynamics_equals_module_and_pinocchio(solo):
    import pinocchio as pin

    from codegen.read.urdf import load_urdf
    from reference.pin_reference import build_pin_model
    from reference.robot_data import robots_dir
    from tests.test_contact_dynamics import _constraints
    lib, kk = solo
    cd = ca.external("solo12_constrained_dynamics", lib)
    assert [cd.name_in(i) for i in range(cd.n_in())] == ["q", "v", "tau", "mask", "kp", "kd", "mu", "ref"]
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    p = kk.default_params()
    assert not kk.friction(np.ones(kk.N_DOF), p).any()  # Pinocchio has no joint friction
    pm, frames = build_pin_model(model, p)
    data = pm.createData()
    rng = np.random.default_rng(4)
    for _ in range(2):
        q, v, tau = _solo_state(rng)
        ref = rng.uniform(-0.5, 0.5, 12)
        for mask in range(16):
            for kp, kd in ((0.0, 0.0), (30.0, 4.0)):
                ddq, lam = (_dense(x).ravel() for x in cd(q, v, tau, _bits(mask), kp, kd, 0.0, ref))
                want = kk.constrained_dynamics(q, v, tau, mask, kp, kd, ref=ref)
                _close(ddq, want[0], 1e-14)
                _close(lam, want[1], 1e-14)
                if not mask:
                    continue
                placements = [pin.SE3(np.eye(3), ref[3 * k:3 * k + 3]) for k in range(4)]
                cms, cds = _constraints(pm, frames, model, mask, kp, kd, placements)
                pin.initConstraintDynamics(pm, data, cms, cds)
                _close(ddq, pin.constraintDynamics(pm, data, q, v, tau, cms, cds), 1e-10)
                _close(lam[:cms.__len__() * 3], data.lambda_c, 1e-10)


@pytest.mark.robots
def test_constrained_dynamics_jacobian(solo):
    """jac_solo12_constrained_dynamics: the q, v, tau blocks are constrained_dynamics_derivatives'
    (q in NQ coordinates) and equal central differences, with Baumgarte gains; the mask's blocks are
    structurally empty; asking for a gain's or ref's block is an error, not a zero."""
    lib, kk = solo
    cd = ca.external("solo12_constrained_dynamics", lib)
    assert "jac_solo12_constrained_dynamics" in str(cd.jacobian())
    rng = np.random.default_rng(6)
    q, v, tau = _solo_state(rng)
    ref = rng.uniform(-0.5, 0.5, 12)
    xs = [ca.MX.sym("q", 19), ca.MX.sym("v", 18), ca.MX.sym("tau", 18), ca.MX.sym("mask", 4)]
    for mask in (0b1111, 0b1011, 0b0100):
        y = ca.vertcat(*cd(*xs, 20.0, 3.0, 0.0, ref))
        J = ca.Function("J", xs, [ca.jacobian(y, x) for x in xs])
        blocks = [_dense(b) for b in J(q, v, tau, _bits(mask))]
        D = kk.constrained_dynamics_derivatives(q, v, tau, mask, 20.0, 3.0, ref=ref)
        _close(blocks[1], np.vstack([D[1], D[4]]), 1e-13)
        _close(blocks[2], np.vstack([D[2], D[5]]), 1e-13)
        _close(blocks[0][:, 7:], np.vstack([D[0], D[3]])[:, 6:], 1e-13)

        def f(q_, v_, t_):
            return np.concatenate(kk.constrained_dynamics(q_, v_, t_, mask, 20.0, 3.0, ref=ref))
        for k in range(3):
            _close(blocks[k], _central(f, [q, v, tau], k), 1e-6)
        assert not blocks[3].any() and J.sparsity_out(3).nnz() == 0
    for k, gain in enumerate(ca.MX.sym(g) for g in ("kp", "kd", "mu")):
        args = [q, v, tau, _bits(0b1111), 20.0, 3.0, 0.0]
        args[4 + k] = gain
        y = ca.vertcat(*cd(*args, ref))
        with pytest.raises(RuntimeError):
            ca.Function("G", [gain], [ca.jacobian(y, gain)])(1.0)
    with pytest.raises(RuntimeError):  # a mask entry must be 0 or 1
        cd(q, v, tau, [1.0, 0.5, 0.0, 1.0], 0.0, 0.0, 0.0, ref)
    with pytest.raises(RuntimeError):  # gains >= 0
        cd(q, v, tau, _bits(1), -1.0, 0.0, 0.0, ref)
    # the wrapper's contact code under the strict warnings of test_wrapper_compiles_under_strict_warnings
    from pathlib import Path
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is not None:
        done = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wshadow", "-Wconversion",
                               "-Wno-sign-conversion", "-fsyntax-only", "-Dsolo12_kernels_prefix=kkca_",
                               "solo12_casadi.c"], capture_output=True, text=True, cwd=Path(lib).parent)
        assert done.returncode == 0, done.stderr


@pytest.mark.robots
def test_impulse_dynamics_external(solo):
    """solo12_impulse_dynamics equals the module and Pinocchio's impulseDynamics; its Jacobian's q and
    v blocks are impulse_dynamics_derivatives' (q in NQ coordinates) and equal central differences; the
    mask's blocks are structurally empty; restitution's is refused; bad inputs fail the evaluation."""
    import pinocchio as pin

    from codegen.read.urdf import load_urdf
    from reference.pin_reference import build_pin_model
    from reference.robot_data import robots_dir
    from tests.test_contact_dynamics import _constraints
    lib, kk = solo
    imp = ca.external("solo12_impulse_dynamics", lib)
    assert "jac_solo12_impulse_dynamics" in str(imp.jacobian())
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    pm, frames = build_pin_model(model, kk.default_params())
    data = pm.createData()
    rng = np.random.default_rng(8)
    q, v, _ = _solo_state(rng)
    xs = [ca.MX.sym("q", 19), ca.MX.sym("v", 18), ca.MX.sym("mask", 4)]
    for mask in (0b1111, 0b0110, 0b0001):
        m = 3 * bin(mask).count("1")
        v_plus, impulse = (_dense(x).ravel() for x in imp(q, v, _bits(mask), 0.4, 0.0))
        want = kk.impulse_dynamics(q, v, mask, restitution=0.4)
        _close(v_plus, want[0], 1e-14)
        _close(impulse, want[1], 1e-14)
        cms, cds = _constraints(pm, frames, model, mask)
        pin.initConstraintDynamics(pm, data, cms, cds)
        _close(v_plus, pin.impulseDynamics(pm, data, q, v, cms, cds, 0.4), 1e-10)
        _close(impulse[:m], data.impulse_c, 1e-10)
        y = ca.vertcat(*imp(*xs, 0.4, 0.0))
        J = ca.Function("J", xs, [ca.jacobian(y, x) for x in xs])
        blocks = [_dense(b) for b in J(q, v, _bits(mask))]
        D = kk.impulse_dynamics_derivatives(q, v, mask, restitution=0.4)
        _close(blocks[1], np.vstack([D[1], D[3]]), 1e-13)
        _close(blocks[0][:, 7:], np.vstack([D[0], D[2]])[:, 6:], 1e-13)

        def f(q_, v_):
            return np.concatenate(kk.impulse_dynamics(q_, v_, mask, restitution=0.4))
        for k in range(2):
            _close(blocks[k], _central(f, [q, v], k), 1e-6)
        assert not blocks[2].any() and J.sparsity_out(2).nnz() == 0
    e = ca.MX.sym("restitution")
    y = ca.vertcat(*imp(q, v, _bits(0b1111), e, 0.0))
    with pytest.raises(RuntimeError):
        ca.Function("G", [e], [ca.jacobian(y, e)])(0.4)
    for bad in (([1.0, 0.5, 0.0, 1.0], 0.0, 0.0), (_bits(1), 1.5, 0.0), (_bits(1), -0.1, 0.0), (_bits(1), 0.0, -1.0)):
        with pytest.raises(RuntimeError):
            imp(q, v, *bad)


@pytest.mark.robots
def test_opti_solo_holds_a_pose_on_four_feet(solo):
    """The smallest joint torques that hold Solo12 still on its four feet (ddq = 0 at v = 0, the
    base unactuated, the feet held), by Opti + IPOPT through the external and its Jacobian, against the same
    problem solved in closed form from Pinocchio's contact Jacobians and gravity."""
    import pinocchio as pin

    from codegen.read.urdf import load_urdf
    from reference.pin_reference import build_pin_model
    from reference.robot_data import robots_dir
    lib, kk = solo
    cd = ca.external("solo12_constrained_dynamics", lib)
    q = np.r_[0.0, 0.0, 0.25, 0.0, 0.0, 0.0, 1.0, np.tile([0.0, 0.8, -1.6], 4)]
    nv, z = kk.N_DOF, np.zeros(kk.N_DOF)
    opti = ca.Opti()
    u = opti.variable(nv - 6)
    ddq, _ = cd(q, z, ca.vertcat(ca.DM.zeros(6), u), _bits(0b1111), 0.0, 0.0, 0.0, np.zeros(12))
    opti.minimize(ca.sumsqr(u))
    # the feet held, a still base leaves the joints still too (each leg's 3 x 3 Jacobian): 6 equations
    opti.subject_to(ddq[:6] == 0)
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes",
                                                 "hessian_approximation": "limited-memory"})
    sol = opti.solve()
    assert sol.stats()["return_status"] == "Solve_Succeeded"
    us = np.asarray(sol.value(u)).ravel()
    # Pinocchio: A ddq + g = tau + Jc^T lambda with ddq = 0, tau = (0, u): the base rows fix the
    # forces up to Jc_b's null space; min |u|^2 over lambda with Jc_b^T lambda = g_b is a KKT solve
    model = load_urdf(robots_dir() / SOLO, floating_base=True, contacts=[(f, "3d") for f in FEET]).model
    pm, frames = build_pin_model(model, kk.default_params())
    data = pm.createData()
    g = pin.computeGeneralizedGravity(pm, data, q)
    pin.computeJointJacobians(pm, data, q)
    pin.updateFramePlacements(pm, data)
    Jc = np.vstack([pin.getFrameJacobian(pm, data, frames[f"contact:{f}"], pin.LOCAL_WORLD_ALIGNED)[:3]
                    for f in FEET])
    Jb, Jj = Jc[:, :6].T, Jc[:, 6:].T  # tau_j = g_j - Jj lambda, Jb lambda = g_b
    K = np.block([[Jj.T @ Jj, Jb.T], [Jb, np.zeros((6, 6))]])
    lam = np.linalg.solve(K, np.r_[Jj.T @ g[6:], g[:6]])[:12]
    _close(us, g[6:] - Jj @ lam, 1e-6)
    _close(kk.constrained_dynamics(q, z, np.r_[z[:6], us], 0b1111)[0], z, 1e-6)
