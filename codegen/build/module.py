"""The build of a generated robot's Python module: the .pyx and .pyi rendered
(codegen/emit/python_module.py), then Cython and the C compiler, the kernels'
source compiled as its parts concurrently (codegen/build/compiler.py).

    build_python_module(abi, model, values, out_dir, config)
        -> out_dir/NAME_kernels.<ext suffix>, importable with out_dir on sys.path
"""
from __future__ import annotations

import platform
import re
import sys
import warnings
from pathlib import Path

from ..support.workdirs import build_directory
from .log import captured, failure
from ..emit.python_module import write_python_module

from .flags import FLAGS, NATIVE, X86_FLAGS, export_map  # noqa: E402,F401 - re-exported (setup.py shares them)


def compile_module(module_name: str, pyx: Path, c_sources, include_dirs, out_dir: Path,
                   native: bool = False, parts=()) -> Path:
    """Cython + setuptools build_ext, in process: the extension lands in out_dir.
    `parts`: the part numbers of the generated C (abi.parts; compiled in this
    order, the largest first): each c_source is then compiled once per part,
    -DKKPART=k, concurrently (codegen/build/compiler.py). The compilers'
    output is captured (codegen/build/log.py): nothing is printed; a
    failure raises BuildError with the first error lines. Value-changing
    flags from the environment (-ffast-math, ...: compiler.VALUE_FLAGS) are
    left out, with one ValueFlagWarning, after the build (its output is captured)."""
    log = None
    try:
        with captured() as log:
            built, stripped = _compile(module_name, pyx, c_sources, include_dirs, out_dir, native, tuple(parts))
    except Exception as exc:  # noqa: BLE001 - Cython's, distutils' and setuptools' errors alike
        raise failure(module_name, log.text if log is not None else "", exc) from None
    if stripped:
        from .compiler import ValueFlagWarning, value_flag_warning  # setuptools: imported when building

        warnings.warn(value_flag_warning(stripped), ValueFlagWarning, stacklevel=2)
    return built


def part_sources(c_sources, parts, directory) -> list:
    """One file per (source, part) in `directory`, `#define KKPART k` then the
    source, included by name (found through the include path: the source's
    directory must be on it). The sources' names are C identifiers + .c (the
    generator's NAME_kernels.c), so the include line needs no escaping."""
    written = []
    for src in map(Path, c_sources):
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*\.c", src.name):
            raise ValueError(f"source name {src.name!r}")
        for k in parts:
            path = Path(directory) / f"{src.stem}_part{int(k)}.c"
            path.write_text(f"/* part {int(k)} of {src.name} (-DKKPART={int(k)}) */\n"
                            f"#define KKPART {int(k)}\n#include \"{src.name}\"\n", encoding="ascii")
            written.append(path)
    return written


def compile_flags(native: bool) -> list:
    """The kernels' compiler flags: portable (one copy of each kernel per x86-64
    level, chosen at load time: target_clones), or native (-march=native, one
    copy for this CPU: a third of the compile time, a module for this machine only)."""
    flags = FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else [])
    if native:
        flags = [f for f in flags if f != "-DKK_TARGET_CLONES"] + NATIVE
    return flags


def export_only_init(module_name: str, directory: Path) -> list:
    """The link flags that export PyInit_<module> alone (ELF: a version script
    written in `directory`). -fvisibility=hidden (FLAGS) is not enough: GCC
    (12) exports a target_clones kernel's ifunc and resolver whatever the
    visibility; the version script makes them local, so calls bind inside
    the module."""
    init = module_name.rsplit(".", 1)[-1]
    if not sys.platform.startswith(("linux", "freebsd")) or not (init.isascii() and init.isidentifier()):
        return []  # another linker, or PyInitU_ (a non-ASCII module name): -fvisibility=hidden alone
    script = directory / "exports.map"
    script.write_text(export_map(f"PyInit_{init}"), encoding="ascii")
    return ["-Xlinker", f"--version-script={script}"]  # -Xlinker: a comma in the path stays whole


def _compile(module_name, pyx, c_sources, include_dirs, out_dir, native, parts) -> Path:
    import numpy
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    from .compiler import BuildExt

    # removed on any exit, the compiler's temporaries inside; a killed run's by the next (build_dir.py)
    with build_directory() as tmp:
        if parts:
            (Path(tmp) / "parts").mkdir()
            c_sources = part_sources(c_sources, parts, Path(tmp) / "parts")
        ext = Extension(module_name, sources=[str(pyx), *map(str, c_sources)],
                        include_dirs=[*map(str, include_dirs), numpy.get_include()],
                        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
                        extra_compile_args=compile_flags(native),
                        extra_link_args=export_only_init(module_name, Path(tmp)))
        # build_dir: Cython's C goes to tmp, never next to a same-named kernel source
        exts = cythonize([ext], build_dir=tmp, language_level=3, quiet=True, force=True)
        dist = Distribution({"name": module_name, "ext_modules": exts, "script_name": "pybuild"})
        cmd = BuildExt(dist)  # no -g, sources compiled concurrently, compiler errors quoted
        cmd.first_sources = [str(c) for c in c_sources]  # the kernels' parts, largest first; then the wrapper
        cmd.other_flags = ["-O1"]  # the wrapper: glue code (codegen/build/compiler.py)
        cmd.build_lib, cmd.build_temp, cmd.inplace, cmd.force = str(out_dir), tmp, False, True
        cmd.ensure_finalized()
        cmd.run()
        (built,) = cmd.get_outputs()
    return Path(built), cmd.stripped


def build_python_module(abi, model, values, out_dir, config, part_weights=None) -> Path:
    """Render and compile NAME_kernels (NAME: config.name, else the model's)
    next to the generated C in out_dir. config: any object with `.name`;
    `native=True` adds -march=native; other attributes are ignored. The C is
    compiled as its parts (abi.parts), the heaviest first by `part_weights`
    ({part number: weight}, e.g. operation counts; default: ABI order).
    Returns the path of the compiled extension."""
    out_dir = Path(out_dir).resolve()
    name = getattr(config, "name", None) or abi.name
    module = f"{name}_kernels"
    header = f"{abi.name}_kernels.h"
    c_src = out_dir / f"{abi.name}_kernels.c"
    if not c_src.is_file():
        raise FileNotFoundError(f"{c_src}: generate the C sources first")
    pyx, _ = write_python_module(abi, model, values, out_dir, module, header)
    weights = part_weights or {}
    # every part the C source has (its KKNPARTS): an ABI described from the model alone lacks the
    # base-parameter kernels, and its part numbers would skip the source's last parts
    m = re.search(r"^#define KKNPARTS (\d+)$", c_src.read_text(encoding="utf-8"), re.M)
    numbers = range(1, int(m[1]) + 1) if m else [i for i, _, _ in abi.parts()]
    parts = sorted(numbers, key=lambda i: -weights.get(i, 0))
    return compile_module(module, pyx, [c_src], [out_dir], out_dir, bool(getattr(config, "native", False)),
                          parts)
