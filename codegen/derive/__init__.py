"""Deriving dynamics: records of a robot -> symbolic outputs over a straight-line
program (codegen.derive.program.Program). Pure: knows nothing of C.
`codegen.derive.outputs.derive(model)` is the entry point.

Modules: every output (outputs) and the record it returns (derivation); the
program and its symbols (program, symbols); spatial algebra (spatial);
kinematics (kinematics), composite inertias for A and Q (composite_inertia), the
Christoffel Coriolis matrix (christoffel), inverse dynamics (rnea), forward
dynamics (forward_dynamics: sparse LTDL; aba: the articulated-body
alternative), Jacobians (jacobians), poses and J-dot q-dot (fk), friction
(friction), centre of mass and centroidal momentum (centroidal); the regressor
and base parameters (regressor, base_parameters); the derivatives of the
dynamics (dynamics_derivatives, with the forward-mode differentiation of a
program, differentiate); the contact Jacobians, drifts and the constrained
dynamics' contact terms (contacts); one routine per group of isomorphic subtrees
(subtrees, subtree_groups); the energy method, an independent reference for
small models (lagrangian).

Imports: codegen.read and codegen.support only; never codegen.emit, codegen.build or the pipeline.
"""
