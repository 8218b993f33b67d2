"""Where example-robot-data's URDFs are: the robots directory of the cmeel prefix that
the `pin` and `example-robot-data` wheels install into (the [test] and [bench] extras)."""
from __future__ import annotations

from pathlib import Path


def robots_dir() -> Path:
    import pinocchio as pin  # the cmeel prefix is found from Pinocchio's own files

    prefix = next(p for p in Path(pin.__file__).parents if p.name == "cmeel.prefix")
    return prefix / "share" / "example-robot-data" / "robots"


# example-robot-data's Panda, Baxter, Talos (talos_reduced, talos_left_arm), TIAGo Pro, PR2, Romeo and
# Alex have mimic finger joints. The references here are pin.buildModelFromUrdf(path) with Pinocchio's
# default mimic=False: each mimic joint its own coordinate. codegen refuses mimic joints unless told to
# read them so (UrdfOptions.mimic): every build of these robots that is compared with Pinocchio says so.
MIMIC = "independent"  # load_urdf's, urdf_robot's and import_urdf's mimic=
MIMIC_FLAGS = ("--mimic", MIMIC)  # python -m codegen's
