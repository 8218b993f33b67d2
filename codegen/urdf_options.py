"""The options of a URDF build (UrdfOptions): a light record, imported by the
module cache's hit path without the generator (no SymPy)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass(frozen=True)
class UrdfOptions:
    """Everything besides the URDF's content that decides the generated files
    (codegen.urdf_import keys its cache entries with it)."""
    end_effectors: tuple = ()
    name: str | None = None  # default: the URDF file name (codegen.urdf_build.default_name)
    floating_base: bool = False
    snap: bool = True  # rotation entries within 1e-9 of 0, +-1 made exact (codegen.read.urdf)
    friction: bool = True  # URDF <dynamics> -> default Fv, Fc; False: 0
    share_subtrees: tuple = ("C", "all")
    python: bool = True  # also build the Python module
    emit_model: bool = False  # also write NAME.toml, NAME_params.toml

    def key(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
