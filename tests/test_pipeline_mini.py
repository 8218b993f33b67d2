"""The whole pipeline on the small model tests/models/mini.toml, in seconds.

model file -> codegen.pipeline -> C99 sources -> `cc -Werror -pedantic` ->
shared library -> ctypes. The compiled kernels are checked against

* Pinocchio (reference/pin_reference.py, built from the same frame table) for A,
  C, Q and both end-effector Jacobians in the world and local frames, and
  against the numpy reference (reference/reference_fk.py) for friction, which
  Pinocchio does not model;
* the Krang report's energy method (Zafar 2015), codegen.derive.outputs.closed_form(model, "lagrange"),
  lambdified with numpy (independent of the recursive derivation that the C
  code comes from);

at N_STATES random states for the default parameters and N_RANDOM_SETS
random physically valid parameter sets, to max|ours - ref| <= 1e-10 *
(1 + max|ref|) per output. Then the C ABI contract of the header: default
parameters and names, the NaN fill of an unknown Jacobian, complete
overwriting of outputs, aliasing of outputs with inputs, a header that
compiles as strict C99 and as C++, and no allocation or global state in the
generated C.
"""
from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.builds

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

from codegen.emit.abi import describe  # noqa: E402
from codegen.derive.outputs import closed_form  # noqa: E402
from codegen.pipeline import generate_from_files as generate  # noqa: E402
from codegen.read.model import load_model, load_param_values  # noqa: E402
from reference.abi_ctypes import header_nbase  # noqa: E402
from reference.reference_fk import NumericModel, random_physical_params, random_states, rel_err, worst_entry  # noqa: E402

MODEL_PATH = HERE / "models" / "mini.toml"
PARAMS_PATH = HERE / "models" / "mini_params.toml"
MODEL = load_model(MODEL_PATH)
N = MODEL.ndof
NP = len(MODEL.param_names)
EES = list(MODEL.ee_names)
FRAMES = ("world", "local")
PREFIX = f"{MODEL.name}_"
N_STATES = 60
N_RANDOM_SETS = 4
TOL = 1e-10
CFLAGS = ["-O1", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic"]


_D = ctypes.POINTER(ctypes.c_double)


def _ptr(a):
    assert a.dtype == np.float64 and a.flags["C_CONTIGUOUS"]
    return a.ctypes.data_as(_D)


def _vec(x, length):
    a = np.ascontiguousarray(x, dtype=np.float64)
    assert a.shape == (length,), a.shape
    return a


class Kernels:
    """ctypes wrapper of one compiled <name>_kernels.c. Every call allocates
    its outputs filled with `fill` (NaN by default) so that an unwritten
    entry shows up."""

    def __init__(self, lib, header_text):
        self.lib = lib
        self.defines = {k: int(v) for k, v in re.findall(
            rf"#define {MODEL.name.upper()}_(\w+) (-?\d+)", header_text)}
        sig = {
            "compute_A": [_D, _D, _D],
            "compute_C": [_D, _D, _D, _D],
            "compute_Q": [_D, _D, _D],
            "friction": [_D, _D, _D],
            "compute_all": [_D, _D, _D, _D, _D, _D] + [_D] * len(EES),
            "jacobian": [_D, _D, ctypes.c_int, ctypes.c_int, _D],
            "default_params": [_D],
        }
        for ee in EES:
            for fr in FRAMES:
                sig[f"jacobian_{ee}_{fr}"] = [_D, _D, _D]
        for name, args in sig.items():
            f = getattr(lib, PREFIX + name)
            f.argtypes, f.restype = args, None
        for name in ("param_name", "joint_name"):
            f = getattr(lib, PREFIX + name)
            f.argtypes, f.restype = [ctypes.c_int], ctypes.c_char_p

    def fn(self, name):
        return getattr(self.lib, PREFIX + name)

    @staticmethod
    def _out(size, fill):
        return np.full(size, fill, dtype=np.float64)

    def A(self, q, p, fill=np.nan):
        out = self._out(N * N, fill)
        self.fn("compute_A")(_ptr(_vec(q, N)), _ptr(_vec(p, NP)), _ptr(out))
        return out.reshape(N, N)

    def C(self, q, dq, p, fill=np.nan):
        out = self._out(N * N, fill)
        self.fn("compute_C")(_ptr(_vec(q, N)), _ptr(_vec(dq, N)), _ptr(_vec(p, NP)), _ptr(out))
        return out.reshape(N, N)

    def Q(self, q, p, fill=np.nan):
        out = self._out(N, fill)
        self.fn("compute_Q")(_ptr(_vec(q, N)), _ptr(_vec(p, NP)), _ptr(out))
        return out

    def J(self, q, p, ee, frame, fill=np.nan):
        out = self._out(6 * N, fill)
        self.fn(f"jacobian_{ee}_{frame}")(_ptr(_vec(q, N)), _ptr(_vec(p, NP)), _ptr(out))
        return out.reshape(6, N)

    def jacobian(self, q, p, ee: int, frame: int, fill=np.nan):
        out = self._out(6 * N, fill)
        self.fn("jacobian")(_ptr(_vec(q, N)), _ptr(_vec(p, NP)), ee, frame, _ptr(out))
        return out.reshape(6, N)

    def friction(self, dq, p, fill=np.nan):
        out = self._out(N, fill)
        self.fn("friction")(_ptr(_vec(dq, N)), _ptr(_vec(p, NP)), _ptr(out))
        return out

    def all(self, q, dq, p, fill=np.nan):
        outs = [self._out(N * N, fill), self._out(N * N, fill), self._out(N, fill)]
        outs += [self._out(6 * N, fill) for _ in EES]
        self.fn("compute_all")(_ptr(_vec(q, N)), _ptr(_vec(dq, N)), _ptr(_vec(p, NP)), *[_ptr(o) for o in outs])
        res = {"A": outs[0].reshape(N, N), "C": outs[1].reshape(N, N), "Q": outs[2]}
        for ee, o in zip(EES, outs[3:]):
            res[f"J_{ee}_world"] = o.reshape(6, N)
        return res

    def default_params(self):
        out = self._out(NP, np.nan)
        self.fn("default_params")(_ptr(out))
        return out

    def param_name(self, i):
        r = self.fn("param_name")(i)
        return None if r is None else r.decode()

    def joint_name(self, i):
        r = self.fn("joint_name")(i)
        return None if r is None else r.decode()

    def evaluate(self, q, dq, p):
        """Every output at one state, keyed like pin_reference / closed_form."""
        out = {"A": self.A(q, p), "C": self.C(q, dq, p), "Q": self.Q(q, p), "friction": self.friction(dq, p)}
        for ee in EES:
            for fr in FRAMES:
                out[f"J_{ee}_{fr}"] = self.J(q, p, ee, fr)
        return out


# ----------------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def build(tmp_path_factory):
    """Generate mini's C sources and compile them into a shared library."""
    if shutil.which("cc") is None:
        pytest.skip("no C compiler `cc`")
    out = tmp_path_factory.mktemp("mini_gen")
    files = generate(MODEL_PATH, PARAMS_PATH, out)
    names = sorted(f.name for f in files)
    assert names == [f"{MODEL.name}_kernels.c", f"{MODEL.name}_kernels.h"], names
    so = out / f"lib{MODEL.name}_kernels.so"
    r = subprocess.run(["cc", *CFLAGS, "-shared", "-fPIC", "-o", str(so), str(out / f"{MODEL.name}_kernels.c"), "-lm"],
                       capture_output=True, text=True, cwd=out)
    assert r.returncode == 0 and not r.stderr.strip(), f"cc failed or warned:\n{r.stdout}\n{r.stderr}"
    return {"dir": out, "so": so, "c": out / f"{MODEL.name}_kernels.c", "h": out / f"{MODEL.name}_kernels.h"}


@pytest.fixture(scope="module")
def kern(build):
    return Kernels(ctypes.CDLL(str(build["so"])), build["h"].read_text())


@pytest.fixture(scope="module")
def param_sets():
    rng = np.random.default_rng(20240611)
    sets = [("default", np.array(load_param_values(PARAMS_PATH, MODEL)))]
    sets += [(f"random{i}", random_physical_params(MODEL, rng)) for i in range(N_RANDOM_SETS)]
    return sets


def _states(seed):
    rng = np.random.default_rng(seed)
    qs, dqs = random_states(rng, N_STATES, N)
    # plus the zero configuration and a state with zero velocities (sign(0))
    qs = np.vstack([qs, np.zeros(N), qs[0]])
    dqs = np.vstack([dqs, np.zeros(N), np.zeros(N)])
    return qs, dqs


def _check(failures, label, i, key, got, ref):
    e = rel_err(got, ref)
    if not e <= TOL:  # also catches NaN
        idx, v, r = worst_entry(got, ref)
        failures.append(f"[{label}] state {i}: {key} rel err {e:.3e} (worst entry {idx}: ours {v!r}, ref {r!r})")
    return e


def _report(failures, errs, what):
    worst = {k: f"{v:.1e}" for k, v in sorted(errs.items())}
    print(f"\nmax rel err vs {what}: {worst}")
    assert not failures, f"{len(failures)} comparison(s) above {TOL:g} vs {what}:\n" + "\n".join(failures[:20])


# ----------------------------------------------------------------------------
# (a) Pinocchio
# ----------------------------------------------------------------------------

def test_against_pinocchio(kern, param_sets):
    pytest.importorskip("pinocchio")
    from reference.pin_reference import build_pin_model, pin_reference

    qs, dqs = _states(1)
    failures, errs = [], {}
    n_checked = 0
    for label, p in param_sets:
        pm, _ = build_pin_model(MODEL, p)
        data = pm.createData()
        num = NumericModel(MODEL, p)
        for i, (q, dq) in enumerate(zip(qs, dqs)):
            ref = pin_reference(pm, data, q, dq)
            ref["friction"] = num.friction(dq)  # Pinocchio has no Fv/Fc friction model
            got = kern.evaluate(q, dq, p)
            for key, value in got.items():
                errs[key] = max(errs.get(key, 0.0), _check(failures, label, i, key, value, ref[key]))
            # the dispatcher and compute_all must give the same numbers
            for e_i, ee in enumerate(EES):
                for fr in FRAMES:
                    code_ee, code_fr = kern.defines[ee.upper()], kern.defines[fr.upper()]
                    assert e_i == code_ee
                    _check(failures, label, i, f"jacobian({ee},{fr})", kern.jacobian(q, p, code_ee, code_fr),
                           ref[f"J_{ee}_{fr}"])
            for key, value in kern.all(q, dq, p).items():
                errs[f"all.{key}"] = max(errs.get(f"all.{key}", 0.0),
                                         _check(failures, label, i, f"compute_all {key}", value, ref[key]))
            n_checked += 1
    assert n_checked >= 50 * 4
    _report(failures, errs, "Pinocchio")


# ----------------------------------------------------------------------------
# (b) the Krang report's energy method, independently of the recursive derivation
# ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lagrange():
    import sympy as sp

    cf = closed_form(MODEL, "lagrange")
    args = list(cf["q"]) + list(cf["dq"]) + [cf["params"][n] for n in MODEL.param_names]
    keys = ["A", "C", "Q", "friction"] + [f"J_{ee}_{fr}" for ee in EES for fr in FRAMES]
    funcs = {k: sp.lambdify(args, sp.Matrix(cf[k]), modules="numpy") for k in keys}

    def evaluate(q, dq, p):
        out = {}
        for k, f in funcs.items():
            v = np.array(f(*q, *dq, *p), dtype=float)
            out[k] = v.reshape(N) if k in ("Q", "friction") else v
        return out
    return evaluate


def test_against_lagrange_closed_form(kern, param_sets, lagrange):
    qs, dqs = _states(2)
    failures, errs = [], {}
    for label, p in param_sets:
        for i, (q, dq) in enumerate(zip(qs, dqs)):
            ref = lagrange(q, dq, p)
            got = kern.evaluate(q, dq, p)
            got.update({f"all.{k}": v for k, v in kern.all(q, dq, p).items()})
            for key, value in got.items():
                rkey = key.removeprefix("all.")
                errs[key] = max(errs.get(key, 0.0), _check(failures, label, i, key, value, ref[rkey]))
    assert set(errs) >= {"A", "C", "Q", "friction", "all.A", "all.C", "all.Q"} | {
        f"J_{ee}_{fr}" for ee in EES for fr in FRAMES}
    _report(failures, errs, "lagrange closed form")


# ----------------------------------------------------------------------------
# (c) defaults and names
# ----------------------------------------------------------------------------

def test_defines(kern):
    assert kern.defines["NDOF"] == N
    assert kern.defines["NP"] == NP
    assert [kern.defines[ee.upper()] for ee in EES] == list(range(len(EES)))
    assert (kern.defines["WORLD"], kern.defines["LOCAL"]) == (0, 1)


def test_default_params_exact(kern):
    got = kern.default_params()
    expected = load_param_values(PARAMS_PATH, MODEL)
    assert got.tolist() == expected  # exact: every double must round-trip


def test_names(kern):
    assert [kern.param_name(i) for i in range(NP)] == list(MODEL.param_names)
    assert [kern.joint_name(i) for i in range(N)] == list(MODEL.joint_names)
    for i in (NP, NP + 1, -1, -1000, 2**31 - 1, -(2**31)):
        assert kern.param_name(i) is None, i
    for i in (N, N + 1, -1, -1000, 2**31 - 1, -(2**31)):
        assert kern.joint_name(i) is None, i


# ----------------------------------------------------------------------------
# (d) unknown end effector or frame
# ----------------------------------------------------------------------------

def test_jacobian_unknown_ee_or_frame_fills_nan(kern, param_sets):
    p = param_sets[0][1]
    q = np.linspace(-1.0, 1.2, N)
    n_ee = len(EES)
    bad = [(ee, 0) for ee in (-1, n_ee, n_ee + 7, 2**31 - 1, -(2**31))]
    bad += [(0, fr) for fr in (-1, 2, 99, 2**31 - 1)]
    bad += [(n_ee, 2)]
    for ee, fr in bad:
        J = kern.jacobian(q, p, ee, fr, fill=0.0)
        assert J.shape == (6, N) and np.isnan(J).all(), (ee, fr, J)
    for e_i, ee in enumerate(EES):
        for f_i, fr in enumerate(FRAMES):
            assert np.array_equal(kern.jacobian(q, p, e_i, f_i), kern.J(q, p, ee, fr)), (ee, fr)


# ----------------------------------------------------------------------------
# (e) outputs are fully overwritten, and never read
# ----------------------------------------------------------------------------

def test_outputs_fully_overwritten(kern, param_sets):
    qs, dqs = _states(3)
    for _, p in param_sets:
        for q, dq in list(zip(qs, dqs))[:10] + [(qs[-2], dqs[-2])]:
            nan = kern.evaluate(q, dq, p)
            nan.update({f"all.{k}": v for k, v in kern.all(q, dq, p).items()})
            for key, value in nan.items():
                assert np.isfinite(value).all(), f"{key}: entries left unwritten (NaN):\n{value}"
            # a different prefill gives the very same bits: outputs are write-only
            for fill in (np.inf, -1e300, 0.0):
                got = {"A": kern.A(q, p, fill), "C": kern.C(q, dq, p, fill), "Q": kern.Q(q, p, fill),
                       "friction": kern.friction(dq, p, fill)}
                for ee in EES:
                    for fr in FRAMES:
                        got[f"J_{ee}_{fr}"] = kern.J(q, p, ee, fr, fill)
                got.update({f"all.{k}": v for k, v in kern.all(q, dq, p, fill).items()})
                for key, value in got.items():
                    assert np.array_equal(value, nan[key]), f"{key} depends on the prefill {fill}"


# ----------------------------------------------------------------------------
# (f) reentrancy / aliasing
# ----------------------------------------------------------------------------

def test_output_aliasing_input(kern, param_sets):
    qs, dqs = _states(4)
    for _, p in param_sets:
        p = _vec(p, NP)
        for q, dq in list(zip(qs, dqs))[:10]:
            q, dq = _vec(q, N), _vec(dq, N)
            # Q written over q
            buf = q.copy()
            kern.fn("compute_Q")(_ptr(buf), _ptr(p), _ptr(buf))
            assert np.array_equal(buf, kern.Q(q, p)), "compute_Q with Q aliasing q"
            # tau_f written over dq
            buf = dq.copy()
            kern.fn("friction")(_ptr(buf), _ptr(p), _ptr(buf))
            assert np.array_equal(buf, kern.friction(dq, p)), "friction with tau_f aliasing dq"
            # compute_all with Q over q, then with Q over dq
            ref = kern.all(q, dq, p)
            for which in ("q", "dq"):
                qb, dqb = q.copy(), dq.copy()
                Qbuf = qb if which == "q" else dqb
                A, C = np.full(N * N, np.nan), np.full(N * N, np.nan)
                Js = [np.full(6 * N, np.nan) for _ in EES]
                kern.fn("compute_all")(_ptr(qb), _ptr(dqb), _ptr(p), _ptr(A), _ptr(C), _ptr(Qbuf),
                                       *[_ptr(j) for j in Js])
                assert np.array_equal(Qbuf, ref["Q"]), f"compute_all with Q aliasing {which}"
                assert np.array_equal(A.reshape(N, N), ref["A"]), f"compute_all A with Q aliasing {which}"
                assert np.array_equal(C.reshape(N, N), ref["C"]), f"compute_all C with Q aliasing {which}"
                for ee, J in zip(EES, Js):
                    assert np.array_equal(J.reshape(6, N), ref[f"J_{ee}_world"]), (ee, which)
            # an output over the leading part of the parameter vector
            pb = p.copy()
            kern.fn("compute_A")(_ptr(q), _ptr(pb), _ptr(pb))
            assert np.array_equal(pb[:N * N].reshape(N, N), kern.A(q, p)), "compute_A with A aliasing p"


def test_reentrant_from_threads(kern, param_sets):
    """Concurrent calls from several threads give the serial results (ctypes
    releases the GIL during a foreign call)."""
    from concurrent.futures import ThreadPoolExecutor

    qs, dqs = _states(5)
    p = param_sets[1][1]
    serial = [kern.all(q, dq, p) for q, dq in zip(qs, dqs)]

    def job(k):
        i = k % len(qs)
        return i, kern.all(qs[i], dqs[i], p)

    with ThreadPoolExecutor(max_workers=8) as ex:
        for i, got in ex.map(job, range(8 * len(qs))):
            for key, value in got.items():
                assert np.array_equal(value, serial[i][key]), (i, key)


# ----------------------------------------------------------------------------
# (g) the header compiles as strict C99 and as C++
# ----------------------------------------------------------------------------

def _use_header(h):
    P = MODEL.name.upper()
    return (f'#include "{h}"\n#include "{h}"\n'  # twice: the include guard
            f"int use(void);\nint use(void)\n{{\n"
            f"    double q[{P}_NDOF] = {{0}}, dq[{P}_NDOF] = {{0}}, p[{P}_NP];\n"
            f"    double A[{P}_NDOF * {P}_NDOF], J[6 * {P}_NDOF], tau[{P}_NDOF];\n"
            f"    {PREFIX}default_params(p);\n"
            f"    {PREFIX}compute_A(q, p, A);\n"
            f"    {PREFIX}friction(dq, p, tau);\n"
            f"    {PREFIX}jacobian(q, p, {P}_{EES[0].upper()}, {P}_LOCAL, J);\n"
            f"    return {PREFIX}param_name(0) != 0 && {PREFIX}joint_name(0) != 0 && A[0] > 0.0 && J[0] == J[0] && tau[0] == 0.0;\n"
            f"}}\n")


@pytest.mark.parametrize("lang", ["c99", "c++"])
def test_header_compiles(build, tmp_path, lang):
    h = build["h"].name
    if lang == "c99":
        if shutil.which("cc") is None:
            pytest.skip("no cc")
        src = tmp_path / "use.c"
        cmd = ["cc", "-std=c99", "-x", "c"]
    else:
        if shutil.which("c++") is None:
            pytest.skip("no c++")
        src = tmp_path / "use.cpp"
        cmd = ["c++", "-x", "c++"]
    src.write_text(_use_header(h))
    cmd += ["-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(build["dir"]), str(src)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), f"{' '.join(cmd)}\n{r.stderr}"


def test_header_links_from_cpp(build, tmp_path):
    """extern "C": a C++ translation unit calls the C kernels and links."""
    if shutil.which("c++") is None or shutil.which("cc") is None:
        pytest.skip("no c++/cc")
    obj = tmp_path / "k.o"
    r = subprocess.run(["cc", *CFLAGS, "-c", "-o", str(obj), str(build["c"])], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    src = tmp_path / "main.cpp"
    src.write_text(_use_header(build["h"].name) + "int main() { return use() ? 0 : 1; }\n")
    exe = tmp_path / "main"
    r = subprocess.run(["c++", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I", str(build["dir"]), "-o", str(exe),
                        str(src), str(obj), "-lm"], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr
    assert subprocess.run([str(exe)]).returncode == 0


# ----------------------------------------------------------------------------
# (h) no allocation, no global state
# ----------------------------------------------------------------------------

def _strip_c(text):
    """Source text without comments and string/char literals."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)
    return re.sub(r"'(\\.|[^'\\])*'", "''", text)


def _file_scope(text):
    """Top-level items of C text (comments, strings and preprocessor lines
    removed, `extern "C" {` wrappers unwrapped): a list of (kind, text) with
    kind "function" (a definition: ends with a body) or "declaration" (ends
    with ';')."""
    text = _strip_c(text).replace("\\\n", "")  # backslash-newline: one logical line
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    text = re.sub(r'extern\s*""\s*\{', " ", text)  # extern "C" { (string already emptied)
    items, depth, start, i = [], 0, 0, 0
    extra_close = 0
    while i < len(text):
        ch = text[i]
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:  # the closing brace of an unwrapped extern "C"
                extra_close += 1
                start = i + 1
            else:
                depth -= 1
                if depth == 0 and not text[i + 1:].lstrip().startswith(";"):  # not `= {...};`
                    items.append(("function", text[start:i + 1].strip()))
                    start = i + 1
        elif ch == ";" and depth == 0:
            items.append(("declaration", text[start:i + 1].strip()))
            start = i + 1
        i += 1
    assert depth == 0, "unbalanced braces"
    assert not text[start:].strip(), f"trailing text at file scope: {text[start:]!r}"
    return items


_FUNC_HEAD = re.compile(r"^[A-Za-z_][\w\s\*]*?\b[A-Za-z_]\w*\s*\([^;{}]*\)\s*$", re.S)
_CONST_TABLE = re.compile(r"^static\s+const\s+(unsigned\s+|signed\s+)?\w+\s+(const\s+)?\w+\s*(\[[^\]]*\]\s*)*=[^;]*;$", re.S)
_TYPEDEF = re.compile(r"^(__extension__\s+)?typedef\s[^;{}=]*;$", re.S)  # a type, no storage


def _bare(item: str) -> str:
    """A file-scope item without its GNU __attribute__((...)) specifiers and the template's
    attribute macros (KKCLONES, KKHELPER, ...: empty or attributes)."""
    item = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", " ", item)
    return re.sub(r"\bKK[A-Z]+\b", " ", item).lstrip()


def test_generated_c_has_no_allocation_or_global_state(build):
    for path in (build["c"], build["h"]):
        text = path.read_text()
        code = _strip_c(text)
        for word in ("malloc", "calloc", "realloc", "free", "alloca", "new", "errno", "thread_local",
                     "_Thread_local", "__thread", "extern"):
            if word == "extern" and path.suffix == ".h":
                continue  # extern "C" only, checked below
            assert not re.search(rf"\b{word}\b", code), f"{path.name}: uses {word!r}"
        items = _file_scope(text)
        assert items, path.name
        for kind, item in items:
            if path.suffix == ".c":
                if kind == "declaration":
                    # only constant tables: `static const double name[...] = ...;`
                    assert _CONST_TABLE.match(item) or _TYPEDEF.match(item), \
                        f"{path.name}: file-scope variable {item!r}"
                    continue
                # function definitions (static helpers allowed), without static locals
                head, body = item[:item.index("{")], item[item.index("{"):]
                assert _FUNC_HEAD.match(_bare(head)), f"{path.name}: not a function definition: {head!r}"
                assert not re.search(r"\bstatic\b", body), f"{path.name}: static local in {head.strip()!r}"
            else:
                # only prototypes in the header
                assert kind == "declaration", f"{path.name}: definition in the header: {item[:80]!r}"
                assert _FUNC_HEAD.match(item[:-1]), f"{path.name}: file-scope object {item!r}"
        if path.suffix == ".c":
            nbase = header_nbase(build["h"], MODEL.name.upper())  # the generator's base-parameter count
            expected = [f.name for f in describe(MODEL, nbase=nbase).functions]
            public = sorted(re.match(r".*?\b(\w+)\s*\(", _bare(i), re.S).group(1) for k, i in items
                            if k == "function" and not _bare(i).startswith("static"))
            assert public == sorted(PREFIX + e for e in expected), public


def test_file_scope_scanner_catches_globals():
    """The scanner of test (h) does see the things it must forbid."""
    src = ("#include <math.h>\nstatic double cache[3];\nint calls = 0;\n"
           "static const double T[2] = {1.0, 2.0};\nstatic const char *names[] = {\"a\"};\n"
           "void f(double *x)\n{\n    static int n;\n    x[0] = 1.0;\n}\n"
           "static void g(void)\n{\n}\n")
    items = _file_scope(src)
    assert [k for k, _ in items] == ["declaration"] * 4 + ["function"] * 2
    assert [bool(_CONST_TABLE.match(i)) for _, i in items[:4]] == [False, False, True, False]
    assert re.search(r"\bstatic\b", items[4][1][items[4][1].index("{"):])
    assert _FUNC_HEAD.match(items[5][1][:items[5][1].index("{")])
    hdr = '#ifdef __cplusplus\nextern "C" {\n#endif\nvoid f(double *x);\nextern double g;\n#ifdef __cplusplus\n}\n#endif\n'
    items = _file_scope(hdr)
    assert [k for k, _ in items] == ["declaration", "declaration"]
    assert _FUNC_HEAD.match(items[0][1][:-1]) and not _FUNC_HEAD.match(items[1][1][:-1])
