"""Isomorphic subtrees of a model (codegen/derive/subtrees.py shares one routine
between them): two subtrees are isomorphic when their frames have the same
joint types, axes, constant rotations and origins (the same geometry
symbols), child by child; the root is compared without its placement in its
parent. Each group gives every instance's joint and parameter offsets from
instance 0, constant, so one routine serves all of them through shifted
pointers.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import sympy as sp

MIN_JOINTS = 2  # a smaller subtree saves less code than its call costs


@dataclass(frozen=True)
class Group:
    """Isomorphic subtrees: frame keys per instance, aligned, model order."""
    frames: tuple
    joint_offset: tuple  # per instance: its joint indices minus instance 0's
    param_offset: tuple  # per instance: its per-link parameter indices minus instance 0's


def _children(model):
    kids = {f.key: [] for f in model.frames}
    for f in model.frames:
        if f.parent != "0":
            kids[f.parent].append(f.key)
    return kids


def find_groups(model) -> list:
    """Groups of isomorphic subtrees, largest first. A root is compared
    without its constant placement in its parent (the caller applies it),
    every frame below it with."""
    kids = _children(model)
    sig, rsig, size = {}, {}, {}
    for f in reversed(model.frames):
        rsig[f.key] = (f.type, tuple(f.axis), tuple(sig[k] for k in kids[f.key]))
        sig[f.key] = (rsig[f.key], tuple(f.rotation), tuple(str(o) for o in f.origin))
        size[f.key] = int(f.moving) + sum(size[k] for k in kids[f.key])
    count = {}
    for f in model.frames:
        count[rsig[f.key]] = count.get(rsig[f.key], 0) + 1
    taken, roots = set(), {}
    for f in model.frames:  # parents first: the largest repeated subtrees
        if f.parent in taken:
            taken.add(f.key)
        elif count[rsig[f.key]] >= 2 and size[f.key] >= MIN_JOINTS:
            roots.setdefault(rsig[f.key], []).append(f.key)
            taken.add(f.key)
    groups = []
    for keys in roots.values():
        if len(keys) < 2:
            continue
        instances = [_subtree(model, kids, k) for k in keys]
        g = _offsets(model, instances)
        if g is not None:
            groups.append(g)
    return groups


def _subtree(model, kids, root):
    out, stack = set(), [root]
    while stack:
        k = stack.pop()
        out.add(k)
        stack.extend(kids[k])
    return tuple(f.key for f in model.frames if f.key in out)


def _offsets(model, instances):
    """Constant index offsets per instance, or None (then no sharing)."""
    names = {n: i for i, n in enumerate(model.param_names)}
    joffs, poffs = [], []
    for inst in instances:
        jd = {model.frame(b).index - model.frame(a).index for a, b in zip(instances[0], inst)
              if model.frame(a).moving}
        pd = {names[nb] - names[na] for a, b in zip(instances[0], inst)
              for na, nb in zip(model.frame(a).param_names(), model.frame(b).param_names())}
        if len(jd) != 1 or len(pd) != 1:
            return None
        joffs.append(jd.pop())
        poffs.append(pd.pop())
    return Group(tuple(instances), tuple(joffs), tuple(poffs))


def submodel(model, keys):
    """The subtree alone, its root placed at frame 0's origin, unrotated."""
    zero = (sp.S.Zero,) * 3
    frames = tuple(dataclasses.replace(f, parent="0", rotation=sp.eye(3), origin=zero) if i == 0 else f
                   for i, f in enumerate(f for f in model.frames if f.key in keys))
    return dataclasses.replace(model, frames=frames, end_effectors=(), floating_base=False)
