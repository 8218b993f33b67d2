"""Generate, compile and load any model's kernels through ctypes, driven by
codegen/emit/abi.py: every function of the ABI becomes a Python call that takes
the inputs (arrays, ints) in ABI order and returns the outputs, allocated
NaN-filled so that an unwritten entry shows up.

    lib = build(model_path, params_path, tmp_dir)
    tau = lib.inverse_dynamics(q, dq, ddq, p)
    T = lib.fk(q, p, 0)
"""
from __future__ import annotations

import ctypes
import dataclasses
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from codegen.emit.abi import INDEX, OUT, REAL, describe
from codegen.emit.cnames import cnames
from codegen.build.compiler import jobs
from codegen.build.module import part_sources
from codegen.pipeline import generate_from_files
from codegen.read.model import load_model

# -Wno-unused-parameter: on main, a 1-DOF model's compute_A never reads q;
# drop it once the emitter's (void) casts of unused inputs are merged.
CFLAGS = ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-Wno-unused-parameter"]
_D = ctypes.POINTER(ctypes.c_double)


# A generated C file this large (Krang's, ~2 MB) is compiled as its parts (-DKKPART=k,
# k = 1 .. KKNPARTS), concurrently: the same functions, about half the wall time on two
# cores; smaller files in one compiler run (a process per part would cost more than it saves).
PARTS_FROM_BYTES = 1 << 20


def _gcc(args, cc="gcc"):
    r = subprocess.run([cc, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), f"{cc} failed or warned:\n{r.stdout}\n{r.stderr}"


def compile_objects(c_file: Path, out_dir: Path, cflags=CFLAGS, cc: str = "gcc") -> list[Path]:
    """`c_file` compiled (-c) into out_dir with `cc`: one object, or, for a file of
    PARTS_FROM_BYTES or more that has parts, one object per part, compiled concurrently.
    Each object's gcc -fstack-usage file (if asked for) is next to it."""
    c_file, out_dir = Path(c_file), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    text = c_file.read_text(encoding="utf-8") if c_file.stat().st_size >= PARTS_FROM_BYTES else ""
    m = re.search(r"^#define KKNPARTS (\d+)$", text, re.M)
    if m is None or not re.fullmatch(r"\w+\.c", c_file.name):  # part_sources includes the file by name
        obj = out_dir / f"{c_file.stem}.o"
        _gcc([*cflags, "-I", c_file.parent, "-c", c_file, "-o", obj], cc)
        return [obj]
    # the heaviest parts first (the text up to the next part's block), so that both cores stay busy
    blocks = list(re.finditer(r"^#if KKIN\((\d+)\) /\*", text, re.M))
    weight = dict.fromkeys(range(1, int(m[1]) + 1), 0)
    for b, after in zip(blocks, blocks[1:] + [None]):
        weight[int(b[1])] = weight.get(int(b[1]), 0) + (after.start() if after else len(text)) - b.start()
    # the part files as the module build writes them (`#define KKPART k`, then the source by name)
    sources = part_sources([c_file], sorted(weight, key=lambda k: -weight[k]), out_dir)
    objs = [src.with_suffix(".o") for src in sources]
    with ThreadPoolExecutor(jobs(len(sources))) as pool:
        list(pool.map(lambda src, obj: _gcc([*cflags, "-I", c_file.parent, "-c", src, "-o", obj], cc),
                      sources, objs))
    return objs


def compile_shared(c_file: Path, so: Path, cflags=CFLAGS) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler `gcc`")
    so = Path(so)
    objs = compile_objects(c_file, so.parent / f"{so.stem}_parts", [*cflags, "-fPIC"])
    _gcc([*cflags, "-shared", "-o", so, *objs, "-lm"])
    return so


class Library:
    """The compiled kernels of `model`, one method per ABI function.

    `name`: the --name the C was generated with (None: the model's name). The
    C names (prefix, per-end-effector kernels) are the generator's
    (codegen.emit.cnames), so models with any end-effector names load."""

    def __init__(self, model, so: Path, name: str | None = None, header: Path | None = None):
        self.model = model
        names = cnames(model, name)
        # the number of base parameters the generator chose: the header's NBASE
        self.nbase = header_nbase(header or Path(so).parent / f"{names.prefix}_kernels.h", names.macro)
        self.abi = dataclasses.replace(describe(model, ee_idents=names.ees, nbase=self.nbase), name=names.prefix,
                                       prefix=f"{names.prefix}_")
        self.lib = ctypes.CDLL(str(so))
        for f in self.abi.functions:
            if f.returns != "void":
                continue
            cf = getattr(self.lib, self.abi.prefix + f.name)
            cf.argtypes = [{INDEX: ctypes.c_int, REAL: ctypes.c_double}.get(a.role, _D) for a in f.args]
            cf.restype = None

    def __getattr__(self, name):
        if name.startswith("_") or name in ("abi", "lib", "model", "nbase"):
            raise AttributeError(name)
        try:
            f = self.abi.function(name)
        except KeyError:
            raise AttributeError(name) from None
        cf = getattr(self.lib, self.abi.prefix + f.name)

        def call(*inputs):
            ins = [a for a in f.args if a.role != OUT]
            assert len(inputs) == len(ins), f"{name} takes {[a.name for a in ins]}"
            it, args, outs, keep = iter(inputs), [], [], []
            for a in f.args:
                if a.role == INDEX:
                    args.append(int(next(it)))
                elif a.role == REAL:
                    args.append(float(next(it)))
                elif a.role == OUT:
                    o = np.full(a.shape, np.nan)
                    outs.append(o)
                    args.append(o.ctypes.data_as(_D))
                else:
                    x = np.ascontiguousarray(next(it), dtype=np.float64)
                    assert x.shape == a.shape, (a.name, x.shape, a.shape)
                    keep.append(x)
                    args.append(x.ctypes.data_as(_D))
            cf(*args)
            return outs[0] if len(outs) == 1 else tuple(outs)

        return call


def header_nbase(header: Path, macro: str):
    """The value of MACRO_NBASE in the generated header (None without the header or the macro)."""
    if not header.is_file():
        return None
    m = re.search(rf"^#define {re.escape(macro)}_NBASE (\d+)$", header.read_text(), re.M)
    return int(m.group(1)) if m else None


def build(model_path, params_path, out_dir, cflags=CFLAGS) -> Library:
    """Generate the model's C sources into out_dir, compile them, load them."""
    model = load_model(model_path)
    out_dir = Path(out_dir)
    generate_from_files(model_path, params_path, out_dir)
    c_file = out_dir / f"{model.name}_kernels.c"
    return Library(model, compile_shared(c_file, out_dir / f"lib{model.name}_kernels.so", cflags))


def write_params(model, values, path: Path) -> Path:
    """A parameter file (the TOML [values] table) for a parameter vector."""
    lines = ["[values]"] + [f"{n} = {float(v)!r}" for n, v in zip(model.param_names, values)]
    path.write_text("\n".join(lines) + "\n")
    return path
