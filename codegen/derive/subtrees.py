"""One routine for isomorphic subtrees (less machine code per control tick).

Robots repeat structure: two arms alike below the shoulder, four legs, five
fingers. Two subtrees are isomorphic when their frames have the same joint
types, axes, constant rotations and origins (codegen/derive/subtree_groups.py
finds them). Their contribution to C is then the same function of the
subtree's own q, dq and inertial parameters and of the velocity of the frame
above it, so it is derived once, for the first instance, and emitted as one
static routine that every instance calls with its own offsets into q, dq and
p (codegen/emit/routines.py). The rest of the tree is derived as usual with the
routine's results in place of the subtree's quantities (`Given`): the
composite inertia and B^C of the subtree root, every subtree joint's forces
in the root frame (carried on up to the ancestors as usual). The block of C
within the subtree the routine writes into the kernel's output itself
(`DIRECT` in the main derivation), so the kernel does not copy it.

compute_all (A, C, Q, J) uses the routine of C with the block of A added:
A's force I^C_j S_j is one of C's (F2), so the block costs no operation, A's
rows above the subtree pair the same carried forces, and so does Q
(Q_j = S_j . I^C_j a_g, the gravity as a base acceleration: Featherstone
2008, section 5.3). The routine also gives the Jacobian columns of its
joints for an end effector that every instance carries alike, from the world
pose of the frame above it (input `pose`). A tick that needs all four then
executes the subtree's code once instead of once in A's kernel and once in C's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import sympy as sp

from .christoffel import coriolis_matrix, coriolis_to_parent, joint_forces
from .composite_inertia import composite_inertias, gravity_vector, index_span, inertia_matrix, inertia_times_var
from .fk import ee_pose
from .jacobians import world_columns
from .kinematics import Kinematics
from .program import Program
from .subtree_groups import Group, find_groups, submodel

# a joint's forces a routine returns, in its root frame: C's F1, I^C_j S_j
# (A's force and C's F2) and C's F3 (codegen/derive/christoffel.joint_forces)
CORIOLIS_FORCES = ("F1", "IS", "F3")
INERTIA_FORCES = ("IS",)


# an entry of the kernel's output that the routine writes (codegen/emit/routines.py)
DIRECT = sp.Symbol("written by a subtree routine")


@dataclass
class Given:
    inertia: dict = field(default_factory=dict)  # root key -> (mass, h, J)
    coriolis: dict = field(default_factory=dict)  # root key -> (M, f) of B^C
    forces: dict = field(default_factory=dict)  # joint key -> ({name: force}, root key)
    blocks: dict = field(default_factory=dict)  # "A" or "C" -> {(i, j): value or DIRECT}
    ees: dict = field(default_factory=dict)  # end effector name -> (its world position, subtree joint keys)


@dataclass
class Part:
    """The routine of one group: its program and outputs over instance 0's symbols."""
    group: Group
    program: Program
    outputs: list  # the routine's results, one slot each
    vin: list  # symbols of the input velocity of the root's parent (w, v)
    link_params: set  # parameter symbols read per instance (through an offset pointer)
    layout: list = field(default_factory=list)  # per output of the derivation: slot or constant
    order: list = field(default_factory=list)  # per slot: sort key, computed in descending order
    blocks: list = field(default_factory=list)  # (block name, i, j, value, sort key): the routine writes them
    # block name -> (the derivation output it lands in, per instance; rows are joints (A, C) or not (J))
    targets: dict = field(default_factory=dict)
    pose: bool = False  # it reads the world pose of its root's parent (pose: R row-major, then p)
    kept: set = field(default_factory=set)  # the slots some instance uses


@dataclass
class Call:
    array: str  # the local array of its results
    part: int
    instance: int
    vin: list  # main-program expressions
    outs: list  # symbol per slot (main program)
    pose: list = field(default_factory=list)  # main-program expressions (Part.pose)


@dataclass
class Split:
    outputs: dict  # derivation output name -> Matrix over the main program
    parts: list
    calls: list


def _forces_at_root(kin, key, forces):
    """Forces of frame `key` expressed above the subtree root (frame 0 of the subtree)."""
    while key != "0":
        forces = [kin.force_to_parent(key, F) for F in forces]
        key = kin.model.frame(key).parent
    return forces


def _part(model, syms, group, velocity, outputs, pose=False) -> Part:
    """The routine of a group: `outputs(kin, comp, vel)` over the subtree of
    instance 0 derived alone. `velocity`: None (no velocities), "zero" (the
    root's parent is at rest in every instance) or "input" (vin)."""
    sub = submodel(model, group.frames[0])
    prog = Program()
    kin = Kinematics(sub, syms, prog)
    vin = [sp.Symbol(f"vin[{i}]", real=True) for i in range(6)] if velocity == "input" else []
    comp = composite_inertias(kin)
    vel = None if velocity is None else kin.velocities(base=(vin[:3], vin[3:]) if vin else None)
    link = {syms.p(n) for fr in sub.frames for n in fr.param_names()}
    part = Part(group, prog, [], vin, link, pose=pose)
    results, keys, part.blocks = outputs(kin, comp, vel)
    n = len(group.frames)
    part.targets = {b: ((b,) * n, True) for b, *_ in part.blocks if b in ("A", "C")}
    for e, key in zip(results, keys):
        e = sp.sympify(e)
        if e.is_number:
            part.layout.append(e)
        else:
            part.layout.append(len(part.outputs))
            part.outputs.append(e)
            part.order.append(key)
    return part


def _block(name, M, sub):
    """The subtree's block of output `name` = M: (name, i, j, entry, order key) each."""
    idx = [fr.index for fr in sub.joints]
    return [(name, i, j, M[i, j], (max(i, j), min(i, j))) for i in idx for j in idx]


def _results(kin, root_values, forces_of):
    """The routine's results and their order keys: the root's values, then
    each joint's forces (forces_of(frame)) carried to the root frame. Keys:
    the root's last, each joint's forces with the block entries of its row
    and column, deepest joint first, so that a joint's forces are carried up
    once for its entries and its results instead of kept alive across the
    whole routine (codegen/emit/cse.demand_order)."""
    outs = list(root_values)
    keys = [(-1, -1)] * len(outs)
    for fr in kin.model.joints:
        for F6 in _forces_at_root(kin, fr.key, forces_of(fr)):
            outs += list(F6[0]) + list(F6[1])
        keys += [(fr.index, -1)] * (len(outs) - len(keys))
    return outs, keys


def _coriolis_outputs(kin, comp, vel, blocks=("C",)):
    """I^C and B^C of the root, F1, F2, F3 of every joint in the root frame,
    the blocks of C (and of A: `blocks`) within the subtree."""
    sub = kin.model
    C, BC, Sdot = coriolis_matrix(kin, comp, vel)
    root = sub.frames[0].key
    mass, h, J = kin.inertia_to_parent(root, comp[root])
    M, f = coriolis_to_parent(kin, root, BC[root])
    outs, keys = _results(kin, [mass, *h, *J, *M, *f],
                          lambda fr: list(joint_forces(kin, comp, vel, BC, Sdot, fr)))
    matrices = {"C": C, "A": inertia_matrix(kin, comp) if "A" in blocks else None}
    return outs, keys, [x for b in blocks for x in _block(b, matrices[b], sub)]


def _inertia_outputs(kin, comp, vel):
    """I^C of the root, I^C_j S_j of every joint in the root frame, the block of A."""
    sub = kin.model
    root = sub.frames[0].key
    mass, h, J = kin.inertia_to_parent(root, comp[root])
    outs, keys = _results(kin, [mass, *h, *J],
                          lambda fr: [inertia_times_var(kin.prog, comp[fr.key], kin.joint_motion(fr))])
    return outs, keys, _block("A", inertia_matrix(kin, comp), sub)


def _taker(values):
    """take(n): the next n of values, in order (the routine's output layout)."""
    it = iter(values)
    return lambda n: [next(it) for _ in range(n)]


def _split(kin, vel, routine, forces, blocks, finish, tag):
    """The main derivation with a call per subtree instance: the routine's
    results (root inertia, B^C if C's `forces`, the joints' `forces`, the
    end-effector positions; the `blocks` it writes itself) given to `finish`,
    which returns the outputs. routine(group) -> (outputs(kin, comp, vel),
    whether it reads its pose, block targets beyond A and C, end-effector slots)."""
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
        outputs, pose, targets, slots = routine(group)
        part = _part(model, kin.syms, group, velocity, outputs, pose)
        part.targets.update(targets)
        parts.append(part)
        frame0 = main.world_poses() if pose else None  # each root's frame 0: its parent, then its placement
        for k, keys in enumerate(group.frames):
            outs = [sp.Symbol(f"o{tag}{len(calls)}[{s}]", real=True) for s in range(len(part.outputs))]
            calls.append(Call(f"o{tag}{len(calls)}", len(parts) - 1, k, vins[k] if part.vin else [], outs,
                              list(frame0[keys[0]][0]) + list(frame0[keys[0]][1]) if pose else []))
            take = _taker([outs[x] if isinstance(x, int) else x for x in part.layout])
            root = keys[0]
            given.inertia[root] = (take(1)[0], take(3), sp.Matrix(3, 3, take(9)))
            if "F1" in forces:
                given.coriolis[root] = (sp.Matrix(3, 3, take(9)), take(3))
            joints = [model.frame(key) for key in keys if model.frame(key).moving]
            for fr in joints:
                given.forces[fr.key] = ({name: (take(3), take(3)) for name in forces}, root)
            for m, ees in slots:
                given.ees[ees[k].name] = (take(3), set(keys))
            for b in blocks:
                given.blocks.setdefault(b, {}).update({(x.index, y.index): DIRECT for x in joints for y in joints})
    if not parts:
        return None
    comp = composite_inertias(main, given.inertia)
    results = finish(main, comp, vel, given)
    # results no instance needs (e.g. forces above a root at the base) are not computed
    exprs = [e for m in results.values() for e in m]
    used = set().union(*(sp.sympify(e).free_symbols for e in exprs))
    for _, e in kin.prog.needed(exprs):
        used |= e.free_symbols
    for call in calls:
        parts[call.part].kept |= {s for s, o in enumerate(call.outs) if o in used}
    return Split(results, parts, calls)


def coriolis_split(kin: Kinematics, vel):
    """C over the main program, with a call per subtree instance (None: no subtrees)."""
    return _split(kin, vel, lambda g: (_coriolis_outputs, False, {}, []), CORIOLIS_FORCES, ("C",),
                  lambda k, comp, v, g: {"C": coriolis_matrix(k, comp, v, g)[0]}, "c")


def inertia_split(kin: Kinematics):
    """A likewise."""
    return _split(kin, None, lambda g: (_inertia_outputs, False, {}, []), INERTIA_FORCES, ("A",),
                  lambda k, comp, v, g: {"A": inertia_matrix(k, comp, g)}, "a")


def _ee_slots(model, group):
    """[(frame position m, end effector per instance)]: the end effectors that
    every instance has on its m-th frame, each with the same placement there,
    so that the routine computes their Jacobian columns; others stay with the
    main derivation."""
    slots = []
    for m in range(len(group.frames[0])):
        per = [[e for e in model.end_effectors if e.frame == keys[m]] for keys in group.frames]
        if all(len(x) == 1 for x in per) and \
                all(x[0].origin == per[0][0].origin and x[0].rotation == per[0][0].rotation for x in per):
            slots.append((m, [x[0] for x in per]))
    return slots


def _all_outputs(slots):
    """compute_all's routine: C's results, the blocks of C and A, and for each
    end-effector slot its world position (result) and its Jacobian columns of
    the subtree's joints (block J<m>), from the world pose of the subtree's
    frame 0 (input `pose`)."""
    def outputs(kin, comp, vel):
        outs, keys, blocks = _coriolis_outputs(kin, comp, vel, ("C", "A"))
        if not slots:
            return outs, keys, blocks
        sub = kin.model
        pose = [sp.Symbol(f"pose[{i}]", real=True) for i in range(12)]
        poses = kin.world_poses(base=(sp.Matrix(3, 3, pose[:9]), pose[9:]))
        for m, ees in slots:
            _, pn = ee_pose(kin, poses, ees[0])
            outs, keys = outs + list(pn), keys + [(-1, -1)] * 3
            J = world_columns(kin, poses, ees[0], pn, sp.zeros(6, index_span(sub)))
            blocks += [(f"J{m}", r, f.index, J[r, f.index], (f.index, -2))
                       for f in sub.chain(ees[0].frame) if f.moving for r in range(6)]
        return outs, keys, blocks
    return outputs


def all_split(kin: Kinematics, vel, poses, world_jacobians):
    """A, C, Q and the world-frame Jacobians (compute_all) with one routine
    per group giving C's results, A's block and the Jacobian columns of the
    end effectors the instances have alike (the routine writes the blocks and
    columns into the outputs); the other columns come from the main
    derivation on the full kinematics (`kin`, `poses`), and the end effectors
    no routine serves keep their derived Jacobian (`world_jacobians`: name ->
    matrix)."""
    def routine(group):
        slots = _ee_slots(kin.model, group)
        targets = {f"J{m}": (tuple(f"J_{e.name}_world" for e in ees), False) for m, ees in slots}
        return _all_outputs(slots), bool(slots), targets, slots

    def finish(main, comp, v, given):
        out = {"A": inertia_matrix(main, comp, given), "C": coriolis_matrix(main, comp, v, given)[0],
               "Q": gravity_vector(main, comp, given)}
        for ee in kin.model.end_effectors:
            if ee.name in given.ees:
                pn, skip = given.ees[ee.name]
                out[f"J_{ee.name}_world"] = world_columns(kin, poses, ee, pn, sp.zeros(6, kin.model.ndof),
                                                          skip, DIRECT)
            else:
                out[f"J_{ee.name}_world"] = world_jacobians[ee.name]
        return out
    return _split(kin, vel, routine, CORIOLIS_FORCES, ("C", "A"), finish, "all")
