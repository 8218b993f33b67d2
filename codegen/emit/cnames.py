"""C naming: every name that reaches the generated C goes through here.

Model names (joints, frames, parameters, end effectors, the model itself)
are arbitrary printable strings. The generated C uses them in three ways:

* locals of a kernel: a *kind prefix* and the name's identifier fragment,
  `q_<joint>`, `dq_<joint>`, `ddq_<joint>`, `trq_<joint>` (acceleration and
  torque inputs), `s_<joint>`, `c_<joint>` (sine, cosine) and
  `p_<parameter>`. No prefix is a prefix of another, so two kinds can never
  produce the same local, and none of the
  generator's own identifiers (GENERATED: the arguments q, dq, p, A, ..., the
  helper sincos_q, the temporaries t<digits> and x<digits>) starts with a
  kind prefix, so no local made from a model name can equal one of them.
  The generator's own macros in the source (NDOF, SINCOSCONVERT,
  SINCOSLIMIT) contain no `_`, unlike every macro made from model names.
  Hence no model name is reserved;
* function and macro names: `<prefix>_<function>`, `<prefix>_jacobian_<ee>_<frame>`,
  `<P>_<EE>` (P, EE uppercased). Macros are refused (ModelError) when two
  coincide or one falls into a C library macro namespace (M_PI, FP_..., E...);
* text: C string literals (c_string), names in comments (comment_text) and
  free text quoting names in comments (doc_lines / comment_line: escaped
  after the wrap, line by line), each proven in tests/test_emit_escaping.py.

The generator's own file-scope functions live in the reserved namespace kk_
(RESERVED, routine_name), which no local made from a model name can reach,
whatever the C prefix: `--name dq` with a joint `compute_C_part0` compiles.

An identifier fragment keeps ASCII letters, digits and single underscores,
folds accents (NFKD), writes other characters as u<hex>, and collapses runs
of anything else into one `_` (C++ reserves `__` anywhere). Fragments of
different names of one kind that coincide get a short digest of the original
name, and names that are already clean fragments keep them: the mapping is
injective per kind and stable. Tables are data, as in SymPy's C printer.
"""
from __future__ import annotations

import hashlib
import re
import textwrap
import unicodedata
from collections import Counter
from dataclasses import dataclass

from ..read.model import Model, ModelError
from ..read.model_fields import check_unique

C99_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while _Bool _Complex _Imaginary
""".split())
# C++ (the header is compiled as C++ too), through C++20, and alternative tokens.
CXX_KEYWORDS = frozenset("""
alignas alignof and and_eq asm bitand bitor bool catch char8_t char16_t char32_t class compl concept
consteval constexpr constinit const_cast co_await co_return co_yield decltype delete dynamic_cast
explicit export false friend mutable namespace new noexcept not not_eq nullptr operator or or_eq
private protected public reinterpret_cast requires static_assert static_cast template this
thread_local throw true try typeid typename using virtual wchar_t xor xor_eq
""".split())
# <math.h> functions (with their f/l variants) and macros, C99 7.12.
_MATH_FUNCTIONS = """
acos asin atan atan2 cos sin tan acosh asinh atanh cosh sinh tanh exp exp2 expm1 frexp ilogb ldexp
log log10 log1p log2 logb modf scalbn scalbln cbrt fabs hypot pow sqrt erf erfc lgamma tgamma ceil
floor nearbyint rint lrint llrint round lround llround trunc fmod remainder remquo copysign nan
nextafter nexttoward fdim fmax fmin fma
""".split()
MATH_H = frozenset(_MATH_FUNCTIONS + [f + s for f in _MATH_FUNCTIONS for s in "fl"] + """
NAN INFINITY HUGE_VAL HUGE_VALF HUGE_VALL FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO
FP_FAST_FMA FP_FAST_FMAF FP_FAST_FMAL FP_ILOGB0 FP_ILOGBNAN MATH_ERRNO MATH_ERREXCEPT
math_errhandling fpclassify isfinite isinf isnan isnormal signbit isgreater isgreaterequal isless
islessequal islessgreater isunordered float_t double_t FLT_EVAL_METHOD
""".split())
# Identifiers the generated C uses for itself (arguments, helpers, macros);
# GENERATED_PATTERN: its temporaries (Program's t<n>, CSE's x<n>).
GENERATED = frozenset("""
q dq ddq tau h T a p A C Q J tau_f sq cq i ee frame lower upper velocity effort
sincos_q s c bits ybits libm beyond x y n k r z sr hz w cr s1 c1
NDOF SINCOSCONVERT SINCOSLIMIT
b l o t kv ts vq vs vc vdq vddq vtau sincos_lanes KKSIMD KKCLONES KKCLONING KKVECTOROK KKDOUBLE
kk_overlap KKCOLD KKNOINLINE kk_x in_q in_dq in_ddq in_tau in_p blk_A blk_C pose
v in_v in_a dtau_dq dtau_dv dddq_dq dddq_dv Minv fext
lambda_c mask kp kd mu ref gamma Jc v_plus impulse dddq_dtau dlambda_dq dlambda_dv dlambda_dtau dJtf_dq dac_dq
dac_dv dvc_dq pc restitution kk_constrained kk_fill lall dtq dtv jtf acq acv vcq all rhs next
step pass dd dl NCONTACTS NROWS KKPROXITERS it ddq0 a0 vc Y G Gall hq hv P K col cq cv sq sv point jc
inverse_inertia contact_system contact_delassus kk_lsolve kk_force_response Z L z kk_gemm kk_gemm_tn gq gv
kk_contact_rows kk_point_row kk_chol kk_chol_solve kk_contacts kk_contact_system kk_contact_solve kk_active
B Dinv Jlog KKSERIESANGLE R Rc X beta diag f j jl kk_anc kk_anc_first kk_beta kk_beta_rate kk_half_cot kk_log3 kk_log6
kk_series kk_theta_over_sin kk_lt_solve_rows kk_l_solve_rows kk_sub_last xi xj y h
kk_placement_errors lambda nk rate row rows sign small st t2 value wp wxp
KKW kk_row_contact kk_ccol kk_ccol_first KKWP acc yi last nt tr t0 t1 c cl cz di hr na nz ol oz
KKVL KKVMAX KKNV KKNCH KKVN KKCH KKUNROLL kkrow kkrowu kk_vload kk_vstore kk_vmadd kk_vscale
KKAVX2 KKVL_v4 KKNV_v4 KKNCH_v4 KKVN_v4 KKCH_v4 KKWP_v4 kkrow_v4 kkrowu_v4 kk_vload_v4 kk_vstore_v4 kk_vmadd_v4 kk_vscale_v4
kk_lt_solve_rows_v4 kk_derivatives_v4 kk_impulse kk_impulse_derivatives_v4 dv_plus_dq dv_plus_dv dimpulse_dq
dimpulse_dv dtau_ dltau_ p0 zl jump zero
KKQ0 KKOV KKOT Hq hq jrow kk_sub_q_row kk_translation_columns
kk_zero_ kk_begin kk_end kk_prefetch_code prefetch KKPREFETCH KKPREFETCHSTRIDE KKPART KKIN KKNPARTS
ob kq4 kq4u kq4i r e g u0 u1 u2 u3 e0 e1 e2 e3 d w m splat store_lanes load_lanes size KKLANES KKSHUF KKSHUFFLES KKINLINE KKHELPER
KKSIGN tq width vv va kvu kvh count rollout steps q0 v0 v_out rq rv rtau racc vi qi KKROLLCHUNK rollout_rk4 rqs rvs rdq rdv nv
KKBLOCK KKSTREAMBYTES KKTRI kk_stream_ok kk_stream_rows kk_store_interleaved packed stream nb xq xdq ci cj ck
compute_A_batch_interleaved compute_C_batch_interleaved cholesky_batch_interleaved solve_batch_interleaved
""".split())
GENERATED_PATTERN = re.compile(r"[tx][0-9]+")
# Kind prefixes of locals made from model names: none is a prefix of another
# (and "trq_", not "tau_": tau_ + "f" would be the argument tau_f).
KINDS = {"q": "q_", "dq": "dq_", "ddq": "ddq_", "tau": "trq_", "s": "s_", "c": "c_", "p": "p_", "qb": "qb_",
         "fext": "fx_", "lam": "lm_"}
# The free-flyer's pose q[0:7] (kind "qb", codegen/derive/symbols.py): fixed fragments.
BASE_Q = ("x", "y", "z", "qx", "qy", "qz", "qw")
# Macro namespaces of the C library that a name <P>_<X> can reach (our
# macros always contain "_", so errno's E..., PRI.../SCN... cannot clash):
# POSIX <math.h> M_ constants, FP_/MATH_, <float.h>, <limits.h>, <stdint.h>,
# <signal.h>, <locale.h>, and the implementation's _X and __.
LIBRARY_MACRO = re.compile(
    r"_.*|.*__.*|M_.*|FP_.*|MATH_.*|FLT_.*|DBL_.*|LDBL_.*|DECIMAL_DIG|"
    r"(U?INT|INTMAX|UINTMAX|INTPTR|UINTPTR|PTRDIFF|SIZE|SIG_ATOMIC|WCHAR|WINT|CHAR|SCHAR|UCHAR|SHRT|"
    r"USHRT|LONG|ULONG|LLONG|ULLONG)[A-Z0-9_]*_(MAX|MIN|C|BIT)|LC_[A-Z].*|SIG_[A-Z].*|"
    r"NULL|EOF|BUFSIZ|CHAR_BIT|MB_LEN_MAX|RAND_MAX|EXIT_SUCCESS|EXIT_FAILURE|errno|"
    r"assert|offsetof|bool|true|false|static_assert|complex|imaginary|I")
MAX_FRAGMENT = 40  # longer fragments are cut and get a digest (C99: 31 significant external chars)


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:6]


def fragment(name: str) -> str:
    """Readable identifier fragment of any string: [A-Za-z0-9]+(_[A-Za-z0-9]+)*."""
    out = []
    for ch in unicodedata.normalize("NFKD", name):
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif unicodedata.combining(ch):
            continue  # accents of a folded letter: "ä" -> "a"
        elif ch.isascii():
            out.append("_")
        else:
            out.append(f"_u{ord(ch):04x}_")
    frag = re.sub(r"_+", "_", "".join(out)).strip("_") or f"n{_digest(name)}"
    if len(frag) > MAX_FRAGMENT:
        frag = f"{frag[:MAX_FRAGMENT - 7].rstrip('_')}_{_digest(name)}"
    return frag


def unique_fragments(names, what: str) -> tuple:
    """One fragment per name, distinct (compared case-sensitively). Names that
    are already clean fragments keep them; other names whose fragment is
    unambiguous keep it too; the rest get a digest of the original name."""
    names = tuple(names)
    check_unique(names, what)
    bases = [fragment(n) for n in names]
    out = [b if b == n else None for n, b in zip(names, bases)]
    taken = {b for b in out if b is not None}
    free = Counter(b for b, o in zip(bases, out) if o is None)
    for i, b in enumerate(bases):
        if out[i] is None and free[b] == 1 and b not in taken:
            out[i] = b
            taken.add(b)
    for i, b in enumerate(bases):
        if out[i] is None:
            cand, k = f"{b}_{_digest(names[i])}", 2
            while cand in taken:
                cand, k = f"{b}_{_digest(names[i])}_{k}", k + 1
            out[i] = cand
            taken.add(cand)
    return tuple(out)


# The generator's own file-scope functions are in the namespace kk_ (the
# helpers of the source template, kk_copy_<kernel> of codegen.emit.layout,
# the subtree routines): no local made from a model name starts with kk_
# (KINDS), so a kernel that calls one of them never has it shadowed by a
# local, whatever the C prefix (--name dq with a joint compute_C_part0 once
# declared `double dq_compute_C_part0` in the kernel that calls the routine
# dq_compute_C_part0). Public functions <prefix>_<ABI name> are called only
# where no local of a model name is in scope (dispatchers, the scalar tail
# of a batch kernel, the copy helpers).
RESERVED = "kk_"


def routine_name(kernel: str, n: int) -> str:
    """The static routine n of kernel `kernel` (codegen/emit/routines.py)."""
    return f"{RESERVED}{kernel}_part{n}"


def local(kind: str, frag: str) -> str:
    """The C local of a model quantity: kind prefix + fragment."""
    return KINDS[kind] + frag


def symbol_locals(syms) -> dict:
    """The C local of every symbol of a derivation (codegen.derive.symbols.Symbols):
    its kind's prefix and the per-kind unique fragment of its joint or parameter name."""
    joints = unique_fragments(syms.model.joint_names, "joint")
    params = unique_fragments(syms.model.param_names, "parameter")
    table = {"p": params, "qb": BASE_Q, "fext": tuple(str(k) for k in range(len(syms.fext))),
             "lam": tuple(str(k) for k in range(len(syms.lam)))}
    return {sym: local(kind, table.get(kind, joints)[i]) for sym, (kind, i) in syms.tags.items()}


def c_string(text: str) -> str:
    """A C string literal holding the UTF-8 bytes of `text`: printable ASCII
    as is, everything else as three-digit octal escapes (no greedy hex
    escapes, no trigraphs: `?` is escaped; nor `*/` or `/*`, so the literal
    is also safe inside a comment)."""
    out = []
    for b in text.encode("utf-8"):
        ch = chr(b)
        if ch in '"\\?*/' or not 0x20 <= b < 0x7F:
            out.append(f"\\{b:03o}" if ch not in '"\\?' else "\\" + ch)
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


_COMMENT_PLAIN = re.compile(r"[A-Za-z0-9_ .,:;+\-=()\[\]<>#@!%^&|~'$`{}]*")


def comment_text(text: str) -> str:
    """A name safe inside a /* */ comment: unchanged when plain, else written
    as a C string literal (which never contains */, /*, ?? or a newline)."""
    return text if _COMMENT_PLAIN.fullmatch(text) else c_string(text)


def comment_line(text: str) -> str:
    """One line of free text (it may quote model names) made safe inside a
    /* */ comment, after any wrapping: a backslash is doubled, characters
    outside printable ASCII become \\uXXXX / \\UXXXXXXXX, and `*/`, `/*` and
    `??` (a trigraph's start; -std=c99 reads ??/ as a backslash) get a
    backslash between their characters. The result has none of them and no
    newline, so C's phases 1-3 (trigraphs, line splices, comments) end the
    comment only at the template's own terminator; undone by
    uncomment_line. Readable text passes unchanged."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    line = "".join(out)
    # a backslash between the two characters of every */, /* and ?? (overlapping: ??? -> ?\?\?)
    return re.sub(r"\*(?=/)|/(?=\*)|\?(?=\?)", lambda m: m.group() + "\\", line)


def uncomment_line(line: str) -> str:
    """The text that comment_line(text) wrote."""
    def one(m):
        esc = m.group()
        return esc[1] if len(esc) == 2 else chr(int(esc[2:], 16))
    return re.sub(r"\\(?:u[0-9a-f]{4}|U[0-9a-f]{8}|.)", one, line)


def doc_lines(text: str, width: int = 75) -> list:
    """Free text wrapped into lines of a /* */ comment, each escaped
    (comment_line) after the wrap: a wrap cannot split an escape, and no
    line ends a comment or starts one."""
    return [comment_line(line) for line in textwrap.wrap(text, width, break_on_hyphens=False)] or [""]


@dataclass(frozen=True)
class CNames:
    """The C names of one model's generated files."""
    prefix: str  # function prefix without the trailing "_", e.g. "krang"
    macro: str  # macro prefix, e.g. "KRANG"
    joints: tuple  # fragment of each joint name, in q order
    params: tuple  # fragment of each parameter name, in p order
    ees: tuple  # fragment of each end-effector name, in ee order

    @property
    def macros(self) -> dict:
        """Every macro of the header: name -> value (None: the include guard)."""
        m = {f"{self.macro}_NDOF": "ndof", f"{self.macro}_NQ": "nq", f"{self.macro}_NV": "ndof",
             f"{self.macro}_NP": "np"}
        m.update({f"{self.macro}_{e.upper()}": i for i, e in enumerate(self.ees)})
        m.update({f"{self.macro}_WORLD": 0, f"{self.macro}_LOCAL": 1, f"{self.macro}_KERNELS_H": None})
        return m


def _check_macros(names: CNames, model: Model):
    seen = {}
    labels = [f"{names.macro}_NDOF", f"{names.macro}_NQ", f"{names.macro}_NV", f"{names.macro}_NP"]
    sources = ["(number of joints)", "(length of q)", "(length of v)", "(number of parameters)"]
    for e, frag in zip(model.ee_names, names.ees):
        labels.append(f"{names.macro}_{frag.upper()}")
        sources.append(f"(end effector {e!r})")
    labels += [f"{names.macro}_WORLD", f"{names.macro}_LOCAL", f"{names.macro}_KERNELS_H"]
    sources += ["(world frame)", "(local frame)", "(include guard)"]
    for label, source in zip(labels, sources):
        if label in seen:
            raise ModelError(f"macro {label} {source} collides with {label} {seen[label]}: "
                             "rename the end effector (macros ignore case)")
        if LIBRARY_MACRO.fullmatch(label) or label in MATH_H:
            raise ModelError(f"macro {label} {source} would be in the C library's namespace "
                             "(math.h/stdint.h/errno.h macros): choose another model name (--name) "
                             "or end-effector name")
        seen[label] = source


def cnames(model: Model, name: str | None = None) -> CNames:
    """C names for `model`; `name` overrides the model name for the prefix."""
    prefix = fragment(model.name if name is None else name)
    if prefix[0].isdigit():
        prefix = "m" + prefix  # a function name cannot start with a digit
    out = CNames(prefix, prefix.upper(), unique_fragments(model.joint_names, "joint"),
                 unique_fragments(model.param_names, "parameter"),
                 unique_fragments(model.ee_names, "end-effector"))
    _check_macros(out, model)
    return out
