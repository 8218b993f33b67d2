"""The C ABI of one generated robot, described once.

Every consumer reads this description instead of spelling the ABI out
again: the header and source templates (declarations, documentation), the
emitter (which derivation output each kernel argument receives), the Cython
module and its type stubs, the ctypes test loader and the benchmarks.

Conventions of every function: `double` arrays, row-major, caller-owned;
inputs are `const`; outputs are completely overwritten; no allocation and
no global state. Units SI: lengths m, angles rad, masses kg, torques N m
(forces N at a prismatic joint); "frame 0" is the model's root frame (world).
The records (Arg, Function, ABI) and their vocabulary: codegen/emit/abi_records.py.
"""
from __future__ import annotations

import dataclasses

from ..read.model import Model
from .abi_records import (  # noqa: F401 (re-exported: the ABI's vocabulary)
    IN, OUT, INDEX, REAL, DERIVED, TEMPLATE, BATCH, BATCHED, INTERLEAVED, INTERLEAVE, MASS, CORIOLIS, DYNAMICS, KINEMATICS,
    IDENTIFICATION, ALL, INTERFACE, ROLLOUT_CHUNK, ID_DERIVATIVES, FD_DERIVATIVES, CONTACT, CONTACT_DERIVATIVES, FRAMES, Arg, Function, ABI,
    jacobian_name)
from .cnames import CNames, cnames

# What the shared inputs hold, in every kernel.
Q_DOC = ("configuration, NQ entries: the joints in JOINT_NAMES order, rad (revolute) or m (prismatic); on a "
         "free-flying base first its position x, y, z (m, world) and quaternion x, y, z, w")
DQ_DOC = ("velocities, NV entries: the joints' rad/s or m/s; on a free-flying base first its linear (m/s) and "
          "angular (rad/s) velocity in base axes")
DDQ_DOC = ("accelerations, NV entries: the joints' rad/s^2 or m/s^2; on a free-flying base first its linear "
           "(m/s^2) and angular (rad/s^2) acceleration in base axes")
V_DOC = DQ_DOC.replace("velocities, NV entries", "the velocity to integrate, NV entries")
# On a free-flying base the first six entries of a torque vector are the wrench on the base (docs/urdf.md).
BASE_WRENCH = "; on a free-flying base first the force (N) and moment about its origin (N m) on it, base axes"
TAU_DOC = ("joint torques (N m) or forces (N, prismatic joints), motor side (friction is subtracted)"
           + BASE_WRENCH)
P_DOC = ("the parameter vector, PARAM_NAMES order: lengths m, g m/s^2, per link m kg, MX MY MZ kg m, "
         "XX..ZZ kg m^2 about the link frame's origin, Ia kg m^2, Fv N m s/rad, Fc N m")

# What the outputs hold.
A_DOC = ("joint-space inertia matrix (NV x NV), symmetric positive definite: kg m^2 between two revolute "
         "joints, kg between two prismatic ones, kg m across; rotor inertia Ia on the diagonal; on a "
         "free-flying base its first six rows and columns are the base's, in base axes (linear first)")
C_DOC = ("Coriolis and centrifugal matrix (Christoffel symbols of the first kind; dA/dt - 2 C is skew): "
         "C dq in N m or N" + BASE_WRENCH)
Q_OUT_DOC = "gravity torques dU/dq on the left-hand side (tau = ... + Q): N m or N" + BASE_WRENCH
J_DOC = ("rows 0-2: the linear velocity of the end effector's origin (m/s per unit dq), rows 3-5: its "
         "angular velocity (rad/s per unit dq); in frame 0 (world) axes (Pinocchio's LOCAL_WORLD_ALIGNED) or "
         "the end effector's own axes (Pinocchio's LOCAL)")
DJ_DOC = ("the time derivative of the end effector's Jacobian along the motion (J's rows and axes: " + J_DOC
          + "), per unit of dq: rows 0-2 m/s^2, rows 3-5 rad/s^2 per unit dq")
FRICTION_DOC = "friction torques Fv dq + Fc sign(dq): N m or N"
TAU_OUT_DOC = "joint torques (N m) or forces (N) that produce ddq, friction included" + BASE_WRENCH
BIAS_DOC = "bias torques C(q, dq) dq + Q(q), no friction: N m or N" + BASE_WRENCH
T_DOC = ("the end effector's pose in frame 0 (world): [[R, p], [0, 0, 0, 1]], R its axes in frame 0, p its "
         "origin in m")
JDOT_DOC = ("dJ/dt dq, the end effector's classical acceleration at ddq = 0: rows 0-2 linear (m/s^2), rows "
            "3-5 angular (rad/s^2), frame 0 (world) axes")
# The regressor's columns, one per standard parameter pi[k]: Y[i, k] pi[k] is a part of tau[i], so a
# column's unit is tau's (N m; N on a prismatic joint's row) divided by its parameter's.
Y_DOC = ("the regressor Y (NV x NPI): row i joint i's torque (N m) or force (N), column k the part per unit "
         "of pi[k] = p[REGRESSOR_PARAM_INDEX[k]] (REGRESSOR_PARAMS names it), so in N m (or N) per the "
         "parameter's unit: per kg for a mass m, per kg m for a first moment MX MY MZ, per kg m^2 for an "
         "inertia XX..ZZ (about the link frame's origin, link axes) or a rotor inertia Ia, per N m s/rad for "
         "Fv (the column is dq, rad/s), per N m for Fc (the column is sign(dq), no unit)" + BASE_WRENCH)
YB_DOC = ("the base regressor Yb (NV x NBASE): the regressor's columns BASE_COLUMNS, in the units of Y's "
          "(N m or N per unit of the base parameter the column multiplies)")
BETA_DOC = ("the base parameters beta (NBASE), BASE_PARAM_NAMES order: each in the units of its leading "
            "standard parameter (kg, kg m, kg m^2, N m s/rad, N m)")
COM_DOC = "the centre of mass c, m, frame 0 (world) coordinates"
JC_DOC = ("the centre-of-mass Jacobian Jc: dc/dt = Jc dq (m/s), rows x, y, z in frame 0 (world) axes; "
          "column j in m/s per unit of dq[j]: m/rad for a revolute joint, no unit for a prismatic one")
AG_DOC = ("the centroidal momentum matrix Ag (Pinocchio's computeCentroidalMap): Ag dq = [p, L], p the linear "
          "momentum (kg m/s, rows 0-2), L the angular momentum about the centre of mass (kg m^2/s, rows 3-5), "
          "both in frame 0 (world) axes; Ia not counted")
FEXT_DOC = ("external forces, 6 per body, NBODIES x 6 row-major (Pinocchio's fext, its universe left out): "
            "body k's force (N, x y z) then moment (N m, x y z, about the body frame's origin), both in the "
            "body frame's axes (Pinocchio's LOCAL); the bodies in BODY_NAMES order: on a free-flying base first "
            "the base body, then the body each joint moves, in joint order")
Q_NEXT_DOC = ("the configuration q (+) v dt, NQ entries as q (rad, m; a free-flying base's position in m, "
              "world, and its unit quaternion x, y, z, w)")


# Kernels a build may leave out (`--kernels`): the derivative kernels, the
# largest by far (Krang: 15,341 and 35,221 operations against compute_C's
# 6,832), which dominate generation and compile time. Every other kernel is
# "core": the dispatchers, compute_all and the Python module rely on it.
# The contact kernels (a model with contacts only) are optional too: "contact_dynamics" (the
# contact Jacobian and drift, constrained and impulse dynamics) and
# "constrained_dynamics_derivatives" (which needs inverse_dynamics_derivatives and contact_dynamics).
OPTIONAL = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "contact_dynamics",
            "constrained_dynamics_derivatives")


def nbodies(model: Model) -> int:
    """The bodies that take an external force (codegen.derive.symbols.body_frames)."""
    return model.ndof - 5 if model.floating_base else model.ndof


def fext_arg(model: Model):
    return Arg("fext", (6 * nbodies(model),), IN, doc=FEXT_DOC)
CORE = "core"


def describe(model: Model, ee_idents=None, names: CNames | None = None, nbase: int | None = None,
             kernels=None) -> ABI:
    """The ABI of `model` with C names `names` (codegen.emit.cnames; default:
    cnames(model)). `nbase`: the number of base parameters the generator chose
    (codegen/derive/base_parameters.py, from the default parameters); None
    leaves the base-parameter kernels out (an ABI read from the model alone).
    `ee_idents` (older form): the C identifier of each end
    effector, used in kernel and argument names, with the model name as the
    prefix. Model strings reach the ABI's documentation as text, which each
    renderer escapes for its language (cnames.doc_lines, pytext.docstring).
    `kernels`: the OPTIONAL kernels to include (None: all of them)."""
    n, np_ = model.ndof, len(model.param_names)
    ees = model.ee_names
    if names is None and ee_idents is None:
        names = cnames(model)
    idents = tuple(names.ees if names is not None else ee_idents)
    name, macro = (names.prefix, names.macro) if names is not None else (model.name, model.name.upper())
    q, dq, p = Arg("q", (model.nq,), IN, doc=Q_DOC), Arg("dq", (n,), IN, doc=DQ_DOC), Arg("p", (np_,), IN, doc=P_DOC)
    fs = [
        Function("compute_A", "Inertia matrix A(q), NDOF x NDOF, rotor inertia included.",
                 (q, p, Arg("A", (n, n), OUT, "A", doc=A_DOC)), group=MASS),
        Function("compute_C", "Coriolis/centrifugal matrix C(q, dq) from the Christoffel symbols, NDOF x NDOF.",
                 (q, dq, p, Arg("C", (n, n), OUT, "C", doc=C_DOC)), group=CORIOLIS),
        Function("compute_Q", "Gravity torques Q(q) = dU/dq, NDOF.",
                 (q, p, Arg("Q", (n,), OUT, "Q", doc=Q_OUT_DOC)), group=DYNAMICS),
    ]
    for e, ident in zip(model.end_effectors, idents):
        for frame in FRAMES:
            axes = "frame 0 (world) axes" if frame == "world" else "its own axes"
            fs.append(Function(
                jacobian_name(ident, frame),
                f"Jacobian of end effector {e.name} (frame {e.frame}) in {axes}, 6 x NDOF, linear rows first.",
                (q, p, Arg("J", (6, n), OUT, f"J_{e.name}_{frame}", doc=J_DOC)), group=KINEMATICS))
    fs.append(Function("friction", "Friction torques Fv*dq + Fc*sign(dq), NDOF.",
                       (dq, p, Arg("tau_f", (n,), OUT, "friction", doc=FRICTION_DOC)), group=DYNAMICS))
    outs = [Arg("A", (n, n), OUT, "A", doc=A_DOC), Arg("C", (n, n), OUT, "C", doc=C_DOC),
            Arg("Q", (n,), OUT, "Q", doc=Q_OUT_DOC)]
    outs += [Arg(f"J_{ident}", (6, n), OUT, f"J_{e}_world", doc=f"its Jacobian in frame 0 (world) axes: {J_DOC}")
             for e, ident in zip(ees, idents)]
    fs.append(Function(
        "compute_all", "A, C, Q and every world-frame end-effector Jacobian in one pass (shared subexpressions).",
        (q, dq, p, *outs), group=ALL))
    fs += [
        Function("jacobian",
                 "J (6 x NDOF, linear rows first) of end effector `ee` (its position in the end-effector "
                 "list) in frame 0 = world axes or 1 = its own axes. An unknown ee or frame fills J with NaN.",
                 (q, p, Arg("ee", (), INDEX), Arg("frame", (), INDEX), Arg("J", (6, n), OUT, doc=J_DOC)), TEMPLATE),
        Function("default_params", "Writes the NP default parameter values into p.",
                 (Arg("p", (np_,), OUT),), TEMPLATE),
        Function("joint_limits",
                 "Joint limits (metadata, never enforced): lower, upper position, velocity and effort "
                 "of every joint, NDOF each; NAN where the model gives none.",
                 (Arg("lower", (n,), OUT), Arg("upper", (n,), OUT), Arg("velocity", (n,), OUT),
                  Arg("effort", (n,), OUT)), TEMPLATE),
        Function("param_name", "Name of parameter i (NULL if out of range).",
                 (Arg("i", (), INDEX),), TEMPLATE, "const char *"),
        Function("joint_name", "Name of joint i (NULL if out of range).",
                 (Arg("i", (), INDEX),), TEMPLATE, "const char *"),
    ]
    fs += controller_functions(model, idents, q, dq, p, OPTIONAL if kernels is None else kernels)
    fs += contact_functions(model, q, dq, p, OPTIONAL if kernels is None else kernels)
    fs += identification_functions(model, q, dq, p, nbase)
    fs += batch_functions(fs)
    fs += interleaved_functions(fs)
    fs += centroidal_functions(model, q, p)
    fs += rollout_functions(model, p)
    return ABI(name, f"{name}_", macro, n, np_, model.nq, ees, tuple(fs))


def controller_functions(model: Model, idents, q, dq, p, optional=OPTIONAL) -> list:
    """Inverse and forward dynamics, their derivatives, end-effector poses and J-dot q-dot."""
    n = model.ndof
    ddq, tau = Arg("ddq", (n,), IN, doc=DDQ_DOC), Arg("tau", (n,), IN, doc=TAU_DOC)
    fs = [
        Function("inverse_dynamics",
                 "Inverse dynamics tau = A(q) ddq + C(q, dq) dq + Q(q) + friction(dq), rotor inertia "
                 "included (recursive Newton-Euler), NDOF.",
                 (q, dq, ddq, p, Arg("tau", (n,), OUT, "tau", doc=TAU_OUT_DOC)), group=DYNAMICS),
        Function("bias", "Bias torques h = C(q, dq) dq + Q(q) (no friction), NDOF.",
                 (q, dq, p, Arg("h", (n,), OUT, "h", doc=BIAS_DOC)), group=DYNAMICS),
        Function("forward_dynamics",
                 "Forward dynamics ddq = A(q)^-1 (tau - C(q, dq) dq - Q(q) - friction(dq)) by the sparse "
                 "LTDL factorization of A (no pivoting: A must be positive definite, as it is for physical "
                 "parameters where every joint moves some inertia or has Ia > 0), NDOF.",
                 (q, dq, tau, p, Arg("ddq", (n,), OUT, "ddq", doc=DDQ_DOC)), group=DYNAMICS),
        Function("inverse_dynamics_fext",
                 "inverse_dynamics with an external force on every body (Pinocchio's rnea with fext): "
                 "tau = A ddq + C dq + Q + friction - sum_k J_k^T fext_k, J_k body k's Jacobian in its "
                 "own frame, NDOF.",
                 (q, dq, ddq, p, fext_arg(model), Arg("tau", (n,), OUT, "tau_fext", doc=TAU_OUT_DOC)),
                 group=DYNAMICS),
        Function("forward_dynamics_fext",
                 "forward_dynamics with an external force on every body (Pinocchio's aba with fext): "
                 "ddq = A^-1 (tau - C dq - Q - friction + sum_k J_k^T fext_k), NDOF.",
                 (q, dq, tau, p, fext_arg(model), Arg("ddq", (n,), OUT, "ddq_fext", doc=DDQ_DOC)),
                 group=DYNAMICS),
    ]
    fs += [f for f in derivative_functions(model, q, p) if f.name.removesuffix("_fext") in optional]
    for e, ident in zip(model.end_effectors, idents):
        fs.append(Function(
            f"fk_{ident}", f"Pose of end effector {e.name} (frame {e.frame}) in frame 0: 4 x 4 homogeneous.",
            (q, p, Arg("T", (4, 4), OUT, f"T_{e.name}", doc=T_DOC)), family="fk", group=KINEMATICS))
        fs.append(Function(
            f"jdot_qdot_{ident}",
            f"Jdot*dq of end effector {e.name} (frame {e.frame}): its classical acceleration at ddq = 0, "
            "6, linear first, frame 0 (world) axes.",
            (q, dq, p, Arg("a", (6,), OUT, f"jdot_qdot_{e.name}", doc=JDOT_DOC)), family="jdot_qdot",
            group=KINEMATICS))
    for e, ident in zip(model.end_effectors, idents):
        for frame in FRAMES:
            axes = "frame 0 (world) axes" if frame == "world" else "its own axes"
            fs.append(Function(
                f"frame_jacobian_time_variation_{ident}_{frame}",
                f"dJ/dt of end effector {e.name} (frame {e.frame}) in {axes} at (q, dq), 6 x NDOF.",
                (q, dq, p, Arg("dJ", (6, n), OUT, f"dJ_{e.name}_{frame}", doc=DJ_DOC)), group=KINEMATICS))
    fs += [
        Function("frame_jacobian_time_variation",
                 "dJ/dt (6 x NDOF, linear rows first) of end effector `ee` at (q, dq), the time derivative "
                 "of jacobian(q, p, ee, frame) along the motion (Pinocchio's getFrameJacobianTimeVariation, "
                 "frame 0 = LOCAL_WORLD_ALIGNED, 1 = LOCAL): dJ dq is the end effector's acceleration at "
                 "ddq = 0 (world: jdot_qdot, the classical one). An unknown ee or frame fills dJ with NaN.",
                 (q, dq, p, Arg("ee", (), INDEX), Arg("frame", (), INDEX), Arg("dJ", (6, n), OUT, doc=DJ_DOC)),
                 TEMPLATE),
        Function("fk",
                 "Pose (4 x 4 homogeneous, frame 0) of end effector `ee` (its position in the end-effector "
                 "list). An unknown ee fills T with NaN.",
                 (q, p, Arg("ee", (), INDEX), Arg("T", (4, 4), OUT, doc=T_DOC)), TEMPLATE),
        Function("jdot_qdot",
                 "Jdot*dq (6, linear first, world axes) of end effector `ee`: its classical acceleration "
                 "at ddq = 0. An unknown ee fills a with NaN.",
                 (q, dq, p, Arg("ee", (), INDEX), Arg("a", (6,), OUT, doc=JDOT_DOC)), TEMPLATE),
    ]
    return fs


MASK_DOC = ("the active contacts: bit k set for contact k (CONTACT_NAMES order); the active contacts' rows come "
            "first in every stacked output, in contact order, the rest are zeros; bits of no contact are ignored")
JC_ALL_DOC = ("every contact's rows, in contact order: a 3d contact 3 (the velocity of its point, m/s per unit dq, "
              "world axes: Pinocchio's LOCAL_WORLD_ALIGNED), a 6d contact 6 (its twist, linear then angular, its "
              "own axes: LOCAL)")
GAMMA_DOC = ("the contact acceleration at ddq = 0 (dJc/dt dq), rows as Jc's: a 3d contact's classical "
             "acceleration (m/s^2, world axes), a 6d contact's spatial acceleration (its own axes)")
LAMBDA_DOC = ("the contact forces, rows as Jc's (the active contacts' first, zeros after): a 3d contact's force "
              "on the robot (N, world axes), a 6d contact's force (N) and moment (N m) about its origin, its "
              "own axes; A ddq + b = tau + Jc^T lambda_c")
REF_DOC = ("the reference placement of every contact for the Baumgarte position term (kp), NREF entries, "
           "CONTACT_NAMES order: a 3d contact's point x y z (m, world; the error is the point's position minus "
           "it), a 6d contact's pose as 12 entries, the first three rows of its 4 x 4 transform [R | p] row-major "
           "(R a rotation, its axes in the world; p m, world; the error is log6(ref^-1 oMc) in the contact's axes, "
           "Pinocchio's); read only when kp != 0")
KP_DOC = "Baumgarte position gain (1/s^2): the contact acceleration is driven to -kd vc - kp e (e: the placement error)"
KD_DOC = "Baumgarte velocity gain (1/s)"
MU_DOC = ("proximal damping (>= 0): 0 solves the contact system exactly (it must have full rank); > 0 makes redundant "
          "contacts well posed (proximal iterations, the exact solution where one exists, the least-squares one "
          "otherwise)")


def contact_functions(model: Model, q, dq, p, optional=OPTIONAL) -> list:
    """The contact kernels (docs/contact-dynamics.md; derivation: codegen/derive/contacts.py,
    the dense contact system in the source template)."""
    if not model.contacts or "contact_dynamics" not in optional:
        return []
    n, nr, nc = model.ndof, model.contact_rows, len(model.contacts)
    tau = Arg("tau", (n,), IN, doc=TAU_DOC)
    mask = Arg("mask", (), INDEX, doc=MASK_DOC)
    kp, kd, mu = Arg("kp", (), REAL, doc=KP_DOC), Arg("kd", (), REAL, doc=KD_DOC), Arg("mu", (), REAL, doc=MU_DOC)
    ref = Arg("ref", (model.contact_ref_size,), IN, doc=REF_DOC)
    jc = lambda source="": Arg("Jc", (nr, n), OUT, source, doc="the contact Jacobian: " + JC_ALL_DOC)  # noqa: E731
    gamma = lambda source="": Arg("gamma", (nr,), OUT, source, doc=GAMMA_DOC)  # noqa: E731
    fs = [
        Function("contact_jacobian_all", "The contact Jacobian of every contact, NROWS x NDOF (contact_jacobian "
                 "with every contact active).", (q, p, jc("contact_jacobians")), group=CONTACT),
        Function("contact_drift_all", "The contact drift dJc/dt dq of every contact, NROWS (contact_drift with every "
                 "contact active).", (q, dq, p, gamma("contact_drifts")), group=CONTACT),
        Function("contact_system",
                 "Every contact's operational-space system at (q, dq, tau), what the contact dynamics solve "
                 "reads, in one pass: the free acceleration ddq0 = A^-1 (tau - b) (b = C dq + Q + friction), "
                 "the contacts' acceleration at it a0 = Jc ddq0 + gamma, their velocity vc = Jc dq, "
                 "the Delassus matrix G = Jc A^-1 Jc^T, and with A = L^T D L (sparse, no fill-in) "
                 "Z = Jc L^-1 D^-1, L and D^-1, so that A^-1 Jc^T lambda = L^-1 (Z^T lambda); the contacts' "
                 "placements (pc, Rc).",
                 (q, dq, tau, p, Arg("ddq0", (n,), OUT, "free_ddq", doc="the free acceleration, as ddq"),
                  Arg("a0", (nr,), OUT, "free_contact_acc", doc="Jc ddq0 + gamma, rows as Jc's"),
                  Arg("vc", (nr,), OUT, "contact_velocity", doc="Jc dq, rows as Jc's"),
                  Arg("Z", (nr, n), OUT, "contact_Z", doc="Jc L^-1 D^-1, rows as Jc's"),
                  Arg("L", (n, n), OUT, "contact_L", doc="the unit lower triangular factor of A = L^T D L "
                      "below its diagonal (zero elsewhere)"),
                  Arg("Dinv", (n,), OUT, "contact_Dinv", doc="the reciprocals of D's diagonal"),
                  Arg("G", (nr, nr), OUT, "contact_G", doc="Jc A^-1 Jc^T, rows and columns as Jc's rows"),
                  Arg("pc", (nc, 3), OUT, "contact_positions", doc="every contact origin's position (m, world)"),
                  Arg("Rc", (nc, 9), OUT, "contact_rotations", doc="every contact frame's axes in the world, "
                      "its rotation matrix row-major")),
                 group=CONTACT),
        Function("contact_delassus",
                 "contact_system's velocity-level part (an impact's system, no bias forces): every contact's "
                 "velocity vc = Jc dq, Z, L and G = Jc A^-1 Jc^T.",
                 (q, dq, p, Arg("vc", (nr,), OUT, "contact_velocity", doc="Jc dq, rows as Jc's"),
                  Arg("Z", (nr, n), OUT, "contact_Z", doc="Jc L^-1 D^-1, rows as Jc's"),
                  Arg("L", (n, n), OUT, "contact_L", doc="the factor L of A = L^T D L below its diagonal"),
                  Arg("G", (nr, nr), OUT, "contact_G", doc="Jc A^-1 Jc^T, rows and columns as Jc's rows")),
                 group=CONTACT),
        Function("contact_jacobian", "The contact Jacobian of the active contacts, stacked (Pinocchio's "
                 "getConstraintsJacobian), NROWS x NDOF, the active rows first.", (q, p, mask, jc()), TEMPLATE),
        Function("contact_drift", "The drift dJc/dt dq of the active contacts, NROWS, the active rows first: "
                 "the contact acceleration is Jc ddq + gamma.", (q, dq, p, mask, gamma()), TEMPLATE),
        Function("constrained_dynamics",
                 "Forward dynamics with the active contacts held (Pinocchio's constraintDynamics): the solution "
                 "(ddq, lambda_c) of A ddq - Jc^T lambda_c = tau - b, Jc ddq + gamma = -kd Jc dq - kp e, "
                 "through the sparse LTDL factorization of A and the dense contact system Jc A^-1 Jc^T "
                 "(+ mu I with proximal iterations when mu > 0). A contact system that is not positive definite "
                 "with mu = 0 (redundant contacts) fills ddq and lambda_c with NaN.",
                 (q, dq, tau, p, mask, kp, kd, mu, ref, Arg("ddq", (n,), OUT, doc=DDQ_DOC),
                  Arg("lambda_c", (nr,), OUT, doc=LAMBDA_DOC)), TEMPLATE),
        Function("impulse_dynamics",
                 "The velocity after an impact of the active contacts (Pinocchio's impulseDynamics): v_plus = "
                 "dq + A^-1 Jc^T impulse with Jc v_plus = -restitution Jc dq (0: "
                 "a plastic impact, 1: elastic).",
                 (q, dq, p, mask, Arg("restitution", (), REAL, doc="coefficient of restitution, 0 to 1"), mu,
                  Arg("v_plus", (n,), OUT, doc="the velocities after the impact, as dq"),
                  Arg("impulse", (nr,), OUT, doc="the contact impulses (N s; N m s), rows as lambda_c's")), TEMPLATE),
    ]
    if "constrained_dynamics_derivatives" not in optional:
        return fs
    v = Arg("v", (n,), IN, "dq", doc="joint velocities dq (rad/s or m/s; a free-flyer's six first)")
    mat = lambda name, rows, doc, source="": Arg(name, (rows, n), OUT, source or name, doc=doc)  # noqa: E731
    # (q, v, a, p, lambda_c) and the contact rows' derivatives: sources "" (contact_derivatives')
    # or "c" (contact_dynamics_derivatives', codegen/derive/contacts.py)
    state = (q, v, Arg("a", (n,), IN, "ddq", doc=DDQ_DOC), p,
             Arg("lambda_c", (nr,), IN, "lam", doc="every contact's force, rows as contact_jacobian_all's"))
    rows = lambda c: (mat("dac_dq", nr, "d(Jc a + gamma)/dq", c and "dacc_dq"),  # noqa: E731
                      mat("dac_dv", nr, "d(Jc a + gamma)/dv", c and "dacc_dv"),
                      mat("dvc_dq", nr, "d(Jc v)/dq", c and "dvcc_dq"))
    fs += [
        Function("inverse_inertia", "The inverse of the inertia matrix, A(q)^-1 (NDOF x NDOF), from the sparse LTDL "
                 "factorization (Pinocchio's computeMinverse).",
                 (q, p, Arg("Minv", (n, n), OUT, "Ainv", doc="A^-1")), group=CONTACT_DERIVATIVES),
        Function("contact_derivatives",
                 "The contact terms of the constrained dynamics' derivatives at (q, v, a, lambda_c) (every "
                 "contact, rows as contact_jacobian_all's; the q-derivatives on the tangent space as the "
                 "inverse dynamics'): d(Jc^T lambda_c)/dq at lambda_c fixed in the contacts' axes, and the "
                 "derivatives of the contact acceleration Jc a + gamma and velocity Jc v.",
                 (*state, Arg("dJtf_dq", (n, n), OUT, "dJtf_dq", doc="d(Jc^T lambda_c)/dq"), *rows("")),
                 group=CONTACT_DERIVATIVES),
        Function("contact_dynamics_derivatives",
                 "The model terms of constrained_dynamics_derivatives at (q, v, a, lambda_c) in one pass of "
                 "kinematics: the derivatives of ID(q, v, a) - Jc^T lambda_c (inverse_dynamics_derivatives' "
                 "with the contact forces as external forces, lambda_c fixed in the contacts' axes) and "
                 "contact_derivatives' dac_dq, dac_dv and dvc_dq.",
                 (*state, Arg("dF_dq", (n, n), OUT, "dtauc_dq", doc="d(ID(q, v, a) - Jc^T lambda_c)/dq"),
                  Arg("dF_dv", (n, n), OUT, "dtauc_dv", doc="d ID(q, v, a)/dv (friction's included)"), *rows("c")),
                 group=CONTACT_DERIVATIVES),
        Function("constrained_dynamics_derivatives",
                 "Derivatives of constrained_dynamics (Pinocchio's computeConstraintDynamicsDerivatives): of "
                 "ddq and lambda_c with respect to q (tangent space), v and tau, from the inverse dynamics' "
                 "derivatives at the solution with the contact forces as external forces and the contact "
                 "acceleration's, through the same KKT system.",
                 (q, v, tau, p, mask, kp, kd, mu, ref,
                  Arg("dddq_dq", (n, n), OUT, doc="d ddq / dq"), Arg("dddq_dv", (n, n), OUT, doc="d ddq / dv"),
                  Arg("dddq_dtau", (n, n), OUT, doc="d ddq / d tau"),
                  Arg("dlambda_dq", (nr, n), OUT, doc="d lambda_c / dq, rows as lambda_c's"),
                  Arg("dlambda_dv", (nr, n), OUT, doc="d lambda_c / dv"),
                  Arg("dlambda_dtau", (nr, n), OUT, doc="d lambda_c / d tau")), TEMPLATE),
        Function("impulse_dynamics_derivatives",
                 "Derivatives of impulse_dynamics (Pinocchio's computeImpulseDynamicsDerivatives): of v_plus and "
                 "the impulse with respect to q (tangent space) and the velocities before the impact, through "
                 "the same KKT system as constrained_dynamics_derivatives, its q terms those of "
                 "A(q) (v_plus - dq) - Jc^T impulse (contact_dynamics_derivatives at dq = 0 without gravity) and "
                 "of Jc (v_plus + restitution dq) (contact_derivatives). Pinocchio's ddq_dv holds dv_plus_dv - I "
                 "(the jump's derivative).",
                 (q, dq, p, mask, Arg("restitution", (), REAL, doc="coefficient of restitution, 0 to 1"), mu,
                  Arg("dv_plus_dq", (n, n), OUT, doc="d v_plus / dq"),
                  Arg("dv_plus_dv", (n, n), OUT, doc="d v_plus / d dq"),
                  Arg("dimpulse_dq", (nr, n), OUT, doc="d impulse / dq, rows as the impulse's"),
                  Arg("dimpulse_dv", (nr, n), OUT, doc="d impulse / d dq")), TEMPLATE),
    ]
    return fs


def regressor_columns(model: Model) -> tuple:
    """Index in p of each regressor column (codegen/derive/regressor.py): every
    parameter but the geometry and g, in p order."""
    first = len(model.geometry) + 1
    return tuple(range(first, len(model.param_names)))


def identification_functions(model: Model, q, dq, p, nbase=None) -> list:
    """The joint-torque regressor and, given nbase, the base parameters (docs/identification.md)."""
    n, npi = model.ndof, len(regressor_columns(model))
    ddq = Arg("ddq", (n,), IN, doc=DDQ_DOC)
    base = [] if nbase is None else [
        Function("base_regressor",
                 "Base regressor Yb(q, dq, ddq), NDOF x NBASE, full column rank: the independent columns of "
                 "Y (base_regressor_column). inverse_dynamics(q, dq, ddq, p) = Yb . base_params(p) for every "
                 "p with the geometry recorded at generation time; Yb reads only the geometry and g of p.",
                 (q, dq, ddq, p, Arg("Yb", (n, nbase), OUT, "Yb", doc=YB_DOC))),
        Function("base_params",
                 "Base (identifiable) parameters beta = K pi, NBASE: the linear combinations of the standard "
                 "parameters that Yb multiplies (base_param_name). K was computed at generation time for the "
                 "recorded default geometry, which it assumes.",
                 (p, Arg("beta", (nbase,), OUT, "beta", doc=BETA_DOC))),
        Function("base_param_name",
                 "Base parameter i as text, e.g. \"ZZ_2 + l2**2*m_3 + ZZ_3\" (NULL if out of range).",
                 (Arg("i", (), INDEX),), TEMPLATE, "const char *"),
        Function("base_regressor_column",
                 "The regressor column (0 <= k < NPI) that base regressor column i holds (-1 if out of range).",
                 (Arg("i", (), INDEX),), TEMPLATE, "int"),
    ]
    return [
        Function("regressor",
                 "Joint-torque regressor Y(q, dq, ddq), NDOF x NPI: inverse_dynamics(q, dq, ddq, p) = Y . pi "
                 "with pi[k] = p[regressor_param_index(k)], the ten standard inertial parameters of every "
                 "link and each joint's Ia, Fv, Fc. Y reads only the geometry and g entries of p. Column k is in "
                 "N m (N on a prismatic joint's row) per unit of pi[k].",
                 (q, dq, Arg("ddq", (n,), IN, doc=DDQ_DOC), p, Arg("Y", (n, npi), OUT, "Y", doc=Y_DOC)),
                 group=IDENTIFICATION),
        Function("regressor_param_index",
                 "Index in p of regressor column k, 0 <= k < NPI (-1 if out of range).",
                 (Arg("k", (), INDEX),), TEMPLATE, "int"),
        *base,
    ]


def derivative_functions(model: Model, q, p) -> list:
    """Derivatives of inverse and forward dynamics (derivation: codegen/derive/dynamics_derivatives.py)."""
    n = model.ndof
    v = Arg("v", (n,), IN, "dq", doc="joint velocities dq (rad/s or m/s; a free-flyer's six first)")
    a = Arg("a", (n,), IN, "ddq", doc=DDQ_DOC)
    tau = Arg("tau", (n,), IN, doc=TAU_DOC)
    docs = {"dtau_dq": "d tau / dq (row i: torque i; a free-flyer's q-columns on the tangent space)",
            "dtau_dv": "d tau / dv", "dddq_dq": "d ddq / dq (a free-flyer's q-columns on the tangent space)",
            "dddq_dv": "d ddq / dv", "Minv": "d ddq / d tau = A^-1"}
    mat = lambda name: Arg(name, (n, n), OUT, name, doc=docs[name])  # noqa: E731
    fext = fext_arg(model)
    derived = [
        Function("inverse_dynamics_derivatives_fext",
                 "Derivatives of inverse_dynamics_fext at (q, v, a, fext): dtau_dq = d tau / dq and dtau_dv = d tau / dv, "
                 "NDOF x NDOF each, row-major, row i = joint torque i (d tau / da is A: compute_A). Friction: "
                 "the viscous term gives diag(Fv) in dtau_dv; Coulomb's Fc*sign(v) contributes 0 (its "
                 "derivative away from v = 0, returned at v = 0 too). Free-flying base: the q-derivative "
                 "is on the tangent space (Pinocchio's convention: q (+) delta through integrate, delta "
                 "a base-frame twist, linear first), so dtau_dq has NV columns. External forces fext as "
                 "in inverse_dynamics_fext, fixed in their bodies (Pinocchio's computeRNEADerivatives "
                 "with fext).",
                 (q, v, a, p, fext, mat("dtau_dq"), mat("dtau_dv")), group=ID_DERIVATIVES),
        Function("forward_dynamics_derivatives_fext",
                 "Derivatives of forward_dynamics_fext at (q, v, tau, fext): dddq_dq = d ddq / dq, dddq_dv = d ddq / dv "
                 "and Minv = d ddq / d tau = A^-1, NDOF x NDOF each, row-major (Carpentier and Mansard 2018: "
                 "-A^-1 times the inverse dynamics' derivatives at a = ddq; A^-1 by the sparse LTDL "
                 "factorization, so A must be positive definite as for forward_dynamics). Coulomb friction "
                 "contributes 0 as in inverse_dynamics_derivatives. External forces fext as in "
                 "forward_dynamics_fext (Pinocchio's computeABADerivatives with fext).",
                 (q, v, tau, p, fext, mat("dddq_dq"), mat("dddq_dv"), mat("Minv")), group=FD_DERIVATIVES),
    ]
    # the forms without external forces call those with fext = 0 (one body of code each)
    plain = [dataclasses.replace(
        f, name=f.name.removesuffix("_fext"), body=TEMPLATE, group="", forward_to=f.name,
        doc=f.doc.replace("_fext at", " at").replace(", fext)", ")").split(" External forces")[0] + " No external force "
        f"({f.name} with fext = 0).", args=tuple(a for a in f.args if a.name != "fext")) for f in derived]
    return [x for pair in zip(derived, plain) for x in pair]


def batch_functions(fs) -> list:
    """PFX_compute_A_batch(int n, const double *q, const double *p, double *A)
    and PFX_compute_C_batch(int n, q, dq, p, C): the scalar kernel for n
    states (q, dq: n x NDOF row-major; outputs n x NDOF x NDOF; one p for all),
    several states per instruction where the compiler has vector extensions."""
    out = []
    for f in fs:
        if f.name not in BATCHED:
            continue
        args = tuple(a if a.name == "p" else dataclasses.replace(a, batched=True) for a in f.args)
        out.append(Function(
            f"{f.name}_batch",
            f"{f.name} for n states: every per-state array holds n of them, consecutive (q, dq: n x NDOF "
            "row-major), one p for all; results equal to the scalar kernel's to rounding. Outputs must not "
            "overlap inputs. n <= 0 writes nothing.",
            (Arg("n", (), INDEX), *args), BATCH, batch_of=f.name,
            # a part of its own beside the kernel it reprints (a forwarding scalar form's target):
            # the derivative batches compile longer than their scalar kernels, and apart the two
            # cores share them (codegen/build/compiler.py, longest first)
            group=f"{next((g.group for g in fs if g.name == f.forward_to), '') or f.group or f.name} batch"))
    return out


# Interleaved outputs of at least this many bytes go out with non-temporal stores where the build
# has them (AVX, AVX-512): larger than a core's L2, they would only evict the caller's data
# (measured: benchmarks/batch_layout.py, docs/c-abi.md).
STREAM_BYTES = 1 << 21
INTERLEAVED_LAYOUT = (
    f"by blocks of {INTERLEAVE} states (whatever the build's lane count, so every build writes the same "
    f"layout): block b holds states {INTERLEAVE}b .. {INTERLEAVE}b + {INTERLEAVE - 1}, element k of state "
    f"{INTERLEAVE}b + l at out[(b * K + k) * {INTERLEAVE} + l]; ceil(n / {INTERLEAVE}) blocks, "
    "the padding lanes of the last block hold the last state's results again (defined values, never read "
    "past the n states' inputs)")


def interleaved_functions(fs) -> list:
    """PFX_compute_A_batch_interleaved(n, q, p, packed, A) and
    PFX_compute_C_batch_interleaved(n, q, dq, p, C): the row-major batch kernels'
    statements with the outputs lane-interleaved (INTERLEAVED_LAYOUT), for callers
    that consume many matrices across states; PFX_cholesky_batch_interleaved and
    PFX_solve_batch_interleaved, a consumer in that layout (the source template)."""
    out = []
    names = {f.name for f in fs}
    for scalar, packable in (("compute_A", True), ("compute_C", False)):
        if f"{scalar}_batch" not in names:
            continue
        f = next(g for g in fs if g.name == f"{scalar}_batch")
        mat = f.outputs[0]
        k = "K = NV * NV (row-major)" + (", or NV (NV + 1) / 2 when packed != 0 (the lower triangle, row by row: "
                                         "(i, j), j <= i, at k = i (i + 1) / 2 + j; A is symmetric)" if packable else "")
        args = [a for a in f.args if a.role != OUT]
        if packable:
            args.append(Arg("packed", (), INDEX))
        out.append(Function(
            f"{scalar}_batch_interleaved",
            f"{scalar}_batch with the output lane-interleaved: {INTERLEAVED_LAYOUT}; {k}. "
            f"The output holds ceil(n / {INTERLEAVE}) x K x {INTERLEAVE} doubles. Inputs as {scalar}_batch's "
            f"(n x NQ row-major), results equal to the scalar kernel's to rounding. Outputs of {STREAM_BYTES} bytes "
            "or more, 64-byte aligned, are written with non-temporal stores where the build has AVX (they bypass "
            "the caches). Outputs must not overlap inputs. n <= 0 writes nothing.",
            # shape: one block's largest (generic callers, reference.abi_ctypes, allocate it for n <= 8)
            (*args, dataclasses.replace(mat, shape=(mat.size, INTERLEAVE), batched=False, blocked=True,
                                        doc=f"{mat.name} of every state, interleaved as above")),
            INTERLEAVED, batch_of=f.name))
    if "compute_A_batch_interleaved" in names | {f.name for f in out}:
        nv = next(a for a in fs if a.name == "compute_A").outputs[0].shape[0]
        tri = (nv * (nv + 1) // 2, INTERLEAVE)  # per block (`blocked`: ceil(n / INTERLEAVE) of them)
        out.append(Function(
            "cholesky_batch_interleaved",
            f"Cholesky factors of n symmetric matrices in compute_A_batch_interleaved's packed layout "
            f"(ceil(n / {INTERLEAVE}) blocks of NV (NV + 1) / 2 x {INTERLEAVE}): the lower-triangular L with "
            "A = L L^T, packed the same way, computed across the 8 states of a block at once. L may be A "
            "(in place). A lane whose matrix is not positive definite gets NaN in L from the first failing "
            "pivot on (the other lanes are unaffected). n <= 0 writes nothing.",
            (Arg("n", (), INDEX), Arg("A", tri, IN, blocked=True, doc="packed interleaved matrices"),
             Arg("L", tri, OUT, blocked=True, doc="their Cholesky factors, packed interleaved")), TEMPLATE))
        out.append(Function(
            "solve_batch_interleaved",
            "x = A^-1 b for n states from the Cholesky factors L of cholesky_batch_interleaved (forward then "
            "back substitution, across the 8 states of a block at once); b and x n x NV row-major, as the batch "
            "kernels' vectors. x may be b (in place). n <= 0 writes nothing.",
            (Arg("n", (), INDEX), Arg("L", tri, IN, blocked=True, doc="packed interleaved Cholesky factors"),
             Arg("b", (nv,), IN, batched=True, doc="right-hand sides, n x NV"),
             Arg("x", (nv,), OUT, batched=True, doc="solutions, n x NV")), TEMPLATE))
    return out


def centroidal_functions(model: Model, q, p) -> list:
    """Centre of mass, centroidal momentum and configuration-space kernels
    (derivation: codegen/derive/centroidal.py, integrate and neutral in the
    source template). q has NQ entries: the joints' angles (rad, revolute and
    continuous joints) and displacements (m, prismatic), after [x, y, z, qx, qy, qz, qw]
    on a free-flying base; v has NV. integrate is Pinocchio's integrate: on the base
    M' = M exp6(v_b dt) (p' = p + R V(w dt) v_lin dt, quat' = quat * exp3(w dt),
    normalized; V(phi) = I + (1 - cos t)/t^2 hat(phi) + (t - sin t)/t^3 hat(phi)^2,
    t = |phi|, with a Taylor branch below 1e-4), q + v dt on the joints."""
    n = model.ndof
    moved = ("The mass counted is that of the links the joints move (links fixed to the world are left out, "
             "as in Pinocchio); M is its total, > 0 for physical parameters.")
    return [
        Function("com", f"Centre of mass c(q) of the robot, 3, in frame 0 (world) coordinates, m. {moved}",
                 (q, p, Arg("c", (3,), OUT, "com", doc=COM_DOC)), group=KINEMATICS),
        Function("com_jacobian",
                 "Jacobian of the centre of mass Jc(q), 3 x NDOF row-major, frame 0 (world) axes: "
                 f"dc/dt = Jc dq (m/s). Equal to the first three rows of centroidal_map divided by M. {moved}",
                 (q, p, Arg("Jc", (3, n), OUT, "com_jacobian", doc=JC_DOC)), group=KINEMATICS),
        Function("centroidal_map",
                 "Centroidal momentum matrix Ag(q), 6 x NDOF row-major (Pinocchio's computeCentroidalMap): "
                 "Ag dq is the momentum of the robot, rows 0-2 linear (kg m/s), rows 3-5 angular about the "
                 "centre of mass (kg m^2/s), both in frame 0 (world) axes. Rotor inertia Ia is not counted. "
                 + moved,
                 (q, p, Arg("Ag", (6, n), OUT, "centroidal_map", doc=AG_DOC)), group=KINEMATICS),
        Function("integrate",
                 "q_out = q (+) v dt, Pinocchio's integrate: q (NQ; rad for revolute and continuous joints, "
                 "one angle each, not Pinocchio's cos/sin pair; m for prismatic ones), v (NV; rad/s, m/s), "
                 "dt (s) -> q_out (NQ). Joints: q + v dt (multiply-adds may be fused). A free-flying base "
                 "moves by the SE(3) exponential of its velocity (base axes) times dt; its quaternion is "
                 "normalized after the step, so q_out's is unit whatever q's norm.",
                 (q, Arg("v", (n,), IN, doc=V_DOC), Arg("dt", (), REAL), Arg("q_out", (model.nq,), OUT, doc=Q_NEXT_DOC)), TEMPLATE),
        Function("neutral",
                 "The neutral configuration (Pinocchio's neutral: every joint at 0, whatever its limits; a "
                 "free-flying base at the origin with the identity quaternion (0, 0, 0, 1)), NQ.",
                 (Arg("q", (model.nq,), OUT),), TEMPLATE),
    ]


def rollout_functions(model: Model, p) -> list:
    """NAME_rollout and NAME_rollout_rk4: n states stepped `steps` times by semi-implicit Euler
    through forward_dynamics_batch and integrate (templates/c/kernels.c.j2).
    State-major arrays (n x steps x ...), as MuJoCo's rollout has them: any
    range of states is one contiguous slice of every array, so callers (the
    Python module's threads) split the work by pointers; the C copies each
    chunk's current step into contiguous stack arrays for the batch kernel."""
    n, nq = model.ndof, model.nq
    per = dict(batched=True, stepped=True)
    euler = Function(
        "rollout",
        "Rolls n independent states forward `steps` steps of dt seconds by semi-implicit (symplectic) Euler, "
        "the scheme of MuJoCo's Euler integrator: v' = v + dt forward_dynamics(q, v, tau_k), "
        "q' = integrate(q, v', dt) (the SE(3) exponential on a free-flying base). State-major, row-major: q0 "
        "n x NQ, v0 n x NV, tau n x steps x NV (state i's torques at step k: tau[(i * steps + k) * NV ...]), "
        "q_out n x steps x NQ and v_out n x steps x NV the state after each step (the initial state is not "
        f"repeated). The states go by chunks of {ROLLOUT_CHUNK} through forward_dynamics_batch (SIMD across "
        f"states) with work arrays on the stack. Outputs must not overlap inputs. n <= 0 or steps <= 0 writes "
        "nothing; dt is not checked.",
        (Arg("n", (), INDEX), Arg("steps", (), INDEX), Arg("dt", (), REAL, doc="the time step, s"),
         Arg("q0", (nq,), IN, "q", batched=True, doc="initial configurations, n x NQ (q: " + Q_DOC + ")"),
         Arg("v0", (n,), IN, "dq", batched=True, doc="initial velocities, n x NV (" + DQ_DOC + ")"),
         Arg("tau", (n,), IN, **per, doc="torques, n x steps x NV, held over each step (" + TAU_DOC + ")"),
         p,
         Arg("q_out", (nq,), OUT, **per, doc="configurations after each step, n x steps x NQ (as q)"),
         Arg("v_out", (n,), OUT, **per, doc="velocities after each step, n x steps x NV (as dq)")),
        TEMPLATE)
    rk4 = dataclasses.replace(
        euler, name="rollout_rk4",
        doc="rollout with the classical Runge-Kutta method of order 4 instead of Euler: four forward_dynamics "
            "calls per step, at (q, v), (q (+) v1 dt/2, v + k1 dt/2), (q (+) v2 dt/2, v + k2 dt/2) and "
            "(q (+) v3 dt, v + k3 dt) (v1 = v, v2, v3 the stages' velocities, k1..k4 their accelerations), then "
            "v' = v + dt (k1 + 2 k2 + 2 k3 + k4) / 6, q' = integrate(q, (v1 + 2 v2 + 2 v3 + v4) / 6, dt). Order 4 on "
            "a fixed base; on a free-flying base the stages' base velocities are combined without the "
            "exponential's correction, as MuJoCo's RK4 does. Same arguments and layouts as rollout.")
    return [euler, rk4]
