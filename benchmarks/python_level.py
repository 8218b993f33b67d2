"""The Python side: Pinocchio's reference outputs, and timeit medians of both Python APIs.

End effectors are Pinocchio frames (pin_model adds an "ee_<name>" frame per
end effector; a URDF model has its links' frames). Where a frame sits at its
joint's origin, the joint's Jacobian is used, as the C++ harness does.
"""
from __future__ import annotations

import os
import statistics
import timeit
from typing import NamedTuple

import numpy as np

from .robot import group_key, group_label, j_key


class PinEE(NamedTuple):
    name: str
    joint: int      # Pinocchio joint id
    frame: int      # Pinocchio frame id
    at_joint: bool  # the frame is the joint's own placement (identity)


def pin_ees(pmodel, frames) -> list[PinEE]:
    """frames: [(end-effector name, Pinocchio frame name), ...]."""
    out = []
    for name, fname in frames:
        fid = pmodel.getFrameId(fname)
        if fid >= len(pmodel.frames):
            raise ValueError(f"end effector {name!r}: no frame {fname!r} in the Pinocchio model")
        fr = pmodel.frames[fid]
        ident = bool(np.allclose(fr.placement.homogeneous, np.eye(4), rtol=0, atol=0))
        out.append(PinEE(name, int(fr.parentJoint), fid, ident))
    return out


def pin_config(pmodel, perm, q):
    """Pinocchio's configuration for our q (perm[i] = its velocity index of our q[i]): an angle
    of a URDF `continuous` joint (Pinocchio's RUB joints, nq = 2) becomes (cos, sin). A free-flyer
    (nq = 7, nv = 6: our q[0:7] = position, quaternion x-y-z-w, as Pinocchio's) is copied; its
    other five velocity indices have no q entry of their own, so our q index runs one ahead after it."""
    at_v = {pmodel.joints[j].idx_v: pmodel.joints[j] for j in range(1, pmodel.njoints)}
    qp = np.empty(pmodel.nq)
    qi = 0
    for v in perm:
        jm = at_v.get(int(v))
        if jm is None:  # a later velocity of the free-flyer
            continue
        if jm.nq == 7:
            qp[jm.idx_q:jm.idx_q + 7] = q[qi:qi + 7]
            qi += 7
            continue
        if jm.nq == 2:
            qp[jm.idx_q], qp[jm.idx_q + 1] = np.cos(q[qi]), np.sin(q[qi])
        else:
            qp[jm.idx_q] = q[qi]
        qi += 1
    return qp


def python_pin_outputs(pmodel, perm, ees, q, dq):
    """Pinocchio's A, C, Q and world Jacobians in our q order (perm[i] = its velocity index of our q[i])."""
    import pinocchio as pin

    data = pmodel.createData()
    out = []
    for qq, vv in zip(q, dq):
        qp = pin_config(pmodel, perm, qq)
        vp = np.empty_like(vv); vp[perm] = vv
        M = pin.crba(pmodel, data, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T
        C = pin.computeCoriolisMatrix(pmodel, data, qp, vp).copy()
        G = pin.computeGeneralizedGravity(pmodel, data, qp).copy()
        pin.computeJointJacobians(pmodel, data, qp)
        pin.updateFramePlacements(pmodel, data)
        d = dict(A=M[np.ix_(perm, perm)], C=C[np.ix_(perm, perm)], Q=G[perm])
        for e in ees:
            d[j_key(e.name)] = pin.getFrameJacobian(pmodel, data, e.frame, pin.LOCAL_WORLD_ALIGNED)[:, perm]
        out.append(d)
    return out


def per_call_us(fn, repeat):
    t = timeit.Timer(fn)
    number, _ = t.autorange()
    return statistics.median(x / number * 1e6 for x in t.repeat(repeat, number))


def _time_ours(kk, q, dq, names, repeat):
    """timeit medians of the Python module's calls, plain and with out=; (plain, out, note)."""
    n = len(q)
    A = np.empty((n, n)); C = np.empty((n, n)); Qv = np.empty(n)
    J = [np.empty((6, n)) for _ in names]
    ees = list(names)
    try:
        kk.jacobian(q, ees[0])
    except (TypeError, ValueError):
        ees = list(range(len(names)))
    first, group = j_key(names[0]), group_key(names)
    calls = {
        "A": (lambda: kk.compute_A(q), lambda: kk.compute_A(q, out=A)),
        "C": (lambda: kk.compute_C(q, dq), lambda: kk.compute_C(q, dq, out=C)),
        "Q": (lambda: kk.compute_Q(q), lambda: kk.compute_Q(q, out=Qv)),
        first: (lambda: kk.jacobian(q, ees[0]), lambda: kk.jacobian(q, ees[0], out=J[0])),
        group: (lambda: [kk.jacobian(q, e) for e in ees],
                lambda: [kk.jacobian(q, e, out=j) for e, j in zip(ees, J)]),
        "all": (lambda: kk.compute_all(q, dq), None),
    }
    ours, ours_out, note = {}, {}, ""
    for k, (plain, with_out) in calls.items():
        try:
            ours[k] = per_call_us(plain, repeat)
        except Exception as exc:  # an API that differs from the spec: report, do not die
            ours[k] = None
            note += f" {k}: {type(exc).__name__}: {exc};"
        try:
            ours_out[k] = per_call_us(with_out, repeat) if with_out else None
        except Exception as exc:
            ours_out[k] = None
            note += f" {k}(out=): {type(exc).__name__}: {exc};"
    return ours, ours_out, note


def python_level(pmodel, perm, ees, q, dq, repeat, core, module="krang_kernels"):
    """Rows kernel | ours | ours_out | pin | pin_call (µs) for one state, pinned to `core`."""
    import importlib

    import pinocchio as pin

    old_aff = None
    if core is not None and hasattr(os, "sched_setaffinity"):
        old_aff = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {core})
    try:
        names = [e.name for e in ees]
        first, group = j_key(names[0]), group_key(names)
        qp = pin_config(pmodel, perm, q)
        vp = np.empty_like(dq); vp[perm] = dq
        data = pmodel.createData()
        LWA = pin.LOCAL_WORLD_ALIGNED

        if all(e.at_joint for e in ees):
            def get_all():
                pin.computeJointJacobians(pmodel, data, qp)
                for e in ees:
                    pin.getJointJacobian(pmodel, data, e.joint, LWA)
        else:
            def get_all():
                pin.computeJointJacobians(pmodel, data, qp)
                for e in ees:
                    pin.getFrameJacobian(pmodel, data, e.frame, LWA)

        n = len(ees)
        pin_calls = {
            "A": ("crba", lambda: pin.crba(pmodel, data, qp)),
            "C": ("computeCoriolisMatrix", lambda: pin.computeCoriolisMatrix(pmodel, data, qp, vp)),
            "Q": ("computeGeneralizedGravity", lambda: pin.computeGeneralizedGravity(pmodel, data, qp)),
            first: ("computeFrameJacobian(LWA)", lambda: pin.computeFrameJacobian(pmodel, data, qp, ees[0].frame, LWA)),
            group: (f"computeJointJacobians + {n} getJointJacobian(LWA)", get_all),
            group + "_framejac": (f"{n} computeFrameJacobian(LWA)",
                                  lambda: [pin.computeFrameJacobian(pmodel, data, qp, e.frame, LWA) for e in ees]),
        }
        pin_us = {k: per_call_us(f, repeat) for k, (_, f) in pin_calls.items()}
        best_j = group if pin_us[group] <= pin_us[group + "_framejac"] else group + "_framejac"
        pin_us["all"] = pin_us["A"] + pin_us["C"] + pin_us["Q"] + pin_us[best_j]

        ours, ours_out, note = {}, {}, ""
        try:
            kk = importlib.import_module(module)
        except ImportError as exc:
            kk, note = None, f"{module} not importable ({exc}); build it first (make build)"
        if kk is not None:
            ours, ours_out, note = _time_ours(kk, q, dq, names, repeat)
        labels = {"A": "A", "C": "C", "Q": "Q", first: first, group: group_label(names),
                  "all": "compute_all vs pin's four"}
        rows = []
        for k, label in labels.items():
            pin_name = pin_calls[k][0] if k in pin_calls else f"sum: crba + Coriolis + gravity + {best_j}"
            if k == group:
                pin_name = pin_calls[best_j][0]
            rows.append(dict(kernel=label, ours=ours.get(k), ours_out=ours_out.get(k),
                             pin=pin_us[best_j] if k == group else pin_us[k], pin_call=pin_name))
        return rows, note.strip()
    finally:
        if old_aff is not None:
            os.sched_setaffinity(0, old_aff)
