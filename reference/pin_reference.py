"""Independent reference: the same frame table as a Pinocchio model.

`build_pin_model(model, params)` turns a `codegen.read.model.Model` and a
parameter vector (Model.param_names order) into a `pinocchio.Model`:

* one joint per moving frame, added in frame-table order (so Pinocchio's
  q/v index of a joint is the frame's `index`), with the joint placement
  [rotation, origin] (geometry evaluated) relative to the parent's joint
  frame; revolute -> JointModelRevoluteUnaligned(axis), prismatic ->
  JointModelPrismaticUnaligned(axis), the axis as given in the frame itself,
  so every Pinocchio joint frame *is* our frame;
* fixed frames merged into the body of their nearest moving ancestor (their
  inertia appended with the accumulated placement); a fixed frame hanging
  from frame 0 belongs to the universe and does not move;
* link inertia in COM form: S = MS/m, I_c = J + m hat(S) hat(S);
* model.armature[index] = Ia, model.gravity.linear = g * gravity;
* one OP_FRAME per end effector, named "ee_<name>", placed at our frame (for
  an end effector on a moving frame it coincides with the joint frame, so its
  frame Jacobian is the joint Jacobian);
* a floating base (the six base frames: five massless, then the base link) ->
  one JointModelFreeFlyer under the universe carrying the base link (its q is
  our q[0:7], its v our v[0:6]: the same convention), the joints after it one
  q index further than their velocity index.

`pin_reference(pm, data, q, dq)` evaluates A, C, Q, the end-effector
Jacobians, the potential energy U and the end-effector placements.

`compare(ours, model, param_sets, n_states, seed)` is the comparison loop
shared by tests/test_against_pinocchio.py and benchmarks/errors_vs_pinocchio.py.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from reference.reference_fk import (
    NumericModel, com_form, random_physical_params, random_states, rel_err, worst_entry,
)

__all__ = ["build_pin_model", "pin_reference", "random_physical_params", "compare", "MATRIX_KEYS"]

EE_PREFIX = "ee_"


def _se3(R, p):
    return pin.SE3(np.array(R, dtype=float), np.array(p, dtype=float))


def build_pin_model(model, params):
    """(pin.Model, {ee_name: pin frame id}) for `model` at parameter vector `params`.

    The end-effector ids are ids of OP_FRAMEs named "ee_<name>" (a contact's: key
    "contact:<name>", frame "contact_<name>") (for frames
    on moving joints these coincide with the joint: pm.frames[id].parentJoint
    is the joint id and the placement is the identity).
    """
    nm = NumericModel(model, params)
    massless = {f.key for f in model.frames if f.massless}
    pm = pin.Model()
    pm.name = model.name
    # where each of our frames sits in Pinocchio: (joint id, placement in that joint frame)
    where = {"0": (0, pin.SE3.Identity())}
    for nf in nm.frames:
        pj, pplace = where[nf.parent]
        placement = pplace * _se3(nf.R0, nf.origin)
        S, Ic = com_form(nf.m, nf.MS, nf.J)
        try:
            inertia = pin.Inertia(nf.m, S, Ic)
        except RuntimeError:  # singular I_c (URDF point masses): no positivity check here
            inertia = pin.Inertia.FromDynamicParameters(np.array(
                [nf.m, *nf.MS, nf.J[0, 0], nf.J[0, 1], nf.J[1, 1], nf.J[0, 2], nf.J[1, 2], nf.J[2, 2]]))
        if nf.type == "fixed":
            where[nf.key] = (pj, placement)
            pm.appendBodyToJoint(pj, inertia, placement)
            continue
        if nf.type in ("base_linear", "base_angular"):
            if nf.key in massless:  # the chain's first five frames: no body, no joint of their own
                where[nf.key] = (pj, placement)
                continue
            jid = pm.addJoint(pj, pin.JointModelFreeFlyer(), placement, f"joint_{nf.key}")
            pm.addJointFrame(jid)
            pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
            where[nf.key] = (jid, pin.SE3.Identity())
            continue
        if nf.type == "revolute":
            jmodel = pin.JointModelRevoluteUnaligned(nf.axis.copy())
        elif nf.type == "prismatic":
            jmodel = pin.JointModelPrismaticUnaligned(nf.axis.copy())
        else:  # pragma: no cover
            raise ValueError(nf.type)
        jid = pm.addJoint(pj, jmodel, placement, f"joint_{nf.key}")
        pm.addJointFrame(jid)
        pm.appendBodyToJoint(jid, inertia, pin.SE3.Identity())
        if pm.joints[jid].idx_v != nf.index or pm.joints[jid].idx_q != nf.index + int(model.floating_base):
            raise AssertionError(f"frame {nf.key}: Pinocchio index {pm.joints[jid].idx_v} != {nf.index}")
        pm.armature[nf.index] = nf.Ia
        where[nf.key] = (jid, pin.SE3.Identity())
    pm.gravity.linear = nm.gvec.copy()
    ee = {}
    for e in model.end_effectors:
        key = e.frame
        jid, placement = where[key]
        placement = placement * _se3(e.rotation.tolist(), [float(o) for o in e.origin])
        parent_frame = pm.getFrameId(f"joint_{key}") if pm.existFrame(f"joint_{key}") else 0
        ee[e.name] = pm.addFrame(pin.Frame(EE_PREFIX + e.name, jid, parent_frame, placement, pin.FrameType.OP_FRAME))
    for c in model.contacts:  # keyed "contact:<name>" (a contact and an end effector may share a link)
        jid, placement = where[c.frame]
        placement = placement * _se3(c.rotation.tolist(), [float(o) for o in c.origin])
        parent_frame = pm.getFrameId(f"joint_{c.frame}") if pm.existFrame(f"joint_{c.frame}") else 0
        ee[f"contact:{c.name}"] = pm.addFrame(pin.Frame(f"contact_{c.name}", jid, parent_frame, placement,
                                                        pin.FrameType.OP_FRAME))
    if pm.nq != model.nq or pm.nv != model.ndof:
        raise AssertionError(f"Pinocchio model has nq={pm.nq}, nv={pm.nv}, expected {model.nq}, {model.ndof}")
    return pm, ee


def ee_frames(pm):
    """{ee_name: frame id} of the "ee_<name>" frames of a model from build_pin_model."""
    return {f.name[len(EE_PREFIX):]: i for i, f in enumerate(pm.frames) if f.name.startswith(EE_PREFIX)}


def pin_reference(pm, data, q, dq) -> dict:
    """Reference quantities at (q, dq).

    A (crba incl. armature, upper triangle symmetrized), C
    (computeCoriolisMatrix), Q (computeGeneralizedGravity), U
    (computePotentialEnergy), and for every end effector `e`:
    J_<e>_world (LOCAL_WORLD_ALIGNED), J_<e>_local (LOCAL), rows [v; w], and
    R_<e>, p_<e> (its placement in frame 0).
    """
    q = np.asarray(q, dtype=float)
    dq = np.asarray(dq, dtype=float)
    out = {}
    M = pin.crba(pm, data, q).copy()
    out["A"] = np.triu(M) + np.triu(M, 1).T
    out["C"] = pin.computeCoriolisMatrix(pm, data, q, dq).copy()
    out["Q"] = pin.computeGeneralizedGravity(pm, data, q).copy()
    out["U"] = float(pin.computePotentialEnergy(pm, data, q))
    pin.computeJointJacobians(pm, data, q)
    pin.updateFramePlacements(pm, data)
    for name, fid in ee_frames(pm).items():
        out[f"J_{name}_world"] = pin.getFrameJacobian(pm, data, fid, pin.LOCAL_WORLD_ALIGNED).copy()
        out[f"J_{name}_local"] = pin.getFrameJacobian(pm, data, fid, pin.LOCAL).copy()
        oMf = data.oMf[fid]
        out[f"R_{name}"] = oMf.rotation.copy()
        out[f"p_{name}"] = oMf.translation.copy()
    return out


MATRIX_KEYS = ("A", "C", "Q")


def compare(ours, model, param_sets, n_states=200, seed=0, tol=1e-10, on_fail="raise"):
    """Compare `ours(q, dq, params) -> dict` with Pinocchio.

    `ours` must return at least A, C, Q and J_<ee>_world / J_<ee>_local for
    every end effector of `model`. For each (label, params) in `param_sets`,
    n_states random states (q uniform in [-pi, pi], dq in [-3, 3], fixed seed)
    are drawn. Error measure per matrix: max|ours - ref| / (1 + max|ref|).

    Returns {"per_set": {label: {key: max err}}, "overall": {key: max err},
    "failures": [...]} and raises AssertionError (with the worst entries) if
    any error exceeds tol and on_fail == "raise".
    """
    keys = list(MATRIX_KEYS)
    for e in model.end_effectors:
        keys += [f"J_{e.name}_world", f"J_{e.name}_local"]
    per_set, failures = {}, []
    overall = {k: 0.0 for k in keys}
    rng = np.random.default_rng(seed)
    for label, params in param_sets:
        params = np.asarray(params, dtype=float)
        pm, _ = build_pin_model(model, params)
        data = pm.createData()
        qs, dqs = random_states(rng, n_states, model.ndof)
        errs = {k: 0.0 for k in keys}
        for i in range(n_states):
            ref = pin_reference(pm, data, qs[i], dqs[i])
            got = ours(qs[i], dqs[i], params)
            for k in keys:
                e = rel_err(got[k], ref[k])
                if e > errs[k]:
                    errs[k] = e
                if not e <= tol:  # also catches NaN
                    idx, v, r = worst_entry(got[k], ref[k])
                    failures.append(f"[{label}] state {i}: {k} rel err {e:.3e} "
                                    f"(worst entry {idx}: ours {v!r}, Pinocchio {r!r})")
        per_set[label] = errs
        for k in keys:
            overall[k] = max(overall[k], errs[k])
    result = {"per_set": per_set, "overall": overall, "failures": failures,
              "n_states_per_set": n_states, "n_sets": len(per_set), "tol": tol}
    if failures and on_fail == "raise":
        shown = "\n".join(failures[:20])
        raise AssertionError(f"{len(failures)} comparison(s) above tol {tol:g}:\n{shown}")
    return result


def krang_param_sets(model, kk=None, n_random=5, seed=12345):
    """[(label, params)]: the default set (from krang_kernels.default_params()
    if `kk` is given, else from models/krang_params.toml if it exists) and
    n_random random physically valid sets."""
    from reference.reference_fk import KRANG_PARAMS, load_param_values

    sets = []
    if kk is not None:
        sets.append(("default", np.asarray(kk.default_params(), dtype=float)))
    elif KRANG_PARAMS.exists():
        sets.append(("default", np.array(load_param_values(KRANG_PARAMS, model))))
    rng = np.random.default_rng(seed)
    for i in range(n_random):
        sets.append((f"random{i}", random_physical_params(model, rng)))
    if sets and sets[0][0] == "default":
        # the real geometry with random inertias, too
        sets.append(("default_geometry_random_inertia", random_physical_params(model, rng, base=sets[0][1])))
    return sets


def krang_eval(kk):
    """Adapter: krang_kernels -> the dict `compare` expects."""
    def ours(q, dq, params):
        return {
            "A": kk.compute_A(q, params),
            "C": kk.compute_C(q, dq, params),
            "Q": kk.compute_Q(q, params),
            "J_left_world": kk.jacobian(q, "left", "world", params),
            "J_left_local": kk.jacobian(q, "left", "local", params),
            "J_right_world": kk.jacobian(q, "right", "world", params),
            "J_right_local": kk.jacobian(q, "right", "local", params),
        }
    return ours


# --------------------------------------------------------------------------
# URDF front end vs Pinocchio's own URDF parser (codegen/read/urdf.py)

def urdf_q(pm_urdf, model, q):
    """Pinocchio configuration of pin.buildModelFromUrdf's model for our
    coordinates q: continuous joints take (cos q, sin q), others q."""
    out = np.zeros(pm_urdf.nq)
    for name, theta in zip(model.joint_names, np.asarray(q, dtype=float)):
        jm = pm_urdf.joints[pm_urdf.getJointId(name)]
        if jm.nq == 2:  # JointModelRUB*: unbounded revolute
            out[jm.idx_q:jm.idx_q + 2] = (np.cos(theta), np.sin(theta))
        else:
            out[jm.idx_q] = theta
    return out


def snap_bound(model, snap_tol=1e-9) -> float:
    """First-order bound on compare_urdf's errors caused by snapping (snap=True).

    Every snapped rotation entry moves by <= snap_tol, so a joint placement's
    rotation moves by ||E||_2 <= ||E||_F <= 3 snap_tol and Rot(e, q) by
    <= 2 ||de|| <= 2 sqrt(3) snap_tol for a snapped axis: <= (3 + 2 sqrt 3) snap_tol
    per joint. Along a chain of d joints the world rotations move by <= that
    times d, positions by <= that times d L (L: sum of |origin| along the
    chain), so the Jacobians by <= (3 + 2 sqrt 3) d snap_tol (1 + L) relative
    to their scale, and A = sum J^T M J, C, Q (bilinear in them) by twice that.
    Origin entries snapped to 0 move by <= 1e-12, far below this.
    """
    worst = 0.0
    for f in model.frames:
        chain = model.chain(f.key)
        reach = sum(float(sum(float(o) ** 2 for o in g.origin)) ** 0.5 for g in chain)
        worst = max(worst, len(chain) * (1.0 + reach))
    return 2.0 * (3.0 + 2.0 * 3.0 ** 0.5) * snap_tol * worst


def compare_urdf(urdf_path, robot, n_states=20, seed=0):
    """Max relative error (max|a - b| / (1 + max|a|)) per quantity between
    (a) pin.buildModelFromUrdf(urdf_path) and (b) build_pin_model(robot.model,
    robot.values) over n_states random states: A (crba), C
    (computeCoriolisMatrix), Q (computeGeneralizedGravity) and, for every end
    effector, the Jacobians of the URDF link's frame in (a) (LOCAL_WORLD_ALIGNED
    and LOCAL) against those of the end effector in (b). Also checks that (a)
    orders the coordinates as (b) does (Pinocchio's order)."""
    model = robot.model
    pa = pin.buildModelFromUrdf(str(urdf_path))
    if list(pa.names[1:]) != list(model.joint_names):
        raise AssertionError(f"coordinate order differs from Pinocchio's: {list(pa.names[1:])}")
    pb, ee_ids = build_pin_model(model, np.asarray(robot.values, dtype=float))
    da, db = pa.createData(), pb.createData()
    link_ids = {e.name: pa.getFrameId(e.name, pin.BODY) for e in model.end_effectors}
    rng = np.random.default_rng(seed)
    qs, dqs = random_states(rng, n_states, model.ndof)
    errs = {}

    def acc(key, a, b):
        errs[key] = max(errs.get(key, 0.0), rel_err(b, a))

    for q, dq in zip(qs, dqs):
        qa = urdf_q(pa, model, q)
        ref = pin_reference(pb, db, q, dq)
        Ma = pin.crba(pa, da, qa)
        acc("A", np.triu(Ma) + np.triu(Ma, 1).T, ref["A"])
        acc("C", pin.computeCoriolisMatrix(pa, da, qa, dq), ref["C"])
        acc("Q", pin.computeGeneralizedGravity(pa, da, qa), ref["Q"])
        pin.computeJointJacobians(pa, da, qa)
        pin.updateFramePlacements(pa, da)
        for name, fid in link_ids.items():
            acc("J_world", pin.getFrameJacobian(pa, da, fid, pin.LOCAL_WORLD_ALIGNED), ref[f"J_{name}_world"])
            acc("J_local", pin.getFrameJacobian(pa, da, fid, pin.LOCAL), ref[f"J_{name}_local"])
    return errs
