"""Independent references, shared by the tests, the benchmarks and the examples.

Each one computes what the generated kernels compute without going through them,
so that they can check the kernels:

* pin_reference: Pinocchio models built from the same frame table (or the same
  URDF) and parameter vector, and the comparison loops over random states;
* floating_reference: Pinocchio's free-flyer model of a URDF in our coordinates;
* reference_fk: textbook forward kinematics, Jacobians, mass matrix and
  potential energy in numpy, straight from a model's frame table;
* abi_ctypes: generate, compile and load any model's C through ctypes, one
  Python call per function of the ABI;
* ctrl_cases: the small test models (tests/models) and Krang, compiled once per
  session, with parameter sets and random states;
* robot_data: where example-robot-data's URDFs are installed.

A package of its own so that tests/, benchmarks/ and examples/ import none of
each other's code (tests/test_layering_folders.py). Not installed: it lives in
the checkout, next to the code it checks.
"""
