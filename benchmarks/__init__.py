"""The benchmarks: generated kernels against Pinocchio, and the generator's own cost.

Entry points (each writes a table under results/, headed by the line env.provenance
writes: machine, compiler, flags, date; docs_tables copies the tables into docs/):
  python -m benchmarks             (make bench)        Krang's kernels vs Pinocchio, C and Python
  python -m benchmarks.urdf_robots (make bench-robots) real URDFs vs Pinocchio, generation and compile time
  python -m benchmarks.batch       batch kernels vs scalar kernels, per build
  python -m benchmarks.scaling     generation time and memory vs degrees of freedom
  python -m benchmarks.build_times generation and module build time and memory per URDF robot
  python -m benchmarks.urdf_coverage          every example-robot-data URDF vs Pinocchio's parser
  python -m benchmarks.errors_vs_pinocchio    largest errors vs Pinocchio
  python -m benchmarks.docs_tables bench|robots|scaling   the tables into docs/ and the README

Helpers, one job each: env (machine facts, header locations), robot (end effectors, row keys,
the harness's robot header), pin_model (Pinocchio models of a frame table), urdf_case (the
Pinocchio side of a URDF robot), build (compiling, caching, machine code per tick), inputs
(parameters and states), timing (dumps, timing rounds), python_level (Python-level timings,
Pinocchio reference outputs), tables (report rows), efficiency (code per tick, FMA floor, batch,
portable build), report (bench.md, bench.json), plot (bench.png), run (the command line).
C / C++ harnesses in harness/: bench_c.c (our kernels), bench_pin.cpp (Pinocchio), both on
bench_common.h (timing loops, cache flushing); batch_vs_scalar.c (benchmarks.batch).
"""
