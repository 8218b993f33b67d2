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

from .christoffel import coriolis_matrix, coriolis_to_parent, joint_forces
from .composite_inertia import composite_inertias, inertia_matrix, inertia_times_var
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
    kept: set = field(default_factory=set)  # the slots some instance uses


@dataclass
class Call:
    array: str  # the local array of its results
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


def _submodel(model, keys):
    """The subtree alone, its root placed at frame 0's origin, unrotated."""
    zero = (sp.S.Zero,) * 3
    frames = tuple(dataclasses.replace(f, parent="0", rotation=sp.eye(3), origin=zero) if i == 0 else f
                   for i, f in enumerate(f for f in model.frames if f.key in keys))
    return dataclasses.replace(model, frames=frames, end_effectors=())


def _forces_at_root(kin, key, forces):
    """Forces of frame `key` expressed above the subtree root (frame 0 of the subtree)."""
    while key != "0":
        forces = [kin.force_to_parent(key, F) for F in forces]
        key = kin.model.frame(key).parent
    return forces


def _part(model, syms, group, velocity, outputs) -> Part:
    """The routine of a group: `outputs(kin, comp, vel)` over the subtree of
    instance 0 derived alone. `velocity`: None (no velocities), "zero" (the
    root's parent is at rest in every instance) or "input" (vin)."""
    sub = _submodel(model, group.frames[0])
    prog = Program()
    kin = Kinematics(sub, syms, prog)
    vin = [sp.Symbol(f"vin[{i}]", real=True) for i in range(6)] if velocity == "input" else []
    comp = composite_inertias(kin)
    vel = None if velocity is None else kin.velocities(base=(vin[:3], vin[3:]) if vin else None)
    link = {syms.p(n) for fr in sub.frames for n in fr.param_names()}
    part = Part(group, prog, [], vin, link)
    for e in outputs(kin, comp, vel):
        e = sp.sympify(e)
        if e.is_number:
            part.layout.append(e)
        else:
            part.layout.append(len(part.outputs))
            part.outputs.append(e)
    return part


def _block(M, sub):
    idx = [fr.index for fr in sub.joints]
    return [M[i, j] for i in idx for j in idx]


def _coriolis_outputs(kin, comp, vel):
    """I^C and B^C of the root, F1, F2, F3 of every joint in the root frame, the block of C."""
    sub = kin.model
    C, BC, Sdot = coriolis_matrix(kin, comp, vel)
    root = sub.frames[0].key
    mass, h, J = kin.inertia_to_parent(root, comp[root])
    M, f = coriolis_to_parent(kin, root, BC[root])
    outs = [mass, *h, *J, *M, *f]
    for fr in sub.joints:
        F = joint_forces(kin, comp, vel, BC, Sdot, fr)
        for F6 in _forces_at_root(kin, fr.key, list(F)):
            outs += list(F6[0]) + list(F6[1])
    return outs + _block(C, sub)


def _inertia_outputs(kin, comp, vel):
    """I^C of the root, I^C_j S_j of every joint in the root frame, the block of A."""
    sub = kin.model
    root = sub.frames[0].key
    mass, h, J = kin.inertia_to_parent(root, comp[root])
    outs = [mass, *h, *J]
    for fr in sub.joints:
        F = inertia_times_var(kin.prog, comp[fr.key], kin.joint_motion(fr))
        (F6,) = _forces_at_root(kin, fr.key, [F])
        outs += list(F6[0]) + list(F6[1])
    return outs + _block(inertia_matrix(kin, comp), sub)


def _taker(values):
    """take(n): the next n of values, in order (the routine's output layout)."""
    it = iter(values)
    return lambda n: [next(it) for _ in range(n)]


def _split(kin, vel, outputs, nforces, finish, tag):
    """The main derivation of one output with a call per subtree instance."""
    model = kin.model
    parts, calls, given = [], [], Given()
    # the main derivation sees each instance root through its constant
    # placement only (its joint stage is in the routine)
    main = Kinematics(model, kin.syms, kin.prog)
    for group in find_groups(model):
        vins = []
        for keys in group.frames:
            main.placement_only(keys[0])
            if vel is not None:
                w, v = main.motion_to_child(keys[0], vel[model.frame(keys[0]).parent])
                vins.append(list(w) + list(v))
        velocity = None if vel is None else "input" if any(x != 0 for v in vins for x in v) else "zero"
        part = _part(model, kin.syms, group, velocity, outputs)
        parts.append(part)
        for k, keys in enumerate(group.frames):
            outs = [sp.Symbol(f"o{tag}{len(calls)}[{s}]", real=True) for s in range(len(part.outputs))]
            calls.append(Call(f"o{tag}{len(calls)}", len(parts) - 1, k, vins[k] if part.vin else [], outs))
            take = _taker([outs[x] if isinstance(x, int) else x for x in part.layout])
            root = keys[0]
            given.inertia[root] = (take(1)[0], take(3), sp.Matrix(3, 3, take(9)))
            if nforces == 3:
                given.coriolis[root] = (sp.Matrix(3, 3, take(9)), take(3))
            joints = [model.frame(key) for key in keys if model.frame(key).moving]
            for fr in joints:
                given.forces[fr.key] = (tuple((take(3), take(3)) for _ in range(nforces)), root)
            for a in joints:
                for b in joints:
                    given.block[(a.index, b.index)] = take(1)[0]
    if not parts:
        return None
    comp = composite_inertias(main, given.inertia)
    matrix = finish(main, comp, vel, given)
    # results no instance needs (e.g. forces above a root at the base) are not computed
    used = set(matrix.free_symbols)
    for _, e in kin.prog.needed(list(matrix)):
        used |= e.free_symbols
    for call in calls:
        parts[call.part].kept |= {s for s, o in enumerate(call.outs) if o in used}
    return Split(matrix, parts, calls)


def coriolis_split(kin: Kinematics, vel):
    """C over the main program, with a call per subtree instance (None: no subtrees)."""
    return _split(kin, vel, _coriolis_outputs, 3, lambda k, comp, v, g: coriolis_matrix(k, comp, v, g)[0], "c")


def inertia_split(kin: Kinematics):
    """A likewise."""
    return _split(kin, None, _inertia_outputs, 1, lambda k, comp, v, g: inertia_matrix(k, comp, g), "a")
