"""Packaging: the sdist and the wheel hold what
they should, the generator runs installed from any directory, the version is
defined once and nothing edits sys.path."""
from __future__ import annotations

import ast
import importlib.metadata
import os
import re
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import pytest

import codegen
import krang_kernels

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
SYS_PATH_EDIT = re.compile(r"sys\.path\s*(\.\s*(insert|append|extend|remove|pop|clear)\b|\[[^\]]*\]\s*=|\+=|=(?!=))")


def _tracked_python_files():
    out = subprocess.run(["git", "ls-files", "*.py", "*.pyx", "*.pxi", "*.j2", "Makefile", ".ci/*"],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out.stdout.split()]


def test_no_sys_path_edits():
    offenders = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}"
                 for p in _tracked_python_files() if p.is_file()
                 for i, line in enumerate(p.read_text().splitlines(), 1) if SYS_PATH_EDIT.search(line)]
    assert not offenders, "sys.path edits:\n" + "\n".join(offenders)


def test_sys_path_pattern_catches_edits():
    sp = "sys" + ".path"  # spelled in pieces: this file must not match itself
    for bad in (f"{sp}.insert(0, ROOT)", f"{sp}.append(x)", f"{sp}[:0] = [x]", f"{sp} = [x]", f"{sp} += [x]"):
        assert SYS_PATH_EDIT.search(bad), bad
    for fine in (f"dirs = list({sp})", f"if {sp} == x:", f"importable with out_dir on {sp}"):
        assert not SYS_PATH_EDIT.search(fine), fine


def test_version_defined_once():
    assert "version" not in PYPROJECT["project"] and "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "codegen.__version__"}
    assert krang_kernels.__version__ == codegen.__version__ == importlib.metadata.version("krang-kernels")
    pattern = re.compile(r"""(__version__|^version)\s*=\s*["']\d""", re.M)
    defined = [p.relative_to(ROOT).as_posix() for p in _tracked_python_files() + [ROOT / "pyproject.toml"]
               if p.is_file() and pattern.search(p.read_text())]
    assert defined == ["codegen/__init__.py"]
    changelog = (ROOT / "CHANGELOG.md").read_text()
    release = re.match(r"\d+\.\d+\.\d+", codegen.__version__).group()
    assert f"## {release}" in changelog, f"CHANGELOG.md has no section for {release}"


def test_script_entry_point_is_what_python_m_codegen_runs():
    """krang-codegen and `python -m codegen` call the same main()."""
    target = PYPROJECT["project"]["scripts"]["krang-codegen"]
    module, func = target.split(":")
    tree = ast.parse((ROOT / "codegen" / "__main__.py").read_text())
    imports = {(f"codegen{'.' if n.module else ''}{n.module or ''}" if n.level else n.module, a.name)
               for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    # the script may be __main__'s own main() (it checks the [generate] extra, then runs codegen.cli)
    assert (module, func) in imports or (module == "codegen.__main__" and func in defined), \
        f"pyproject's krang-codegen = {target!r}, codegen/__main__.py imports {imports}"


def test_help_documents_every_option():
    pytest.importorskip("codegen.cli", reason="the full command line lives in codegen/cli.py")
    out = subprocess.run([sys.executable, "-m", "codegen", "--help"], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    entries = re.findall(r"^  (\S.*?)(?:\s{2,}(\S.*))?$", out.stdout, re.M)
    assert entries
    undocumented = [name for name, text in entries if not text and not name.startswith("-h")]
    # argparse puts the text on the next line when the option is long
    lines = out.stdout.splitlines()
    undocumented = [n for n in undocumented
                    if not any(lines[i].strip() == n.strip() and i + 1 < len(lines) and lines[i + 1].startswith(" " * 8)
                               for i in range(len(lines)))]
    assert not undocumented, f"options without help text: {undocumented}"


def test_get_include_and_sources():
    inc = Path(krang_kernels.get_include())
    assert (inc / "krang_kernels.h").read_bytes() == (ROOT / "generated" / "krang_kernels.h").read_bytes()
    [src] = krang_kernels.get_sources()
    assert Path(src).read_bytes() == (ROOT / "generated" / "krang_kernels.c").read_bytes()


# --- the sdist and the wheel, built once (the wheel compiles the extension) ---

@pytest.fixture(scope="module")
def dists(tmp_path_factory):
    """sdist from the checkout; the wheel built from the unpacked sdist (so the
    sdist is complete), both with this environment's build tools."""
    tmp = tmp_path_factory.mktemp("dist")
    code = ("import sys; from setuptools import build_meta as b; "
            "print(b.build_sdist(sys.argv[1]))")
    r = subprocess.run([sys.executable, "-c", code, str(tmp)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    sdist = tmp / r.stdout.split()[-1]
    with tarfile.open(sdist) as tf:
        tf.extractall(tmp / "src", filter="data")
    [src] = (tmp / "src").iterdir()
    env = dict(os.environ, KRANG_PORTABLE="1")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                        "-w", str(tmp / "wheel"), str(src)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    [wheel] = (tmp / "wheel").glob("*.whl")
    return sdist, wheel, tmp


def test_sdist_contents(dists):
    sdist, _, _ = dists
    with tarfile.open(sdist) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    for need in ("LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml", "setup.py", "MANIFEST.in",
                 "generated/krang_kernels.h", "generated/krang_kernels.c", "krang_kernels/_kernels.pyx",
                 "krang_kernels/_kernels.pyi", "krang_kernels/py.typed", "templates/c/kernels.c.j2",
                 "templates/python/checks.pxi", "CMakeLists.txt", "cmake/krang_kernelsConfig.cmake.in",
                 "cmake/krang_kernels.pc.in", "examples/c/main.c", "examples/cpp/main.cpp"):
        assert need in names, f"sdist lacks {need}"
    assert "krang_kernels/_kernels.c" not in names  # Cython's output, rebuilt by every build
    assert not [n for n in names if n.endswith((".so", ".pyc"))]


def test_wheel_contents(dists):
    _, wheel, _ = dists
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        meta = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    for need in ("krang_kernels/__init__.py", "krang_kernels/_kernels.pyi", "krang_kernels/py.typed",
                 "krang_kernels/include/krang_kernels.h", "krang_kernels/src/krang_kernels.c",
                 "codegen/__init__.py", "codegen/__main__.py", "codegen/emit/python_module.py", "codegen/build/module.py",
                 "codegen/templates/python/checks.pxi"):
        assert need in names, f"wheel lacks {need}"
    # every template and runtime file of the checkout's templates/, mapped into the package
    templates = {p.relative_to(ROOT).as_posix() for p in (ROOT / "templates").rglob("*") if p.is_file()}
    assert templates and {f"codegen/{t}" for t in templates} <= names
    assert [n for n in names if re.fullmatch(r"krang_kernels/_kernels\..*\.so", n)], "no compiled extension"
    assert [n for n in names if n.endswith(".dist-info/licenses/LICENSE")], "LICENSE not in the wheel"
    # no build inputs or intermediates
    assert not [n for n in names if n.endswith((".pyx", ".pyc")) or n == "krang_kernels/_kernels.c"]
    assert not [n for n in names if n.startswith(("tests/", "reference/", "benchmarks/", "generated/", "models/"))]
    assert f"Version: {codegen.__version__}" in meta
    assert "License-Expression: BSD-3-Clause" in meta and "Classifier: " in meta
    assert "Provides-Extra: generate" in meta
    assert re.search(r"krang-codegen\s*=\s*" + re.escape(PYPROJECT["project"]["scripts"]["krang-codegen"]), entry_points)


def test_installed_generator_runs_outside_the_repository(dists):
    """The wheel installed into an empty directory: `python -m codegen` from
    another directory regenerates Krang's C byte for byte from absolute
    paths, and krang_kernels.get_include() points into the installation."""
    _, wheel, tmp = dists
    site, work = tmp / "site", tmp / "elsewhere"
    work.mkdir()
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site),
                        str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # PYTHONPATH puts the installed copy first; -P keeps the working directory off sys.path.
    env = dict(os.environ, PYTHONPATH=str(site))
    py = [sys.executable, "-P"]
    probe = ("import codegen, krang_kernels as kk; "
             "print(codegen.__file__); print(kk.__file__); print(kk.get_include()); print(kk.__version__)")
    r = subprocess.run(py + ["-c", probe], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cg_file, kk_file, include, version = r.stdout.split()
    for f in (cg_file, kk_file, include):
        assert Path(f).is_relative_to(site), f
    assert version == codegen.__version__
    assert (Path(include) / "krang_kernels.h").read_bytes() == (ROOT / "generated" / "krang_kernels.h").read_bytes()
    r = subprocess.run(py + ["-m", "codegen", "--help"], cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0 and "usage" in r.stdout, r.stderr
    out = work / "out"
    r = subprocess.run(py + ["-m", "codegen", str(ROOT / "models" / "krang.toml"),
                             str(ROOT / "models" / "krang_params.toml"), "--out", str(out)],
                       cwd=work, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    for name in ("krang_kernels.h", "krang_kernels.c"):
        assert (out / name).read_bytes() == (ROOT / "generated" / name).read_bytes(), name


def test_the_runtime_needs_numpy_only(dists):
    """A fresh virtual environment with the wheel and its own dependencies (NumPy, no
    [generate] extra): krang_kernels imports, every kernel runs, load_params reads a
    numeric file, the identification tools work; SymPy is absent and the import
    changes no environment variable."""
    _, wheel, tmp = dists
    venv = tmp / "runtime-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    r = subprocess.run([py, "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    probe = textwrap.dedent(f"""
        import importlib.util, os
        import numpy as np
        assert importlib.util.find_spec("sympy") is None, "sympy is installed"
        before = dict(os.environ)
        import krang_kernels as kk
        from krang_kernels import identification as ident
        assert dict(os.environ) == before
        q = np.random.default_rng(1).uniform(-1, 1, kk.N_DOF)
        kk.compute_A(q); kk.compute_C(q, q); kk.compute_Q(q); kk.friction(q); kk.bias(q, q)
        kk.com(q); kk.com_jacobian(q); kk.centroidal_map(q); kk.compute_all(q, q); kk.base_params()
        kk.integrate(kk.neutral(), q, 0.01)
        tau = kk.inverse_dynamics(q, q, q)
        assert np.allclose(kk.forward_dynamics(q, q, tau), q, atol=1e-8)
        for ee in kk.END_EFFECTORS:
            kk.fk(q, ee); kk.jacobian(q, ee); kk.jdot_qdot(q, q, ee)
        kk.regressor(q, q, q); kk.base_regressor(q, q, q)
        kk.inverse_dynamics_derivatives(q, q, q); kk.forward_dynamics_derivatives(q, q, tau)
        p = kk.load_params({str(ROOT / "models" / "krang_params.toml")!r})
        assert np.array_equal(p, kk.default_params())
        kk.check_params(p)
        rng = np.random.default_rng(0)
        n = 3 * kk.N_PI // kk.N_DOF + 20
        qs, dqs, ddqs = ident.random_states(kk.N_DOF, n, rng)
        base, fit = ident.identify(kk, qs, dqs, ddqs, kk.inverse_dynamics(qs, dqs, ddqs))
        assert np.allclose(fit.beta, kk.base_params(p), atol=1e-8)
        print("ok")
        """)
    r = subprocess.run([py, "-P", "-c", probe], cwd=tmp, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
