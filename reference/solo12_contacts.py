"""Solo12 from example-robot-data with its four feet as point contacts, shared by
examples/quadruped_mpc.py and reference/crocoddyl_quadruped.py (its example and benchmark): the
feet in contact-bit order, the stance feet's Baumgarte gain, the URDF and SRDF, the module."""
from __future__ import annotations

from pathlib import Path

from reference.robot_data import robots_dir

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")  # contact bits 0-3: Crocoddyl's lf, rf, lh, rh
KD = 50.0  # 1/s: Baumgarte velocity gain of the stance feet


def solo_files() -> tuple[Path, Path]:
    """Solo12's URDF and SRDF as example-robot-data installs them (with Pinocchio, `make setup`)."""
    root = robots_dir() / "solo_description"
    return root / "robots" / "solo12.urdf", root / "srdf" / "solo.srdf"


def load_robot():
    """Solo12's module on a free-flyer, the feet as end effectors and point contacts (cached build)."""
    import codegen

    return codegen.import_urdf(solo_files()[0], end_effectors=FEET, floating_base=True, contacts=FEET)
