"""The generator's options as typed records, each default written once.

GenerateOptions (what the generated code contains, from any input) and
UrdfOptions (that, plus how a URDF is read) define, through their fields'
metadata, the command line's flags (codegen.cli), import_urdf's keywords
(codegen.urdf) and the module cache's key (UrdfOptions.key). Light: imported
by the cache's hit path without the generator (no SymPy).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field

# NAME: the C prefix NAME_, the macros NAME_... (uppercased) and the module NAME_kernels, as
# given. No leading underscore: C reserves file-scope identifiers that start with one (C99 7.1.3).
NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def check_robot_name(name) -> str:
    """`name` if it is a valid NAME (a C identifier and Python module name, ASCII, starting with a
    letter); else ValueError in one line, with a name that would do."""
    if isinstance(name, str) and NAME.fullmatch(name):
        return name
    text = str(name)
    fix = re.sub(r"[^A-Za-z0-9]+", "_", text.encode("ascii", "ignore").decode()).strip("_")
    fix = fix if fix[:1].isalpha() else f"r{fix}" if fix else "robot"
    raise ValueError(f"name {text!r} is not a C identifier / Python module name: use ASCII letters, digits "
                     f"and underscores, starting with a letter (e.g. {fix!r})")


def option(default, flag: str, help: str, **cli):
    """A field with its command-line flag: "--x" sets a False default to True,
    "--no-x" a True default to False; other fields take a value (`cli`: argparse
    keywords, `parse`: the name of the command line's parser for the value)."""
    return field(default=default, metadata={"flag": flag, "help": help, **cli})


@dataclass(frozen=True)
class GenerateOptions:
    """What the generated code contains, whatever the input (model file or URDF)."""
    name: str | None = option(
        None, "--name", "robot name: C prefix NAME_, macros NAME_ (uppercased), module NAME_kernels; "
        "default: the model's name (TOML) or the URDF's file name without extension "
        "(ur5_robot.urdf -> ur5_robot). ASCII letters, digits and _, starting with a letter "
        "(a C identifier and Python module name); anything else is an error", metavar="NAME")
    # the kernels ("A", "C", "all": compute_all) computed with one static routine per group of
    # isomorphic subtrees (codegen/derive/subtrees.py): less machine code per tick. Not A by
    # default: sharing costs compute_A some hot time (docs/design-notes.md).
    share_subtrees: tuple = option(
        ("C", "all"), "--share-subtrees", "kernels that call one static routine per group of isomorphic "
        "subtrees (two arms, legs), comma-separated: C, A, all (compute_all), or none; less machine code, "
        "compute_A a little slower alone (default: C,all)", parse="share_subtrees")
    # the optional kernels (codegen.emit.abi.OPTIONAL) the build contains; None: all of them
    kernels: tuple | None = option(
        None, "--kernels", "the kernels the build contains: all (default), or core (every kernel but the "
        "dynamics derivatives) plus any optional kernel, comma-separated (e.g. "
        "core,inverse_dynamics_derivatives). The derivative kernels dominate generation and compile time",
        parse="kernels")
    python: bool = option(False, "--python", "also build an importable Python module NAME_kernels in DIR")
    native: bool = option(
        False, "--native", "with --python: compile the module for this machine's CPU (-march=native, one "
        "copy of each kernel: about a third of the portable build's compile time); it may not run on "
        "another CPU. Default: portable (a copy per x86-64 level, chosen at load time). "
        "codegen.import_urdf's cached modules are built this way")

    def __post_init__(self):
        if self.name is not None:
            check_robot_name(self.name)
        if isinstance(self.share_subtrees, str) or not all(s in SHARE_CHOICES for s in self.share_subtrees):
            raise ValueError(f"share_subtrees: a subset of {SHARE_CHOICES}, not {self.share_subtrees!r}")
        object.__setattr__(self, "share_subtrees", tuple(self.share_subtrees))
        if self.kernels is not None:  # one order, so that one set of kernels is one cache key
            if isinstance(self.kernels, str) or not all(isinstance(k, str) for k in self.kernels):
                raise TypeError(f"kernels: a list of kernel names, not {self.kernels!r}")
            if len(set(self.kernels)) != len(tuple(self.kernels)):
                raise ValueError(f"kernels: {list(self.kernels)} names a kernel twice")
            object.__setattr__(self, "kernels", tuple(sorted(self.kernels)))
        for f in dataclasses.fields(self):
            if isinstance(f.default, bool) and not isinstance(getattr(self, f.name), bool):
                raise TypeError(f"{f.name}: True or False, not {getattr(self, f.name)!r}")

    def key(self) -> dict:
        """The options as plain JSON data (the module cache's key)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()}

    @classmethod
    def flags(cls) -> list:
        """(field, its metadata) of every option that has a command-line flag."""
        return [(f, f.metadata) for f in dataclasses.fields(cls) if "flag" in f.metadata]


SHARE_CHOICES = ("A", "C", "all")
MIMIC_CHOICES = ("refuse", "independent")  # UrdfOptions.mimic (codegen.read.urdf)


@dataclass(frozen=True)
class UrdfOptions(GenerateOptions):
    """GenerateOptions plus how a URDF is read: everything besides the URDF's
    content that decides the generated files (codegen.urdf keys its cache
    entries with it)."""
    end_effectors: tuple = option(
        (), "--end-effector", "URDF only: a link to expose as end effector (repeatable; its position in "
        "this list is the `ee` argument of NAME_jacobian)", action="append", metavar="LINK")
    # the frames that can touch (codegen/read/records.py, Contact), "LINK:3d" or "LINK:6d"
    contacts: tuple = option(
        (), "--contact", "URDF only: a link that can touch the environment, LINK (a point contact, 3d) or "
        "LINK:6d (a flat contact: force and moment); repeatable; its position in this list is its bit in the "
        "contact kernels' run-time mask (docs/contact-dynamics.md)", action="append", metavar="LINK[:3d|6d]")
    floating_base: bool = option(
        False, "--floating-base", "URDF only: put a free-flyer (Pinocchio's JointModelFreeFlyer, named "
        "root_joint) between the world and the root link: q = [x, y, z, qx, qy, qz, qw, joints...], "
        "dq = [base linear, base angular velocity (base axes), joints...]. A URDF whose root joint is "
        "floating gets it without this flag")
    # rotation entries within 1e-9 of 0, +-1 made exact (codegen.read.urdf)
    snap: bool = option(True, "--no-snap", "URDF only: keep rotation entries within 1e-9 of 0 or +-1 as "
                        "written (default: make them exact, so that they fold away)")
    friction: bool = option(True, "--no-friction", "URDF only: default friction parameters 0 (the URDF's "
                            "<dynamics damping friction> ignored), so inverse_dynamics equals Pinocchio's rnea")
    emit_model: bool = option(False, "--emit-model", "URDF only: also write the derived NAME.toml and "
                              "NAME_params.toml, which regenerate the same C with the MODEL.toml PARAMS.toml form")
    # <mimic> on a moving joint (q = multiplier * q_master + offset): not modelled. "refuse": a
    # ModelError naming the joints; "independent": each is its own coordinate, as Pinocchio's
    # buildModelFromUrdf(..., mimic=False) reads it (the summary line lists them)
    mimic: str = option(
        "refuse", "--mimic", "URDF only: what to do with joints that have <mimic> (coupled to another "
        "joint): refuse (default: an error naming them), or independent (each its own coordinate, "
        "Pinocchio's default mimic=False; the summary line lists them). Mimic coupling is not modelled",
        choices=MIMIC_CHOICES)

    def __post_init__(self):
        if isinstance(self.end_effectors, str):
            raise TypeError(f"end_effectors: a list of link names, not {self.end_effectors!r}")
        object.__setattr__(self, "end_effectors", tuple(self.end_effectors))
        if isinstance(self.contacts, str):
            raise TypeError(f"contacts: a list of 'LINK', 'LINK:3d' or 'LINK:6d', not {self.contacts!r}")
        object.__setattr__(self, "contacts", tuple(contact_spec(c) for c in self.contacts))
        if self.mimic not in MIMIC_CHOICES:
            raise ValueError(f"mimic: one of {', '.join(map(repr, MIMIC_CHOICES))}, not {self.mimic!r}")
        super().__post_init__()


def contact_spec(spec) -> str:
    """'LINK:3d' or 'LINK:6d' from 'LINK', 'LINK:3d', 'LINK:6d' or (LINK, '3d'|'6d')."""
    if isinstance(spec, (tuple, list)) and len(spec) == 2 and all(isinstance(x, str) for x in spec):
        spec = ":".join(spec)
    if not isinstance(spec, str):
        raise TypeError(f"contacts: 'LINK', 'LINK:3d' or 'LINK:6d', not {str(spec)[:80]!r}")
    link, sep, kind = spec.rpartition(":")
    if not sep or kind.lower() not in ("3d", "6d"):
        link, kind = spec, "3d"
    if not link:
        raise ValueError(f"contacts: {spec[:80]!r} names no link")
    return f"{link}:{kind.lower()}"


def contact_pairs(specs) -> tuple:
    """(link, kind) of each normalized contact spec."""
    return tuple(tuple(s.rsplit(":", 1)) for s in specs)


URDF_ONLY = tuple(f.name for f in dataclasses.fields(UrdfOptions) if f.name not in
                  {g.name for g in dataclasses.fields(GenerateOptions)})
