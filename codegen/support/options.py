"""The options of a URDF build (UrdfOptions): a light record, imported by the
module cache's hit path without the generator (no SymPy)."""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

# NAME: the C prefix NAME_, the macros NAME_... (uppercased) and the module NAME_kernels, as
# given. No leading underscore: C reserves file-scope identifiers that start with one (C99 7.1.3).
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def check_name(name) -> str:
    """`name` if it is a valid NAME (a C identifier and Python module name, ASCII, starting with a
    letter); else ValueError in one line, with a name that would do."""
    if isinstance(name, str) and NAME.fullmatch(name):
        return name
    text = str(name)
    fix = re.sub(r"[^A-Za-z0-9]+", "_", text.encode("ascii", "ignore").decode()).strip("_")
    fix = fix if fix[:1].isalpha() else f"r{fix}" if fix else "robot"
    raise ValueError(f"name {text!r} is not a C identifier / Python module name: use ASCII letters, digits "
                     f"and underscores, starting with a letter (e.g. {fix!r})")


@dataclass(frozen=True)
class UrdfOptions:
    """Everything besides the URDF's content that decides the generated files
    (codegen.urdf keys its cache entries with it)."""
    end_effectors: tuple = ()
    name: str | None = None  # default: the URDF file name (codegen.pipeline.default_name)
    floating_base: bool = False
    snap: bool = True  # rotation entries within 1e-9 of 0, +-1 made exact (codegen.read.urdf)
    friction: bool = True  # URDF <dynamics> -> default Fv, Fc; False: 0
    share_subtrees: tuple = ("C", "all")
    python: bool = True  # also build the Python module
    emit_model: bool = False  # also write NAME.toml, NAME_params.toml
    kernels: tuple | None = None  # the optional kernels built (CodegenConfig.kernels); None: all
    native: bool = False  # the module compiled for this CPU only (CodegenConfig.native)

    def __post_init__(self):
        if self.name is not None:
            check_name(self.name)
        if self.kernels is not None:  # one order, so that one set of kernels is one cache key
            if isinstance(self.kernels, str) or not all(isinstance(k, str) for k in self.kernels):
                raise TypeError(f"kernels: a list of kernel names, not {self.kernels!r}")
            if len(set(self.kernels)) != len(tuple(self.kernels)):
                raise ValueError(f"kernels: {list(self.kernels)} names a kernel twice")
            object.__setattr__(self, "kernels", tuple(sorted(self.kernels)))

    def key(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}
