"""Emitting code: derivation outputs -> source text, never a file or a compiler.
The ABI description (abi, abi_records), C naming and escaping (cnames), one CSE
pass per kernel and C99 printing (cse, cprint) with operation counts (op_count),
statement layout (layout), very long kernels split into chunks (chunks),
kernels that call shared subtree routines (routines), the dynamics' derivatives
as pair loops (pair_loops), SIMD batch kernels (batch), each kernel in its form
(kernels), emission in child processes (parallel), the C files rendered from
templates/c (render_c) and the Python module's source from templates/python
(python_module), with its docstrings (docstrings) and Python text from
untrusted strings (pytext), a robot's CMake project from templates/cmake
(cmake_project) and its CasADi external functions from templates/casadi
(casadi_external).

Imports: codegen.read, codegen.derive and codegen.support; never codegen.build,
the pipeline (codegen.pipeline) or the command line (codegen.cli).
"""
