"""Building: generated source text -> files on disk and compiled modules. The
Python module's build (module), the compiler driver (compiler), its flags (flags) and its
log (log), the journalled, all-or-nothing commit of an output directory (commit),
the per-user module cache (cache), a built robot's C library exported as a
CMake project (export) and its CasADi external functions compiled (casadi_library).

Imports: codegen.read, codegen.derive, codegen.emit and codegen.support; never
the pipeline (codegen.pipeline, codegen.urdf) or the command line (codegen.cli).
"""
