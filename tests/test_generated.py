"""generated/ is exactly what the generator writes, reproducibly.

* generated/ (committed) equals a fresh generation of models/krang.toml with
  models/krang_params.toml, byte for byte (`make check-generated`);
* generating the same model twice, into differently named directories and
  from different working directories, gives byte-identical files;
* every generated file starts with a banner saying DO NOT EDIT, naming the
  generator version and the SHA-256 of the model file bytes, with one
  operation-count line per kernel function, and free of timestamps and
  absolute paths.
"""
from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.builds

ROOT = Path(__file__).resolve().parents[1]

import codegen  # noqa: E402
from codegen.pipeline import generate_from_files as generate  # noqa: E402
from codegen.read.model import load_model  # noqa: E402

GENERATED = ROOT / "generated"
KRANG_MODEL = ROOT / "models" / "krang.toml"
KRANG_PARAMS = ROOT / "models" / "krang_params.toml"
MINI_MODEL = ROOT / "tests" / "models" / "mini.toml"
MINI_PARAMS = ROOT / "tests" / "models" / "mini_params.toml"


def _files(d: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(d.iterdir()) if p.is_file()}


def _first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}:\n  committed: {x[:200]}\n  generated: {y[:200]}"
    return f"length {len(la)} vs {len(lb)} lines"


def _assert_same_tree(expected: dict, got: dict, what: str):
    assert sorted(expected) == sorted(got), f"{what}: files {sorted(expected)} != {sorted(got)}"
    diffs = [f"{name}: {_first_difference(expected[name], got[name])}"
             for name in expected if expected[name] != got[name]]
    assert not diffs, f"{what}:\n" + "\n".join(diffs)


# ----------------------------------------------------------------------------
# (a) generated/ is up to date
# ----------------------------------------------------------------------------

@pytest.mark.robots
def test_generated_dir_is_what_the_generator_writes(tmp_path):
    written = generate(KRANG_MODEL, KRANG_PARAMS, tmp_path / "regen")
    assert sorted(p.name for p in written) == ["krang_kernels.c", "krang_kernels.h"]
    _assert_same_tree(_files(GENERATED), _files(tmp_path / "regen"),
                      "generated/ differs from a fresh generation (run `make generate`)")


# ----------------------------------------------------------------------------
# (b) determinism
# ----------------------------------------------------------------------------

def test_generation_is_deterministic(tmp_path):
    first = _files(Path(generate(MINI_MODEL, MINI_PARAMS, tmp_path / "one")[0]).parent)
    second = _files(Path(generate(MINI_MODEL, MINI_PARAMS, tmp_path / "a_different" / "dir")[0]).parent)
    assert sorted(first) == ["mini_kernels.c", "mini_kernels.h"]
    _assert_same_tree(first, second, "two generations of mini differ")


def test_generation_independent_of_cwd_and_paths(tmp_path):
    """The command line, run from another directory with relative paths to a
    copy of the model, writes the same bytes as generate() in-process."""
    ref = _files(Path(generate(MINI_MODEL, MINI_PARAMS, tmp_path / "ref")[0]).parent)
    work = tmp_path / "elsewhere"
    (work / "m").mkdir(parents=True)
    (work / "m" / "mini.toml").write_bytes(MINI_MODEL.read_bytes())
    (work / "m" / "params.toml").write_bytes(MINI_PARAMS.read_bytes())
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "12345"}
    r = subprocess.run([sys.executable, "-m", "codegen", "m/mini.toml", "m/params.toml", "--out", "out"],
                       cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    _assert_same_tree(ref, _files(work / "out"), "CLI output from another cwd differs")


# ----------------------------------------------------------------------------
# (c) the banner
# ----------------------------------------------------------------------------

_TIMESTAMP = [
    re.compile(r"\b(19|20)\d\d[-/.](0?[1-9]|1[0-2])[-/.](0?[1-9]|[12]\d|3[01])\b"),  # 2024-06-11
    re.compile(r"\b(0?[1-9]|[12]\d|3[01])[-/.](0?[1-9]|1[0-2])[-/.](19|20)\d\d\b"),  # 11.06.2024
    re.compile(r"\b([01]?\d|2[0-3]):[0-5]\d(:[0-5]\d)?\b"),  # 14:03[:22]
    re.compile(r"\b(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? +\d{1,2}\b"),
    re.compile(r"\b\d{1,2} +(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* +\d{4}\b"),
    re.compile(r"\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? +(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"),
    re.compile(r"\b(UTC|GMT|CES?T)\b"),
    re.compile(r"\b1[5-9]\d{8}\b"),  # a Unix time stamp
]
_ABSOLUTE = ("/work", "/tmp", "/home", "/root", "/usr", "/var", "C:\\")


def _kernel_functions(model, header: Path) -> list:
    """The derived kernels, with the base-parameter ones of the generator's NBASE (the header's)."""
    from codegen.emit.abi import describe
    from reference.abi_ctypes import header_nbase

    nbase = header_nbase(header, model.name.upper())
    return [f"{model.name}_{f.name}" for f in describe(model, nbase=nbase).derived]


def _check_banner(path: Path, model_path: Path, out_root: Path | None = None):
    text = path.read_text()
    model = load_model(model_path)
    assert text.startswith("/*"), f"{path.name}: does not start with the banner comment"
    banner = text[:text.index("*/") + 2]
    assert "DO NOT EDIT" in banner, path.name
    assert re.search(rf"(?<![\w.]){re.escape(codegen.__version__)}(?!\w|\.\d)", banner), \
        f"{path.name}: generator version {codegen.__version__} not in the banner"
    digest = hashlib.sha256(model_path.read_bytes()).hexdigest()
    assert digest in banner, f"{path.name}: SHA-256 of {model_path.name} ({digest}) not in the banner"
    # one "operations" line per kernel function, and only for those
    assert re.search(r"operations", banner), f"{path.name}: no operation counts"
    op_lines = re.findall(rf"^ \*\s+({re.escape(model.name)}_\w+)\s+(\d+)\s*$", banner, flags=re.M)
    counts = dict(op_lines)
    assert len(counts) == len(op_lines), f"{path.name}: repeated operation lines {op_lines}"
    assert sorted(counts) == sorted(_kernel_functions(model, path.with_suffix(".h"))), f"{path.name}: operation lines {sorted(counts)}"
    if path.suffix == ".c":
        # the per-function comment agrees with the banner
        for fn, n in counts.items():
            m = re.search(rf"\* (\d+) operations\. \*/\nvoid {fn}\(", text)
            assert m and m.group(1) == n, f"{path.name}: {fn}: banner says {n}, function comment {m and m.group(1)}"
    for rx in _TIMESTAMP:
        m = rx.search(text)
        assert not m, f"{path.name}: timestamp-like text {m.group(0)!r}"
    for prefix in _ABSOLUTE:
        assert prefix not in text, f"{path.name}: absolute path {prefix!r} in the generated text"
    if out_root is not None:
        assert str(out_root) not in text and out_root.name not in text, f"{path.name}: names its output directory"


def test_banner_mini(tmp_path):
    out = tmp_path / "banner_out_dir"
    files = generate(MINI_MODEL, MINI_PARAMS, out)
    assert len(files) == 2
    for f in files:
        _check_banner(Path(f), MINI_MODEL, out)


@pytest.mark.parametrize("name", ["krang_kernels.h", "krang_kernels.c"])
def test_banner_committed(name):
    _check_banner(GENERATED / name, KRANG_MODEL)


def test_banner_hashes_model_bytes_not_decoded_text(tmp_path):
    """The banner's model hash is the SHA-256 of the file's bytes even when
    they are not what Path.read_text() returns (CRLF line ends)."""
    m = tmp_path / "mini_crlf.toml"
    m.write_bytes(MINI_MODEL.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    files = generate(m, MINI_PARAMS, tmp_path / "out")
    digest = hashlib.sha256(m.read_bytes()).hexdigest()
    for f in files:
        assert digest in Path(f).read_text(), f"{Path(f).name}: banner does not hash the model file's bytes"


def test_timestamp_patterns_work():
    for sample in ("2024-06-11", "11.06.2024", "14:03:22", "Jun 11 2024", "Tue, Jun 11", "1718100000"):
        assert any(rx.search(sample) for rx in _TIMESTAMP), sample
    for sample in ("p[12] = 0.0845;", "case 12: return", "1e-05", "t12 = x3*x4;", "0.1088"):
        assert not any(rx.search(sample) for rx in _TIMESTAMP), sample


# ----------------------------------------------------------------------------
# (d) every test model, and a hostile-names model, compiles cleanly
# ----------------------------------------------------------------------------

import shutil  # noqa: E402

from codegen.pipeline import CodegenConfig, generate as generate_records  # noqa: E402

_CC = shutil.which("gcc") or shutil.which("cc")
_CXX = shutil.which("g++") or shutil.which("c++")
_MODELS = sorted((ROOT / "tests" / "models").glob("*.toml"))
_MODELS = [m for m in _MODELS if not m.stem.endswith("_params")]


def _hostile():
    from tests.test_cnames import hostile_model
    return hostile_model()


@pytest.mark.parametrize("which", [m.stem for m in _MODELS] + [pytest.param("hostile", marks=pytest.mark.robots)])
def test_generated_c_compiles_strict_c99_and_header_as_cpp(tmp_path, which):
    if _CC is None:
        pytest.skip("no C compiler")
    model = _hostile() if which == "hostile" else load_model(ROOT / "tests" / "models" / f"{which}.toml")
    values = [0.5] * len(model.param_names)  # any finite values: this is about the C, not the numbers
    files = generate_records(model, values, CodegenConfig(out_dir=tmp_path))
    c = next(f for f in files if f.suffix == ".c")
    h = next(f for f in files if f.suffix == ".h")
    r = subprocess.run([_CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", str(c),
                        "-o", str(tmp_path / "k.o")], capture_output=True, text=True)
    assert r.returncode == 0, f"{which}: {r.stderr[-3000:]}"
    if _CXX is not None:
        r = subprocess.run([_CXX, "-x", "c++", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-pedantic", str(h)],
                           capture_output=True, text=True)
        assert r.returncode == 0, f"{which} header as C++: {r.stderr[-3000:]}"
