"""The derivation's result: the one record derive hands to emit (the role of
Pinocchio's Data beside its Model).

Every output is a SymPy matrix over one straight-line program of intermediate
variables (codegen.derive.program.Program). Outputs are named as the ABI's
arguments name their sources (codegen.emit.abi: "A", "J_left_world", "ddq",
...); the other forms of some kernels are typed fields, not string keys."""
from __future__ import annotations

from dataclasses import dataclass, field

from .program import Program
from .symbols import Symbols


@dataclass
class Derivation:
    program: Program
    symbols: Symbols
    # name -> matrix over `program`. None: the output exists only in a pair form
    # (the forward dynamics' derivatives dddq_dq, dddq_dv: -Minv times the pair matrices)
    outputs: dict = field(default_factory=dict)
    # "A", "C", "all" (compute_all) -> the form with one routine per group of isomorphic
    # subtrees (codegen.derive.subtrees.Split), or None when the robot has no such groups
    splits: dict = field(default_factory=dict)
    # pair-form name -> the pair loops' vectors (codegen.derive.dynamics_derivatives):
    # "dddq_pairs" for the forward dynamics' derivatives
    pair_forms: dict = field(default_factory=dict)

    def has(self, name: str) -> bool:
        """Whether the derivation (so far) has output `name`."""
        return name in self.outputs

    __contains__ = has

    def __getitem__(self, name: str):
        """The output `name` (a matrix, or None for a pair-form output)."""
        return self.outputs[name]
