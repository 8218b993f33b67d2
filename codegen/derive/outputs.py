"""The derivation stage: model -> symbolic outputs. Knows nothing of C.

`derive(model)` returns the outputs as matrices over a shared straight-line
program of intermediate variables (the fast, structured form that emission
turns into C). `closed_form(model, method)` gives plain SymPy expressions in
q, dq and the parameters, for small models and tests; method "lagrange" is
the seed's energy method, "recursive" inlines the structured derivation.
"""
from __future__ import annotations

from . import dynamics_derivatives as dd
from . import contacts, fk, lagrangian, rnea
from . import forward_dynamics as fd
from .centroidal import centroidal
from .derivation import Derivation
from .christoffel import coriolis_matrix
from .composite_inertia import composite_inertias, gravity_vector, inertia_matrix
from .friction import friction
from .jacobians import jacobians, rates
from .kinematics import Kinematics
from ..read.model import Model
from ..support.progress import stage
from .program import Program
from .regressor import regressor
from .subtrees import all_split, coriolis_split, inertia_split
from .symbols import Symbols


def derive(model: Model, share=(), derivatives=("inverse", "forward", "contact"), ready=None) -> Derivation:
    """`derivatives`: the derivatives of inverse and forward dynamics to derive
    ("inverse", "forward"; codegen/derive/dynamics_derivatives.py) and the contact terms of the
    constrained dynamics' ("contact"; codegen/derive/contacts.py), derived last so that the other
    outputs' statements are the same with or without them. `share`: the outputs ("A", "C", "all": compute_all's A, C, Q and world
    Jacobians) to derive also in the form with shared subtree routines
    (Derivation.splits, None without isomorphic subtrees; codegen/derive/subtrees.py).
    `ready(derivation)`, if given, is called with the outputs so far whenever a group
    of them is complete, split forms included (codegen/emit/parallel.py emits
    those kernels while the derivation goes on); what it has seen never changes."""
    ready = ready or (lambda out: None)
    syms = Symbols(model)
    prog = Program()
    kin = Kinematics(model, syms, prog)
    d = Derivation(prog, syms)
    out, split = d.outputs, d.splits
    with stage("derive A, Q"):
        comp = composite_inertias(kin)
        out["A"] = inertia_matrix(kin, comp)
        out["Q"] = gravity_vector(kin, comp)
        if "A" in share:
            split["A"] = inertia_split(kin)
    ready(d)
    with stage("derive C"):
        vel = kin.velocities()
        out["C"] = coriolis_matrix(kin, comp, vel)[0]
        if "C" in share:
            split["C"] = coriolis_split(kin, vel)
    ready(d)
    with stage("derive Jacobians"):
        poses = kin.base_frame_poses()  # = world poses on a fixed base
        for ee in model.end_effectors:
            out[f"J_{ee.name}_world"], out[f"J_{ee.name}_local"] = jacobians(kin, poses, ee)
        if "all" in share:
            split["all"] = all_split(kin, vel, kin.world_poses(), {ee.name: out[f"J_{ee.name}_world"]
                                                           for ee in model.end_effectors})
    out["friction"] = friction(syms)
    ready(d)
    # controller kernels: inverse/forward dynamics, poses, J-dot q-dot
    out["tau"] = rnea.inverse_dynamics(kin, vel, syms.ddq, out["friction"])
    out["h"] = rnea.bias(kin, vel)
    ready(d)
    out["ddq"] = fd.forward_dynamics(prog, model, out["A"], out["h"], out["friction"], syms.tau)
    # with an external force on every body (the *_fext kernels; Pinocchio's rnea/aba with fext)
    fext = rnea.external_forces(kin)
    out["tau_fext"] = rnea.inverse_dynamics(kin, vel, syms.ddq, out["friction"], fext)
    out["ddq_fext"] = fd.forward_dynamics(prog, model, out["A"], rnea.bias(kin, vel, fext), out["friction"],
                                          syms.tau)
    acc0 = fk.velocity_product_accelerations(kin, vel)
    for ee in model.end_effectors:
        out[f"T_{ee.name}"] = fk.homogeneous(*kin.pose_to_world(*fk.ee_pose(kin, poses, ee)))
        out[f"jdot_qdot_{ee.name}"] = fk.jdot_qdot(kin, poses, vel, acc0, ee)
    ready(d)
    # dJ/dt of every end effector, world (LOCAL_WORLD_ALIGNED) and local axes
    for ee in model.end_effectors:
        out[f"dJ_{ee.name}_world"], out[f"dJ_{ee.name}_local"] = rates(kin, poses, ee)
    ready(d)
    # centre of mass and centroidal momentum, then the regressor, derived
    # last: the intermediates of the kernels above keep their places in the program
    out["com"], out["com_jacobian"], out["centroidal_map"] = centroidal(kin, comp, poses)
    ready(d)
    with stage("derive regressor"):
        out["Y"] = regressor(kin, vel, syms.ddq)
    ready(d)
    if model.contacts:  # the contact kernels (codegen/derive/contacts.py), after every other kernel's
        with stage("derive contacts"):
            out["contact_jacobians"], out["contact_drifts"] = contacts.contact_kinematics(kin, poses, vel, acc0)
            out["contact_positions"], out["contact_rotations"] = contacts.contact_placements(kin, poses)
            nle = [prog.var(x + y) for x, y in zip(out["h"], out["friction"])]
            (out["free_ddq"], out["free_contact_acc"], out["contact_velocity"], out["contact_Z"],
             out["contact_L"], out["contact_Dinv"], out["contact_G"]) = contacts.contact_system(
                prog, model, out["A"], nle, out["contact_jacobians"], out["contact_drifts"], syms.tau, syms.dq)
        ready(d)
    with stage("derive dynamics derivatives"):
        # forward_dynamics_derivatives is emitted from its pair form (codegen/emit/pair_loops.py);
        # dddq_dq and dddq_dv = -Minv times the pair form's matrices exist only there (None here)
        if "inverse" in derivatives:
            # with external forces: the kernels without them pass zeros (codegen/emit/abi.py)
            out["dtau_dq"], out["dtau_dv"] = dd.inverse_dynamics_derivatives(kin, out["friction"], fext)
            ready(d)
        if "forward" in derivatives:
            d.pair_forms["dddq_pairs"], out["Minv"] = dd.forward_dynamics_derivatives(
                kin, out["A"], out["ddq_fext"], out["friction"], fext)
            out["dddq_dq"] = out["dddq_dv"] = None
            ready(d)
        if "contact" in derivatives and model.contacts:
            (out["dJtf_dq"], out["dac_dq"], out["dac_dv"],
             out["dvc_dq"]) = contacts.contact_derivatives(kin, poses, vel, acc0)
            out["Ainv"] = contacts.inverse_inertia(prog, model, out["A"])
            # the same terms from the inverse dynamics' forward pass, the contact forces as external
            # forces: what constrained_dynamics_derivatives calls (one pass of kinematics)
            (out["dtauc_dq"], out["dtauc_dv"], out["dacc_dq"], out["dacc_dv"],
             out["dvcc_dq"]) = contacts.contact_dynamics_derivatives(kin, out["friction"])
    return d


def output_names(model: Model) -> list:
    names = ["A", "C", "Q", "friction"]
    for ee in model.end_effectors:
        names += [f"J_{ee.name}_world", f"J_{ee.name}_local"]
    return names


def controller_output_names(model: Model) -> list:
    """The outputs of the controller kernels (not in the Lagrange closed form)."""
    names = ["tau", "h", "ddq"]
    for ee in model.end_effectors:
        names += [f"T_{ee.name}", f"jdot_qdot_{ee.name}"]
    return names


def closed_form(model: Model, method: str = "recursive") -> dict:
    if method == "lagrange":
        res = lagrangian.derive(model)
        syms = res["symbols"]
    elif method == "recursive":
        d = derive(model)
        syms, prog = d.symbols, d.program
        trig = syms.trig_to_functions()
        res = {}
        for name in output_names(model):
            res[name] = d[name].applyfunc(lambda e: prog.inline(e).xreplace(trig))
    else:
        raise ValueError(f"method must be 'lagrange' or 'recursive', not {method!r}")
    res.update(q=syms.q, dq=syms.dq, params=syms.params)
    res.pop("symbols", None)
    return res
