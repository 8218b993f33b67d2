"""The Pinocchio side of a robot given as a URDF, for a C-level comparison (`make bench-robots`).

A later step turns a URDF into our kernels with codegen.read.urdf.load_urdf (written
elsewhere) and runs run.c_level on the Case built here:

    case = urdf_case("ur5", gen_dir, "ur5", urdf, ee_links=["tool0"], params=robot.values,
                     joint_order=[f.joint for f in robot.model.frames if f.moving], build=build_dir)
    res = run.c_level(case, args, build_dir, states, q, dq, core)

Both sides read the same URDF: Pinocchio its inertias, our kernels the parameter
vector load_urdf derived from them (written to the states file). Joints must be
1-dof (nv == 1), but for a floating base (floating=True: Pinocchio's
JointModelFreeFlyer between the world and the root link, as --floating-base does,
or the URDF's own floating root joint), which the harness reads as our first 7
configuration and 6 velocity entries (the same convention on both sides).
Pinocchio makes a URDF `continuous` joint a (cos, sin) pair (RUBX/Y/Z, nq = 2);
the harnesses feed it cos and sin of our angle, so Pinocchio is timed on its
own model of the URDF and skips the sine and cosine that our kernels evaluate.
"""
from __future__ import annotations

from pathlib import Path

from .pin_model import pin_harness_text
from .python_level import pin_ees
from .robot import kernel_set
from .run import Case

# Joint types the header-only harness (harness/bench_pin.cpp) can rebuild.
HARNESS_JOINTS = {"JointModelRX", "JointModelRY", "JointModelRZ", "JointModelPX", "JointModelPY", "JointModelPZ",
                  "JointModelRevoluteUnaligned", "JointModelPrismaticUnaligned",
                  "JointModelRUBX", "JointModelRUBY", "JointModelRUBZ"}


def pin_model_from_urdf(urdf_path, floating: bool = False):
    """pin.buildModelFromUrdf, fixed base or (floating) with a free-flyer root joint, with every
    other joint checked to be 1-dof and of a type the header-only harness rebuilds; one error
    listing the joints that are not."""
    import pinocchio as pin

    pmodel = pin.buildModelFromUrdf(str(urdf_path))
    if floating and pmodel.joints[1].shortname() != "JointModelFreeFlyer":  # not the URDF's own
        pmodel = pin.buildModelFromUrdf(str(urdf_path), pin.JointModelFreeFlyer())
    first = 2 if floating else 1
    bad = [f"{pmodel.names[j]} ({pmodel.joints[j].shortname()})" for j in range(first, pmodel.njoints)
           if pmodel.joints[j].nv != 1 or pmodel.joints[j].shortname() not in HARNESS_JOINTS]
    if bad:
        raise ValueError(f"{urdf_path}: joints the C++ harness cannot time: {', '.join(bad)}")
    return pmodel


def link_frame(pmodel, link: str) -> str:
    """The Pinocchio frame of a URDF link (its BODY frame), by name; a clear error if absent."""
    import pinocchio as pin

    if not pmodel.existFrame(link, pin.BODY):
        raise ValueError(f"no link {link!r} in the Pinocchio model")
    return link


def urdf_case(name: str, gen_dir: Path, prefix: str, urdf_path: Path, ee_links, params, joint_order,
              build: Path, ee_names=None, floating: bool = False) -> Case:
    """A Case for run.c_level: our kernels in gen_dir (C prefix `prefix`), Pinocchio from the URDF.

    ee_links: URDF link names of the end effectors, in the order of the kernels' `ee` argument;
    ee_names: their names in the report (default: the link names); joint_order: URDF joint names
    in our q order (with a floating base (floating=True) the first six are the base's
    velocities); params: our parameter vector."""
    import numpy as np

    pmodel = pin_model_from_urdf(urdf_path, floating)
    base = []  # the free-flyer: Pinocchio's velocities 0..5 are our six base velocities
    if floating:
        base, joint_order = [pmodel.names[1]], list(joint_order)[6:]
    ee_names = tuple(ee_names or ee_links)
    if len(ee_names) != len(ee_links):
        raise ValueError("ee_names and ee_links differ in length")
    frames = [(n, link_frame(pmodel, link)) for n, link in zip(ee_names, ee_links)]
    missing = [j for j in joint_order if not pmodel.existJointName(j)]
    if missing or len(joint_order) + 6 * len(base) != pmodel.nv:
        raise ValueError(f"joint order does not match the URDF's {pmodel.nv} moving joints (unknown: {missing})")
    perm = np.array([*range(6 * len(base)), *(pmodel.joints[pmodel.getJointId(j)].idx_v for j in joint_order)])
    model_txt = Path(build) / f"{name}_pin_model.txt"
    model_txt.write_text(pin_harness_text(pmodel, urdf_path, base + joint_order, frames))
    return Case(name, kernel_set(gen_dir, prefix, ee_names), ee_names, list(params), pmodel, perm,
                pin_ees(pmodel, frames), model_txt)
