"""The records of the C ABI (codegen/emit/abi.py describes one robot's with
them): an argument (Arg), a function (Function) and the ABI of a robot
(ABI: prefix, sizes, end effectors, functions in header order, and the
parts of the C source they are compiled in), with the vocabulary of roles,
bodies and part groups they use.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

IN, OUT, INDEX = "in", "out", "index"
REAL = "real"  # a double passed by value (integrate's time step dt)
# Derived kernels have their body emitted from the derivation; the others
# (the Jacobian dispatcher and the model's metadata) are laid out by the
# source template.
DERIVED, TEMPLATE = "derived", "template"
# Batch kernels: a derived kernel evaluated for n states at once,
# vectorized over states; their bodies come from the scalar kernel's
# statements (codegen/emit/batch.py).
BATCH = "batch"
# Lane-interleaved batch kernels (abi.interleaved_functions): a batch kernel's statements
# (Function.batch_of: the row-major BATCH function) with the outputs stored by blocks of
# INTERLEAVE states, element-major within a block; compiled with that batch kernel.
INTERLEAVED = "interleaved"
INTERLEAVE = 8  # states per block whatever the build's lane count (4 or 8): one layout for every build
# the kernels with a batch form (the derivatives': of their forms without fext, Function.forward_to)
BATCHED = ("compute_A", "compute_C", "inverse_dynamics", "bias", "forward_dynamics", "inverse_dynamics_derivatives",
           "forward_dynamics_derivatives")
# States per chunk of NAME_rollout: its work arrays on the stack hold this many (4 x NV + NQ doubles each;
# Talos, NV 38: 40 KB), a multiple of every build's lane count (4, 8). The Python rollout splits states
# between threads at multiples of it, so that every state meets the same chunks, and the same lanes of
# forward_dynamics_batch, whatever the number of threads: the same bits.
ROLLOUT_CHUNK = 32
# Parts of the C source (`group` of a Function): the Python module build
# compiles the source once per part, concurrently (-DKKPART=k, see
# parts()): two cores at work and a smaller compiler process for a large
# robot. A kernel without a group is a part of its own; batch kernels go with
# their scalar kernel, the template-laid-out functions with INTERFACE.
MASS, CORIOLIS, DYNAMICS, KINEMATICS = "mass matrix", "Coriolis", "dynamics", "kinematics"
IDENTIFICATION, ALL, INTERFACE = "identification", "compute_all", "interface"
# The derivative kernels, the largest by far, one part each: on two cores the
# forward dynamics' derivatives compile beside the inverse dynamics' and then
# the rest, rather than both in one compiler process (OPTIONAL below).
ID_DERIVATIVES, FD_DERIVATIVES = "inverse dynamics derivatives", "forward dynamics derivatives"
CONTACT, CONTACT_DERIVATIVES = "contact dynamics", "contact derivatives"
FRAMES = ("world", "local")  # the `frame` argument of jacobian: 0, 1


@dataclass(frozen=True)
class Arg:
    """One argument of a C function: an array of `shape` doubles (input or output) or an int."""
    name: str  # C parameter name; also the Python name of an input
    shape: tuple  # () for an int or a double; (n,) a vector; (rows, cols) a row-major matrix
    role: str  # IN, OUT, INDEX or REAL
    # OUT of a derived kernel: the derivation output it receives; IN: the kind
    # of the symbols it holds (codegen/derive/symbols.py: "dq", "ddq", "tau"),
    # when the argument is named otherwise (v, a of the derivative kernels)
    source: str = ""
    batched: bool = False  # n (the INDEX argument `n`) of these, consecutive: shape is per state
    stepped: bool = False  # (rollout) steps of these per state, consecutive (n x steps x shape): shape is per step
    blocked: bool = False  # ceil(n / abi.INTERLEAVE) of these, consecutive: shape is per block of states
    doc: str = ""  # what it holds: units and frames (the Python docstrings' Parameters/Returns)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def decl(self) -> str:
        if self.role == INDEX:
            return f"int {self.name}"
        if self.role == REAL:
            return f"double {self.name}"
        return f"{'const ' if self.role == IN else ''}double *{self.name}"


@dataclass(frozen=True)
class Function:
    """One C function of the ABI: NAME_<name>(args), documented by `doc`."""
    name: str  # without the prefix
    doc: str
    args: tuple
    body: str = DERIVED
    returns: str = "void"
    family: str = ""  # per-end-effector kernels behind one dispatcher: the dispatcher's name
    batch_of: str = ""  # a BATCH function: the scalar kernel it evaluates for each of n states
    group: str = ""  # the part of the C source it is compiled in (parts()); "": see part_name
    # a TEMPLATE function that calls the kernel `forward_to` with zeros for that kernel's inputs
    # it lacks (inverse_dynamics_derivatives: its _fext form with no external force)
    forward_to: str = ""

    @property
    def inputs(self) -> tuple:
        return tuple(a for a in self.args if a.role == IN)

    @property
    def outputs(self) -> tuple:
        return tuple(a for a in self.args if a.role == OUT)


@dataclass(frozen=True)
class ABI:
    """The C ABI of one robot: its prefix, sizes, end effectors and every function, in header order."""
    name: str  # the model name
    prefix: str  # C function prefix, e.g. "krang_"
    macro: str  # macro prefix, e.g. "KRANG"
    ndof: int
    nparams: int
    nq: int  # length of q: ndof, or ndof + 1 on a free-flying base (x, y, z, quaternion x, y, z, w first)
    end_effectors: tuple  # end-effector names; position = the `ee` argument of jacobian
    functions: tuple

    def function(self, name: str) -> Function:
        for f in self.functions:
            if f.name == name:
                return f
        raise KeyError(name)

    def has(self, name: str) -> bool:
        return any(f.name == name for f in self.functions)

    def family(self, name: str) -> tuple:
        """The per-end-effector kernels behind dispatcher `name`, in ee order."""
        return tuple(f for f in self.functions if f.family == name)

    @property
    def derived(self) -> tuple:
        return tuple(f for f in self.functions if f.body == DERIVED)

    @property
    def batched(self) -> tuple:
        """The batch kernels; f.batch_of names the scalar kernel of each."""
        return tuple(f for f in self.functions if f.body == BATCH)

    def batch_source(self, f: Function) -> str:
        """The derived kernel whose statements batch kernel f reprints: its
        scalar kernel's, or the one that forwards to (with zeros)."""
        return self.function(f.batch_of).forward_to or f.batch_of

    def batch_form(self, name: str):
        """The batch kernel of scalar kernel `name`, or None."""
        return next((f for f in self.batched if f.batch_of == name), None)

    def part_name(self, f: Function) -> str:
        """The part f is compiled in: its group; else its scalar kernel's (a
        batch kernel), INTERFACE (a template-laid-out function) or its own name."""
        if f.group:
            return f.group
        if f.body == BATCH:
            return self.part_name(self.function(f.batch_of))
        if f.body == INTERLEAVED:  # with the row-major batch kernel whose statements it reprints
            return self.part_name(self.function(f.batch_of))
        return INTERFACE if f.body == TEMPLATE else f.name

    def parts(self) -> tuple:
        """(number, name, functions) of every part, numbered from 1 in order of first appearance."""
        order = {}
        for f in self.functions:
            order.setdefault(self.part_name(f), []).append(f)
        return tuple((i, name, tuple(fs)) for i, (name, fs) in enumerate(order.items(), 1))

    def part_of(self) -> dict:
        """{function name: its part's number}."""
        return {f.name: i for i, _, fs in self.parts() for f in fs}

    def signature(self, f: Function) -> str:
        args = ", ".join(a.decl for a in f.args) or "void"
        space = "" if f.returns.endswith("*") else " "
        return f"{f.returns}{space}{self.prefix}{f.name}({args})"


def jacobian_name(ee: str, frame: str) -> str:
    """The per-end-effector kernel behind jacobian(ee, frame)."""
    return f"jacobian_{ee}_{frame}"
