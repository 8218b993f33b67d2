"""One routine for isomorphic subtrees (issue #9: machine code per tick).

Robots repeat structure: two arms alike below the shoulder, four legs, five
fingers. Two subtrees are isomorphic when their frames have the same joint
types, axes, constant rotations and origins (the same geometry symbols),
child by child. Their contribution to C is then the same function of the
subtree's own q, dq and inertial parameters and of the velocity of the frame
above it, so it is derived once, for the first instance, and emitted as one
static routine that every instance calls with its own offsets into q, dq and
p (codegen/emit_parts.py). The rest of the tree is derived as usual with the
routine's results in place of the subtree's quantities (`Given`): the
composite inertia and B^C of the subtree root, every subtree joint's forces
in the root frame (carried on up to the ancestors as usual) and the block of
C within the subtree.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import sympy as sp

from .christoffel import coriolis_matrix, joint_forces
from .composite_inertia import composite_inertias
from .kinematics import Kinematics
from .program import Program

MIN_JOINTS = 2  # a smaller subtree saves less code than its call costs


@dataclass(frozen=True)
class Group:
    """Isomorphic subtrees: frame keys per instance, aligned, model order."""
    frames: tuple
    joint_offset: tuple  # per instance: its joint indices minus instance 0's
    param_offset: tuple  # per instance: its per-link parameter indices minus instance 0's


@dataclass
class Given:
    inertia: dict = field(default_factory=dict)  # root key -> (mass, h, J)
    coriolis: dict = field(default_factory=dict)  # root key -> (M, f) of B^C
    forces: dict = field(default_factory=dict)  # joint key -> ((F1, F2, F3), root key)
    block: dict = field(default_factory=dict)  # (i, j) -> value


@dataclass
class Part:
    """The routine of one group: its program and outputs over instance 0's symbols."""
    group: Group
    program: Program
    outputs: list  # the routine's results, one slot each
    vin: list  # symbols of the input velocity of the root's parent (w, v)
    link_params: set  # parameter symbols read per instance (through an offset pointer)
    layout: list = field(default_factory=list)  # per output of the derivation: slot or constant


@dataclass
class Call:
    part: int
    instance: int
    vin: list  # main-program expressions
    outs: list  # symbol per slot (main program)


@dataclass
class Split:
    matrix: sp.Matrix
    parts: list
    calls: list


def _children(model):
    kids = {f.key: [] for f in model.frames}
    for f in model.frames:
        if f.parent != "0":
            kids[f.parent].append(f.key)
    return kids


def find_groups(model) -> list:
    kids = _children(model)
    sig, size = {}, {}
    for f in reversed(model.frames):
        sig[f.key] = (f.type, tuple(f.axis), tuple(f.rotation), tuple(str(o) for o in f.origin),
                      tuple(sig[k] for k in kids[f.key]))
        size[f.key] = int(f.moving) + sum(size[k] for k in kids[f.key])
    count = {}
    for f in model.frames:
        count[sig[f.key]] = count.get(sig[f.key], 0) + 1
    taken, roots = set(), {}
    for f in model.frames:  # parents first: the largest repeated subtrees
        if f.key in taken or f.parent in taken and f.parent != "0":
            taken.add(f.key)
            continue
        if count[sig[f.key]] >= 2 and size[f.key] >= MIN_JOINTS:
            roots.setdefault(sig[f.key], []).append(f.key)
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
        jd = {model.frame(b).index - model.frame(a).index for a, b in zip(instances[0], inst)}
        pd = {names[nb] - names[na] for a, b in zip(instances[0], inst)
              for na, nb in zip(model.frame(a).param_names(), model.frame(b).param_names())}
        if len(jd) != 1 or len(pd) != 1:
            return None
        joffs.append(jd.pop())
        poffs.append(pd.pop())
    return Group(tuple(instances), tuple(joffs), tuple(poffs))


def _submodel(model, keys):
    frames = tuple(dataclasses.replace(f, parent="0") if i == 0 else f
                   for i, f in enumerate(f for f in model.frames if f.key in keys))
    return dataclasses.replace(model, frames=frames, end_effectors=())


def _forces_at_root(kin, key, forces):
    while key != kin.model.frames[0].key:
        forces = [kin.force_to_parent(key, F) for F in forces]
        key = kin.model.frame(key).parent
    return forces


def coriolis_part(model, syms, group) -> Part:
    """The routine for C of the subtree group.frames[0]."""
    sub = _submodel(model, group.frames[0])
    prog = Program()
    kin = Kinematics(sub, syms, prog)
    vin = [sp.Symbol(f"vin[{i}]", real=True) for i in range(6)]
    comp = composite_inertias(kin)
    vel = kin.velocities(base=(vin[:3], vin[3:]))
    C, BC, Sdot = coriolis_matrix(kin, comp, vel)
    root = sub.frames[0].key
    mass, h, J = comp[root]
    M, f = BC[root]
    outs = [mass, *h, *J, *M, *f]
    for fr in sub.joints:
        F = joint_forces(kin, comp, vel, BC, Sdot, fr)
        for F6 in _forces_at_root(kin, fr.key, list(F)):
            outs += list(F6[0]) + list(F6[1])
    idx = [fr.index for fr in sub.joints]
    outs += [C[i, j] for i in idx for j in idx]
    link = {syms.p(n) for fr in sub.frames for n in fr.param_names()}
    part = Part(group, prog, [], vin, link)
    for e in outs:
        e = sp.sympify(e)
        if e.is_number:
            part.layout.append(e)
        else:
            part.layout.append(len(part.outputs))
            part.outputs.append(e)
    return part


def coriolis_split(kin: Kinematics, vel):
    """C over the main program, with a call per subtree instance."""
    model, prog = kin.model, kin.prog
    parts, calls, given = [], [], Given()
    for group in find_groups(model):
        part = coriolis_part(model, kin.syms, group)
        parts.append(part)
        for k, (keys, joff) in enumerate(zip(group.frames, group.joint_offset)):
            outs = [sp.Symbol(f"o{len(calls)}[{s}]", real=True) for s in range(len(part.outputs))]
            w, v = vel[model.frame(keys[0]).parent]
            calls.append(Call(len(parts) - 1, k, list(w) + list(v), outs))
            vals = iter([outs[x] if isinstance(x, int) else x for x in part.layout])
            take = lambda n: [next(vals) for _ in range(n)]  # noqa: E731
            root = keys[0]
            mass, h, J = take(1)[0], take(3), sp.Matrix(3, 3, take(9))
            given.inertia[root] = (mass, h, J)
            given.coriolis[root] = (sp.Matrix(3, 3, take(9)), take(3))
            joints = [model.frame(key) for key in keys if model.frame(key).moving]
            for fr in joints:
                given.forces[fr.key] = (tuple((take(3), take(3)) for _ in range(3)), root)
            for a in joints:
                for b in joints:
                    given.block[(a.index, b.index)] = take(1)[0]
    if not parts:
        return None
    comp = composite_inertias(kin, given.inertia)
    C = coriolis_matrix(kin, comp, vel, given)[0]
    return Split(C, parts, calls)
