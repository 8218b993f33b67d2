"""Deriving dynamics: records of a robot -> symbolic outputs over a straight-line
program (codegen.derive.program.Program). Kinematics, composite inertias (A, Q),
the Christoffel Coriolis matrix, RNEA, forward dynamics (LTDL, ABA), Jacobians,
FK and J-dot q-dot, friction, and the shared subtree routines. Pure: knows
nothing of C. `codegen.derive.outputs.derive(model)` is the entry point.

Imports: codegen.read and codegen.support only; never codegen.emit, codegen.build or the pipeline.
"""
