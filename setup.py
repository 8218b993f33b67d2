"""Builds the Cython extension from the committed generated sources:
generated/krang_kernels.c and krang_kernels/_kernels.pyx, which `make
generate` renders from templates/python/module.pyx.j2 (no SymPy needed to
install). Everything else (metadata, packages, package data) is in
pyproject.toml; why setuptools rather than scikit-build-core or meson-python
is said there."""
import os
import platform
import re
import shutil
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

# Portable by default: the compiler's baseline target (any x86-64 / aarch64);
# on x86-64 with GCC and glibc the generated kernels carry target_clones
# (-DKK_TARGET_CLONES in FLAGS), so AVX2 and FMA are used where the CPU has them
# (measured about as fast as -march=native: docs/design-notes.md#fma-and-target-clones).
# KRANG_NATIVE=1 tunes for the building machine instead (the wheel then runs
# only on CPUs like it); KRANG_PORTABLE is accepted and is the default.
NATIVE = ["-march=native"] if os.environ.get("KRANG_NATIVE") and not os.environ.get("KRANG_PORTABLE") else []
# Fused multiply-add contraction (GCC's default outside ISO mode): the
# generated code is sums of products, measured faster with FMA (same page). The same flags as
# codegen.build.module.FLAGS (tests/test_pybuild.py checks it).
# -fvisibility=hidden: only PyInit__kernels is exported, the kernels bind inside
# the module (no other library's same-named krang_* can stand in for them).
FLAGS = ["-O3", "-std=c99", "-ffp-contract=fast", "-DKK_TARGET_CLONES", "-fvisibility=hidden"]
# x86-64: the AVX-512 copy of the target_clones keeps 256-bit vectors (faster
# here; see KKCLONES in the generated C). codegen.build.module.X86_FLAGS too.
X86_FLAGS = ["-mprefer-vector-width=256"]

# The C library for C users, shipped inside the package:
# krang_kernels/include/krang_kernels.h (krang_kernels.get_include()) and
# krang_kernels/src/krang_kernels.c (krang_kernels.get_sources()).
C_FILES = {"include": "generated/krang_kernels.h", "src": "generated/krang_kernels.c"}


class BuildPyWithC(build_py):
    """build_py that also copies the generated C header and source into the package."""

    def run(self):
        super().run()
        for sub, src in C_FILES.items():
            dest = Path(self.build_lib) / "krang_kernels" / sub
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / Path(src).name)

    def get_outputs(self, include_bytecode=True):
        extra = [str(Path(self.build_lib) / "krang_kernels" / sub / Path(src).name) for sub, src in C_FILES.items()]
        return super().get_outputs(include_bytecode) + extra


KERNELS_C = Path("generated/krang_kernels.c")
PARTS_DIR = Path("build/krang_parts")


def kernel_parts(c_file=KERNELS_C, directory=PARTS_DIR) -> list:
    """The generated C as its parts (its "Parts" comment; one translation unit
    each, -DKKPART=k by a `#define` in a two-line file that includes it), the
    heaviest first by the operation counts the same comment lists, so that the
    longest compiles start first. One part per CPU at a time: the module builds
    in about half the wall time on two cores (codegen/build/compiler.py does
    the same for the modules of URDF robots)."""
    text = c_file.read_text(encoding="utf-8")
    head = text[:text.find("#define KKNPARTS")]
    ops = {m[1]: int(m[2]) for m in re.finditer(r"^ \*   krang_(\w+) +(\d+)$", head, re.M)}
    parts = re.findall(r"^ \*   (\d+) [^\n]*:\n((?: \*     [^\n]*\n)+)", head, re.M)
    if not parts:  # no parts: the file as one translation unit
        return [str(c_file)]
    weight = {}
    for k, names in parts:  # a batch kernel counts twice its kernel's operations (it is vectorized)
        weight[int(k)] = sum(ops.get(n, 0) + 2 * ops.get(n[:-len("_batch")], 0) * n.endswith("_batch")
                             for n in re.findall(r"\w+", names.replace("*", "")))
    directory.mkdir(parents=True, exist_ok=True)
    sources = []
    for k in sorted(weight, key=lambda k: (-weight[k], k)):
        path = directory / f"krang_kernels_part{k}.c"
        body = f"/* part {k} of krang_kernels.c (setup.py) */\n#define KKPART {k}\n#include \"krang_kernels.c\"\n"
        if not path.is_file() or path.read_text(encoding="ascii") != body:
            path.write_text(body, encoding="ascii")
        sources.append(str(path))
    return sources


# Flags from CFLAGS, CPPFLAGS, LDFLAGS, CC or LDSHARED that change floating-point
# results (-ffast-math would compile the wrapper's NaN checks away and, at the
# link, add crtfastmath.o: flush-to-zero for the whole process that imports
# the module). Left out of every command, with a warning. A copy of
# codegen.build.compiler's (not importable here, see below; the tests compare them).
VALUE_FLAGS = frozenset({
    "-ffast-math", "-Ofast", "-ffinite-math-only", "-funsafe-math-optimizations", "-fno-signed-zeros",
    "-freciprocal-math", "-fassociative-math", "-fsingle-precision-constant",
    "-fno-honor-nans", "-fno-honor-infinities", "-fapprox-func", "-ffp-model=fast", "-ffp-model=aggressive",
    "-mdaz-ftz",
})
VALUE_FLAG_PREFIXES = ("-fdenormal-fp-math",)


def without_value_flags(command) -> tuple:
    """(command without VALUE_FLAGS, the flags removed, in order)."""
    kept, removed = [], []
    for a in command:
        (removed if a in VALUE_FLAGS or a.startswith(VALUE_FLAG_PREFIXES) else kept).append(a)
    return kept, removed


class BuildExtConcurrent(build_ext):
    """build_ext compiling an extension's sources concurrently, in the order
    given (setuptools compiles them one after the other), without the
    environment's value-changing flags. Not codegen.build.compiler.BuildExt:
    an isolated build (pip's default) runs this file without the project on
    sys.path, so codegen is not importable."""

    def build_extensions(self):
        removed = []
        for attr in getattr(self.compiler, "executables", {}):
            command = getattr(self.compiler, attr, None)
            if isinstance(command, list):
                kept, gone = without_value_flags(command)
                setattr(self.compiler, attr, kept)
                removed += gone
        if removed:
            warnings.warn("ignoring floating-point flags from the build environment that would change "
                          f"krang_kernels' results: {' '.join(dict.fromkeys(removed))}", stacklevel=1)
        serial = self.compiler.compile
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)

        def compile(sources, *args, **kwargs):
            with ThreadPoolExecutor(max(1, min(jobs, len(sources)))) as pool:
                return [obj for objs in pool.map(lambda s: serial([s], *args, **kwargs), sources) for obj in objs]

        self.compiler.compile = compile
        super().build_extensions()


def export_only_init(directory=PARTS_DIR) -> list:
    """The link flags that export PyInit__kernels alone (ELF: a version script):
    GCC exports target_clones kernels whatever -fvisibility says. As
    codegen.build.module.export_only_init."""
    if not sys.platform.startswith(("linux", "freebsd")):
        return []
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "exports.map"
    script.write_text("{ global: PyInit__kernels; local: *; };\n", encoding="ascii")
    return ["-Xlinker", f"--version-script={script.resolve()}"]


# Run as a script (pip, build, `setup.py build_ext`); tests load the helpers above with runpy.
if __name__ == "__main__":
    extension = Extension(
        "krang_kernels._kernels",
        sources=[*kernel_parts(), "krang_kernels/_kernels.pyx"],
        include_dirs=["generated", numpy.get_include()],  # "generated": the parts include krang_kernels.c
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=FLAGS + (X86_FLAGS if platform.machine() == "x86_64" else []) + NATIVE,
        extra_link_args=export_only_init(),
    )

    setup(ext_modules=cythonize([extension], language_level=3),
          cmdclass={"build_py": BuildPyWithC, "build_ext": BuildExtConcurrent})
