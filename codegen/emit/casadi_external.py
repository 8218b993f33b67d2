"""CasADi external functions of a robot: the C of NAME_casadi.c, which implements CasADi's
external-function C API (casadi.external, docs/casadi.md) over the robot's kernels.

For each of forward dynamics, inverse dynamics and every end effector's position, two
functions: NAME_<f>(...) at the default parameters, NAME_<f>_p(..., p) with the parameter
vector as last input; each with jac_NAME_<f>, CasADi's Jacobian of an external
(casadi/core/external.cpp: an external has a Jacobian if the library defines jac_<name>, whose
inputs are the function's inputs then its nominal outputs "out_<o>", and whose outputs are
the blocks "jac_<o>_<i>" for every output o and input i, in that order; checked by
Function.jacobian() of casadi 3.8). The blocks come from the analytical derivative kernels
(forward_dynamics_derivatives, inverse_dynamics_derivatives with compute_A, the world-frame
Jacobian's linear rows, the regressor and compute_Q for p): never CasADi's AD nor finite
differences.

Sparsity (CasADi's compressed columns: nrow, ncol, colind[ncol + 1], row[nnz]) says what is
structurally zero, from the tree: tau_i depends on q_j, v_j, a_j only if joints i and j are on
one chain (one is an ancestor of the other or the same: the branch-induced sparsity of A,
Featherstone 2005); on a link's inertial parameters only if the link is in joint i's subtree;
on Ia, Fv, Fc of joint j only if i = j. ddq_i depends on anything acting on the same subtree of
the world (two arms fixed to the world apart are decoupled); an end effector's position on the
joints on its chain, not on p (a URDF's geometry is constant; p holds g and the inertial and
actuator parameters). Every other block is dense.

On a free-flying base q has NQ = NV + 1 entries (position, quaternion x, y, z, w, joints) and the
kernels' q-derivatives are on the tangent space (NV columns, Pinocchio's convention: q (+) delta,
delta a base-axes twist). CasADi's q is a plain vector, so the q-blocks are d f / dq in those NQ
coordinates, by the chain rule: d f / d position = d f / d delta_lin R^T, d f / d quaternion =
d f / d delta_ang G(quaternion), G the derivative of the body rotation vector of q/|q| (the kernels
normalize the quaternion, so the radial direction has derivative 0, as f has). The p family needs a model whose p holds no
geometry (every URDF): d/d geometry has no analytical kernel.

A model with contacts (docs/contact-dynamics.md) also gets NAME_constrained_dynamics(q, v, tau, mask,
kp, kd, mu, ref) -> (ddq, lambda): the mask one flag per contact, each exactly 0 or 1 (anything else
fails the evaluation), the Jacobian's q, v, tau blocks from constrained_dynamics_derivatives, the
mask's structurally empty (piecewise constant), and those of kp, kd, mu and ref, which no kernel
differentiates, an error when CasADi asks for them (it passes NULL for a block nobody reads). And
NAME_impulse_dynamics(q, v, mask, restitution, mu) -> (v_plus, impulse), the impact at touchdown,
its Jacobian's q and v blocks from impulse_dynamics_derivatives, restitution's and mu's refused.
"""
from __future__ import annotations

from dataclasses import dataclass

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from ..read.model import ModelError
from ..read.records import ACTUATOR
from ..support.templates import template_root
from .abi_records import ABI
from .cnames import CNames

KERNEL_PREFIX = "kkca_"  # the kernels' symbol prefix inside the library (the header's NAME_kernels_prefix)
NEEDED = {"forward_dynamics": "forward_dynamics_derivatives", "inverse_dynamics": "inverse_dynamics_derivatives"}


@dataclass(frozen=True)
class Sparsity:
    """A CasADi sparsity pattern: nrow x ncol, the nonzeros' rows column by column."""
    nrow: int
    ncol: int
    rows: tuple  # rows[c]: the structurally nonzero rows of column c, ascending

    @staticmethod
    def dense(nrow: int, ncol: int) -> "Sparsity":
        return Sparsity(nrow, ncol, tuple(tuple(range(nrow)) for _ in range(ncol)))

    @staticmethod
    def of(nrow: int, ncol: int, nonzero) -> "Sparsity":
        """The pattern whose (i, j) is nonzero where nonzero(i, j)."""
        return Sparsity(nrow, ncol, tuple(tuple(i for i in range(nrow) if nonzero(i, j)) for j in range(ncol)))

    @property
    def nnz(self) -> int:
        return sum(len(r) for r in self.rows)

    @property
    def compressed(self) -> tuple:
        """CasADi's integer array: nrow, ncol, colind (ncol + 1), row (nnz)."""
        colind = [0]
        for r in self.rows:
            colind.append(colind[-1] + len(r))
        return (self.nrow, self.ncol, *colind, *(i for r in self.rows for i in r))


@dataclass(frozen=True)
class Port:
    """An input or output of an external function."""
    name: str
    sparsity: Sparsity


@dataclass(frozen=True)
class External:
    """One function of the library: `kind` (forward_dynamics, inverse_dynamics, fk) names the body
    the template lays out; `jacobian` its jac_ form; `ee` the end effector's fragment (fk)."""
    name: str  # the C symbol, NAME_<f>[_p] or jac_NAME_<f>[_p]
    kind: str
    jacobian: bool
    with_p: bool
    inputs: tuple
    outputs: tuple
    buffers: tuple  # (C name, doubles) of the work vector w, in order
    ee: str = ""
    doc: str = ""

    @property
    def n_args(self) -> int:
        """The function's own inputs (a jac_'s nominal outputs out_<o> left out)."""
        return sum(not port.name.startswith("out_") for port in self.inputs)

    @property
    def work(self) -> int:
        return sum(n for _, n in self.buffers)


def _chains(model) -> tuple:
    """(ancestors, root) of every frame key: its moving ancestors' velocity indices including its
    own joint's, and the index of the topmost one (-1 if the frame is fixed to the world)."""
    ancestors, root = {}, {}
    for f in model.frames:  # parents first
        up = ancestors.get(f.parent, frozenset())
        ancestors[f.key] = up | {f.index} if f.moving else up
        top = root.get(f.parent, -1)
        root[f.key] = f.index if (f.moving and top < 0) else top
    return ancestors, root


def _patterns(model) -> dict:
    """The structural patterns of the blocks (module docstring)."""
    n, names = model.ndof, model.param_names
    ancestors, root = _chains(model)
    joint_key = {f.index: f.key for f in model.joints}
    anc = [ancestors[joint_key[i]] for i in range(n)]
    comp = [root[joint_key[i]] for i in range(n)]
    related = Sparsity.of(n, n, lambda i, j: i in anc[j] or j in anc[i])
    coupled = Sparsity.of(n, n, lambda i, j: comp[i] == comp[j])
    # for each parameter: (its frame's ancestors, its frame's root, the frame's own joint if it is Ia/Fv/Fc)
    owner = {}
    for f in model.frames:
        for pn in f.param_names():
            own = f.index if pn.split("_", 1)[0] in ACTUATOR else None
            owner[pn] = (ancestors[f.key], root[f.key], own)

    def tau_p(i, k):
        if names[k] == "g":
            return True
        ancs, _, own = owner[names[k]]
        return i == own if own is not None else i in ancs

    def ddq_p(i, k):
        if names[k] == "g":
            return True
        _, top, _ = owner[names[k]]
        return top >= 0 and top == comp[i]
    return {"related": related, "coupled": coupled, "tau_p": Sparsity.of(n, len(names), tau_p),
            "ddq_p": Sparsity.of(n, len(names), ddq_p), "anc": ancestors}


def _q_block(sp: Sparsity, model, moves: bool = True) -> Sparsity:
    """A pattern over the NV tangent columns as one over q's NQ columns: on a free-flyer the base's
    position (columns 0-2) is the image of the linear velocity's three columns and its quaternion (3-6)
    of the angular velocity's (kkca_to_q); `moves` False: the output does not depend on the base's
    position (the dynamics, in base axes), so columns 0-2 are empty."""
    if not model.floating_base:
        return sp
    sources = [(0, 1, 2)] * 3 + [(3, 4, 5)] * 4 + [(j,) for j in range(6, model.ndof)]
    rows = [tuple(sorted({i for t in src for i in sp.rows[t]})) for src in sources]
    if not moves:
        rows[:3] = [()] * 3
    return Sparsity(sp.nrow, model.nq, tuple(rows))


def externals(model, abi: ABI, names: CNames) -> tuple:
    """The External records of `model`'s library, values before their Jacobians."""
    for kind, kernel in NEEDED.items():
        if not abi.has(kernel):
            raise ModelError(f"--casadi: the Jacobian of {kind} needs the kernel {kernel}: build with it "
                             "(--kernels core,forward_dynamics_derivatives,inverse_dynamics_derivatives or all)")
    n, nq, np_ = model.ndof, model.nq, len(model.param_names)
    with_p = (False, True) if not model.geometry and abi.has("regressor") else (False,)
    pat = _patterns(model)
    vec = Sparsity.dense
    out = []
    specs = [("forward_dynamics", ("q", "v", "tau"), "ddq", n,
              {"q": _q_block(pat["coupled"], model, False), "v": pat["coupled"], "tau": pat["coupled"],
               "p": pat["ddq_p"]}, "", None),
             ("inverse_dynamics", ("q", "v", "a"), "tau", n,
              {"q": _q_block(pat["related"], model, False), "v": pat["related"], "a": pat["related"],
               "p": pat["tau_p"]}, "", None)]
    for e, frag in zip(model.end_effectors, names.ees):
        chain = pat["anc"][e.frame]
        specs.append((f"fk_{frag}", ("q",), "position", 3,
                      {"q": _q_block(Sparsity.of(3, n, lambda i, j: j in chain), model),
                       "p": Sparsity(3, np_, ((),) * np_)},
                      frag, e.name))
    sizes = {"q": nq, "v": n, "tau": n, "a": n, "p": np_}
    for base, ins, oname, osize, blocks, frag, ee_name in specs:
        kind = "fk" if frag else base
        for p in with_p:
            fname = f"{names.prefix}_{base}" + ("_p" if p else "")
            inputs = tuple(Port(i, vec(sizes[i], 1)) for i in ins + (("p",) if p else ()))
            zeros = tuple((f"z_{i.name}", i.sparsity.nrow) for i in inputs)
            pbuf = () if p else (("p_default", np_),)
            value_buffers = zeros + pbuf + ((("T", 16),) if kind == "fk" else ())
            what = f"end effector {ee_name!r}'s position" if kind == "fk" else base.replace("_", " ")
            doc = f"{what}{' at parameters p' if p else ' at the default parameters'}"
            out.append(External(fname, kind, False, p, inputs, (Port(oname, vec(osize, 1)),), value_buffers, frag, doc))
            jac_outputs = tuple(Port(f"jac_{oname}_{i.name}", blocks[i.name]) for i in inputs)
            if kind == "fk":
                extra = (("J", 6 * n),) + ((("d_qq", 3 * nq),) if model.floating_base else ())
            else:
                extra = (("d_q", n * n), ("d_v", n * n), ("d_3", n * n))
                extra += (("d_qq", n * nq),) if model.floating_base else ()
                if p:  # d tau / dp (kkca_dtau_dp's buffers), and for ddq its value and -A^-1 d tau / dp
                    extra += (("Y", n * max(np_ - 1, 1)), ("pg", np_), ("Qg", n), ("dtau_dp", n * np_))
                    extra += (("ddq", n), ("d_p", n * np_)) if kind == "forward_dynamics" else ()
            out.append(External(f"jac_{fname}", kind, True, p, inputs + (Port(f"out_{oname}", vec(osize, 1)),),
                                jac_outputs, zeros + pbuf + extra, frag, f"the Jacobian of {fname}"))
    if model.contacts and abi.has("constrained_dynamics_derivatives"):
        out += _constrained(model, names)
    if model.contacts and abi.has("impulse_dynamics_derivatives"):
        out += _impulse(model, names)
    symbols = [x.name for x in out]
    if len(set(symbols)) != len(symbols):
        raise ModelError("--casadi: two external functions would have one name (an end effector named like "
                         "another's _p form): rename an end effector")
    return tuple(out)


def _constrained(model, names) -> list:
    """NAME_constrained_dynamics (q, v, tau, mask, kp, kd, mu, ref) -> (ddq, lambda) and its Jacobian
    from constrained_dynamics_derivatives (its q, v, tau blocks). The contacts' placement error (kp)
    moves with the base's position: the q blocks have all NQ columns."""
    n, m = model.ndof, sum(c.rows for c in model.contacts)
    sizes = {"q": model.nq, "v": n, "tau": n, "mask": len(model.contacts), "kp": 1, "kd": 1, "mu": 1,
             "ref": model.contact_ref_size}
    return _contact_external(model, names, "constrained_dynamics", sizes, (("ddq", n), ("lambda", m)), True)


def _impulse(model, names) -> list:
    """NAME_impulse_dynamics (q, v, mask, restitution, mu) -> (v_plus, impulse) and its Jacobian from
    impulse_dynamics_derivatives (its q and v blocks). An impact does not depend on where the base
    is: the base's position columns are empty."""
    n, m = model.ndof, sum(c.rows for c in model.contacts)
    sizes = {"q": model.nq, "v": n, "mask": len(model.contacts), "restitution": 1, "mu": 1}
    return _contact_external(model, names, "impulse_dynamics", sizes, (("v_plus", n), ("impulse", m)), False)


def _contact_external(model, names, kind, sizes, outs, q_moves) -> list:
    """NAME_<kind>(sizes' inputs) -> outs at the default parameters, and its Jacobian from the
    derivative kernel's blocks of the inputs before the mask (buffers d_<b> for the first output,
    l_<b> for the second, b in q, v and tau's 3). The mask is piecewise constant: its blocks are
    structurally empty. The inputs after it, which no kernel differentiates (gains, damping,
    restitution, ref), have blocks declared dense, and jac_ returns 1 (an error) when asked to write
    them, never zeros."""
    n, np_, nc = model.ndof, len(model.param_names), len(model.contacts)
    blocks = ("q", "v", "3")[:list(sizes).index("mask")]
    vec = Sparsity.dense
    inputs = tuple(Port(i, vec(s, 1)) for i, s in sizes.items())
    outputs = tuple(Port(o, vec(size, 1)) for o, size in outs)
    zeros = tuple((f"z_{i.name}", i.sparsity.nrow) for i in inputs)
    base = (("p_default", np_),)
    fname = f"{names.prefix}_{kind}"
    value = External(fname, kind, False, False, inputs, outputs,
                     zeros + base + tuple((f"t_{o}", size) for o, size in outs),
                     doc=f"{kind.replace('_', ' ')} at the default parameters")

    def block(rows, i):
        if i == "q":
            return _q_block(vec(rows, n), model, q_moves)
        if i == "mask":
            return Sparsity(rows, nc, ((),) * nc)
        return vec(rows, sizes[i])
    jac_outputs = tuple(Port(f"jac_{o.name}_{i}", block(o.sparsity.nrow, i)) for o in outputs for i in sizes)
    extra = tuple((f"{o}_{b}", size * n) for o, (_, size) in zip("dl", outs) for b in blocks)
    extra += tuple((f"{o}_qq", size * model.nq) for o, (_, size) in zip("dl", outs)) if model.floating_base else ()
    jac = External(f"jac_{fname}", kind, True, False,
                   inputs + tuple(Port(f"out_{o.name}", o.sparsity) for o in outputs), jac_outputs,
                   zeros + base + extra, doc=f"the Jacobian of {fname}")
    return [value, jac]


def render_casadi(model, abi: ABI, names: CNames, header: str) -> str:
    """The text of NAME_casadi.c, which includes `header` (NAME_kernels.h)."""
    fs = externals(model, abi, names)
    patterns = []
    for f in fs:
        for port in f.inputs + f.outputs:
            if port.sparsity.compressed not in patterns:
                patterns.append(port.sparsity.compressed)
    env = Environment(loader=FileSystemLoader(str(template_root() / "casadi")), undefined=StrictUndefined,
                      keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    g_index = model.param_names.index("g")
    return env.get_template("external.c.j2").render(
        fs=fs, patterns=patterns, sp_index=lambda s: patterns.index(s.compressed), header=header,
        prefix=names.prefix, kp=KERNEL_PREFIX + names.prefix + "_", n=model.ndof, nq=model.nq,
        floating=model.floating_base,
        np=len(model.param_names), npi=abi.nparams - 1 - len(model.geometry), g_index=g_index,
        nc=len(model.contacts), m=sum(c.rows for c in model.contacts))
