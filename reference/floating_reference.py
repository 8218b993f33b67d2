"""Pinocchio's free-flyer model of a URDF, in our coordinates, for the floating-base tests.

pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer()) (or without the root
joint when the URDF's own root joint is floating, which Pinocchio's parser
turns into a JointModelFreeFlyer), with inertias, armature and gravity set
from OUR parameter vector, so that random parameter sets test the parameter
layout too. Both sides use q = [x, y, z, qx, qy, qz, qw, joints...] and
v = [base linear, base angular (base axes), joints...]; continuous joints
are one angle here and (cos, sin) in Pinocchio.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from reference.reference_fk import param_dict

INERTIA_ORDER = ("m", "MX", "MY", "MZ", "XX", "XY", "YY", "XZ", "YZ", "ZZ")  # Pinocchio's dynamic parameters


def random_base_states(rng, model, n, dqmax=2.0):
    """n (q, dq) with random base positions, random unit quaternions and joints in [-pi, pi]."""
    qs, dqs = [], []
    for _ in range(n):
        quat = rng.normal(size=4)
        quat /= np.linalg.norm(quat)
        joints = rng.uniform(-np.pi, np.pi, size=model.ndof - 6)
        qs.append(np.concatenate([rng.uniform(-1, 1, size=3), quat, joints]))
        dqs.append(rng.uniform(-dqmax, dqmax, size=model.ndof))
    return np.array(qs), np.array(dqs)


class PinFreeFlyer:
    def __init__(self, urdf, model, params, own_root_joint: bool):
        self.model_ours = model
        pm = (pin.buildModelFromUrdf(str(urdf)) if own_root_joint
              else pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer()))
        assert pm.joints[1].shortname() == "JointModelFreeFlyer" and pm.nv == model.ndof
        p = param_dict(model, params)
        self.joints = []  # (our velocity index, pinocchio joint) for every actuated joint
        for f in model.frames:
            if f.massless or not f.moving:
                continue
            jid = 1 if f.base else pm.getJointId(f.joint)
            pm.inertias[jid] = pin.Inertia.FromDynamicParameters(np.array([p[f"{n}_{f.key}"] for n in INERTIA_ORDER]))
            if not f.base:
                pm.armature[pm.joints[jid].idx_v] = p[f"Ia_{f.key}"]
                self.joints.append((f.index, pm.joints[jid]))
        pm.gravity.linear = p["g"] * np.array([float(x) for x in model.gravity])
        self.fv = np.zeros(model.ndof)
        self.fc = np.zeros(model.ndof)
        for f in model.joints:
            if not f.base:
                self.fv[f.index], self.fc[f.index] = p[f"Fv_{f.key}"], p[f"Fc_{f.key}"]
        self.perm = np.arange(model.ndof)
        for i, jm in self.joints:
            self.perm[i] = jm.idx_v
        self.pm, self.data = pm, pm.createData()
        self.fids = [pm.getFrameId(e.name, pin.BODY) for e in model.end_effectors]

    def friction(self, dq):
        return self.fv * dq + self.fc * np.sign(dq)

    def q(self, q):
        out = np.zeros(self.pm.nq)
        out[:7] = q[:7]
        for i, jm in self.joints:
            theta = q[i + 1]
            if jm.nq == 2:  # JointModelRUB*: unbounded revolute
                out[jm.idx_q:jm.idx_q + 2] = (np.cos(theta), np.sin(theta))
            else:
                out[jm.idx_q] = theta
        return out

    def reference(self, q, dq, ddq):
        """Every kernel's reference, in OUR coordinate order."""
        pm, d, P = self.pm, self.data, self.perm
        qp = self.q(q)
        vp, ap = np.zeros(pm.nv), np.zeros(pm.nv)
        vp[P], ap[P] = dq, ddq
        M = pin.crba(pm, d, qp)
        M = np.triu(M) + np.triu(M, 1).T
        out = {"A": M[np.ix_(P, P)],
               "C": pin.computeCoriolisMatrix(pm, d, qp, vp)[np.ix_(P, P)],
               "Q": pin.computeGeneralizedGravity(pm, d, qp)[P],
               "tau": pin.rnea(pm, d, qp, vp, ap)[P],
               "bias": pin.nonLinearEffects(pm, d, qp, vp)[P]}
        out["ddq"] = pin.aba(pm, d, qp, vp, pin.rnea(pm, d, qp, vp, ap))[P]
        pin.computeJointJacobians(pm, d, qp)
        pin.updateFramePlacements(pm, d)
        for i, fid in enumerate(self.fids):
            out[f"J{i}_world"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)[:, P]
            out[f"J{i}_local"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL)[:, P]
            out[f"T{i}"] = d.oMf[fid].homogeneous.copy()
        pin.forwardKinematics(pm, d, qp, vp, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, d)
        for i, fid in enumerate(self.fids):
            a = pin.getFrameClassicalAcceleration(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)
            out[f"a{i}"] = np.concatenate([a.linear, a.angular])
        return out


def compare_urdf_floating(urdf_path, robot, n_states=10, seed=0) -> dict:
    """The floating-base counterpart of reference.pin_reference.compare_urdf, without generating C: max
    relative error per quantity between (a) Pinocchio's free-flyer model of the URDF
    (buildModelFromUrdf with JointModelFreeFlyer, or its own floating root joint) and (b)
    build_pin_model of our frame table (its base frames as one JointModelFreeFlyer), at random base
    poses and velocities: A, C, Q and every end effector's LOCAL_WORLD_ALIGNED and LOCAL Jacobian.
    Also checks that (a) orders the joints as we do."""
    from reference.pin_reference import build_pin_model, ee_frames
    from reference.reference_fk import rel_err

    model = robot.model
    pa = pin.buildModelFromUrdf(str(urdf_path))
    if pa.joints[1].shortname() != "JointModelFreeFlyer":
        pa = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
    if list(pa.names[2:]) != list(model.joint_names[6:]):
        raise AssertionError(f"joint order differs from Pinocchio's: {list(pa.names[2:])}")
    pb, _ = build_pin_model(model, np.asarray(robot.values, dtype=float))
    da, db = pa.createData(), pb.createData()
    fa = {e.name: pa.getFrameId(e.name, pin.BODY) for e in model.end_effectors}
    fb = ee_frames(pb)
    rng = np.random.default_rng(seed)
    errs = {}
    for q, v in zip(*random_base_states(rng, model, n_states)):
        qa = np.zeros(pa.nq)
        qa[:7] = q[:7]
        for name, theta in zip(model.joint_names[6:], q[7:]):
            jm = pa.joints[pa.getJointId(name)]
            qa[jm.idx_q:jm.idx_q + jm.nq] = (np.cos(theta), np.sin(theta)) if jm.nq == 2 else theta
        va = np.zeros(pa.nv)
        va[:6] = v[:6]
        va[[pa.joints[pa.getJointId(n)].idx_v for n in model.joint_names[6:]]] = v[6:]
        perm = np.r_[0:6, [pa.joints[pa.getJointId(n)].idx_v for n in model.joint_names[6:]]]
        got = {}
        for key, pm, d, qq, vv, P in (("a", pa, da, qa, va, perm), ("b", pb, db, q, v, np.arange(pb.nv))):
            M = pin.crba(pm, d, qq)
            M = np.triu(M) + np.triu(M, 1).T
            out = {"A": M[np.ix_(P, P)], "C": pin.computeCoriolisMatrix(pm, d, qq, vv)[np.ix_(P, P)],
                   "Q": pin.computeGeneralizedGravity(pm, d, qq)[P]}
            pin.computeJointJacobians(pm, d, qq)
            pin.updateFramePlacements(pm, d)
            for name in fa:
                fid = fa[name] if key == "a" else fb[name]
                out[f"J_{name}_world"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL_WORLD_ALIGNED)[:, P]
                out[f"J_{name}_local"] = pin.getFrameJacobian(pm, d, fid, pin.LOCAL)[:, P]
            got[key] = out
        for k, ref in got["a"].items():
            group = "J_world" if k.endswith("_world") else "J_local" if k.endswith("_local") else k
            errs[group] = max(errs.get(group, 0.0), rel_err(got["b"][k], ref))
    return errs
