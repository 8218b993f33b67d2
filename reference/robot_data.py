"""Where example-robot-data's URDFs are: the robots directory of the cmeel prefix that
the `pin` and `example-robot-data` wheels install into (the [test] and [bench] extras)."""
from __future__ import annotations

from pathlib import Path


def robots_dir() -> Path:
    import pinocchio as pin  # the cmeel prefix is found from Pinocchio's own files

    prefix = next(p for p in Path(pin.__file__).parents if p.name == "cmeel.prefix")
    return prefix / "share" / "example-robot-data" / "robots"
