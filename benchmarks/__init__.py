"""`make bench`: the generated kernels against Pinocchio (run: python -m benchmarks).

One job per module: env (machine facts, header locations), robot (end effectors,
row keys, the harness's robot header), pin_model (Pinocchio models of a frame
table), build (compiling, caching, generated-code figures), timing (states,
dumps, timing rounds), pylevel (Python-level timings, Pinocchio reference
outputs), tables (report rows), report (bench.md, bench.json), plot (bench.png),
run (the command line), robots (a Case for a URDF robot), readme_table (the
README block). The C / C++ harness sources are in harness/.
"""
