"""The compiler flags of every Python module build, written once: the modules
of URDF robots (codegen.build.module, codegen.build.compiler) and Krang's
extension (setup.py, which loads this file by its path: an isolated build
runs setup.py without the project importable, and this file imports nothing).
"""

# Fused multiply-add contraction, measured faster on sums of products
# (docs/design-notes.md#fma-and-target-clones); target_clones: AVX2/FMA copies
# of each kernel chosen at load time. -march=native only on request (NATIVE:
# codegen.import_urdf's cached builds, --native, KRANG_NATIVE=1 for setup.py):
# a module may be copied to another machine.
# -fvisibility=hidden: the kernels are not exported (only PyInit_<module>,
# which Python declares visible; a version script for what GCC exports anyway),
# so calls bind inside the module: a same-named robot's kernels loaded
# earlier with RTLD_GLOBAL cannot stand in for them.
FLAGS = ["-O3", "-std=c99", "-ffp-contract=fast", "-DKK_TARGET_CLONES", "-fvisibility=hidden"]
# On x86-64 (GCC, Clang): the AVX-512 copy of the target_clones build keeps
# 256-bit vectors (see KKCLONES in templates/c/kernels.c.j2).
X86_FLAGS = ["-mprefer-vector-width=256"]
NATIVE = ["-march=native"]

# Flags that change floating-point results or the process's floating-point
# environment, GCC's and Clang's spellings: -ffast-math would compile the
# wrapper's NaN checks away and, at the link, add crtfastmath.o (flush-to-zero
# for the whole process that imports the module). Left out of every command
# taken from the environment (CFLAGS, CPPFLAGS, LDFLAGS, CC, LDSHARED), with a
# warning. -ffp-contract is ours (FLAGS, last on the command line, so it wins).
VALUE_FLAGS = frozenset({
    "-ffast-math", "-Ofast", "-ffinite-math-only", "-funsafe-math-optimizations", "-fno-signed-zeros",
    "-freciprocal-math", "-fassociative-math", "-fsingle-precision-constant",
    "-fno-honor-nans", "-fno-honor-infinities", "-fapprox-func", "-ffp-model=fast", "-ffp-model=aggressive",
    "-mdaz-ftz",  # links crtfastmath.o
})
VALUE_FLAG_PREFIXES = ("-fdenormal-fp-math",)  # Clang: =preserve-sign and =positive-zero assume flushing


def without_value_flags(command) -> tuple:
    """(command without VALUE_FLAGS, the flags removed, in order)."""
    kept, removed = [], []
    for a in command:
        (removed if a in VALUE_FLAGS or a.startswith(VALUE_FLAG_PREFIXES) else kept).append(a)
    return kept, removed


def export_map(module_init: str) -> str:
    """An ELF version script exporting `module_init` (PyInit_<module>) alone."""
    return f"{{ global: {module_init}; local: *; }};\n"
