"""Emitting code: the ABI description (abi), C naming and escaping (cnames), one
CSE pass per kernel and C99 printing (cse), statement layout (layout), kernels that
call shared subtree routines (routines), SIMD batch kernels (batch), the templates
the files are rendered from (templates/), and the Python module's source and build
(python_module, runtime/checks.pxi).

Imports: codegen.read, codegen.derive and codegen.progress; never the pipeline
(codegen.generate) or the command line (codegen.cli).
"""
