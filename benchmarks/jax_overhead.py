"""Per-call overhead of krang_kernels.jax's FFI calls against the raw kernel and jax.pure_callback.

    python -m benchmarks.jax_overhead                  # Krang's 17 DOF (krang_kernels)
    python -m benchmarks.jax_overhead ROBOT.urdf EE    # a URDF robot through codegen.import_urdf

Forward dynamics, one state, best of 7 repeats (the machine is shared: the minimum is the least
disturbed). Raw kernel: the module's batch call over 2000 states divided by 2000 (a C loop, no Python
per state). From Python: one jitted call with its dispatch (block_until_ready), beside a jitted `t * 2`,
JAX's own dispatch. In the graph: a jitted lax.scan of 2000 calls, each feeding the next, divided by
2000: the handler's cost without dispatch. The issue's target (#37): at most 5 us above the raw kernel.
"""
from __future__ import annotations

import argparse
import os
import platform
import timeit

import numpy as np

N, STEPS = 2000, 2000
DISPATCH = "jit(t * 2), JAX's dispatch"


def best(f, number: int) -> float:
    """Microseconds per call: the best of 7 repeats of `number` calls."""
    return min(timeit.repeat(f, number=number, repeat=7)) / number * 1e6


def measure(m, robot) -> dict:
    import jax
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    base = 7 if m.N_Q != m.N_DOF else 0  # a free-flying base: position, quaternion x y z w
    q = np.zeros(m.N_Q)
    if base:
        q[6] = 1.0
    q[base:] += 0.1 * rng.normal(size=m.N_Q - base)
    v, tau = rng.normal(size=(2, m.N_DOF))
    qs, vs, ts = (np.tile(a, (N, 1)) for a in (q, v, tau))
    qj, vj, tj = map(jnp.asarray, (q, v, tau))
    out = {"raw C kernel": best(lambda: m.forward_dynamics(qs, vs, ts), 5) / N,
           "module Python call": best(lambda: m.forward_dynamics(q, v, tau), N)}

    def callback(q, v, t):
        return jax.pure_callback(lambda a, b, c: m.forward_dynamics(np.asarray(a), np.asarray(b), np.asarray(c)),
                                 jax.ShapeDtypeStruct((m.N_DOF,), jnp.float64), q, v, t)

    def scan(fd):
        def body(t, _):
            return t + 1e-12 * fd(qj, vj, t), None
        return jax.jit(lambda t: jax.lax.scan(body, t, None, length=STEPS)[0])

    for label, fn in ((DISPATCH, lambda q, v, t: t * 2.0), ("jit(FFI)", robot.forward_dynamics),
                      ("jit(pure_callback)", callback)):
        f = jax.jit(fn)
        f(qj, vj, tj).block_until_ready()
        out[f"{label}, from Python"] = best(lambda: f(qj, vj, tj).block_until_ready(), N)
    for label, fn in (("FFI", robot.forward_dynamics), ("pure_callback", callback)):
        f = scan(fn)
        f(tj).block_until_ready()
        out[f"{label}, per call in a jitted scan"] = best(lambda: f(tj).block_until_ready(), 3) / STEPS
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("urdf", nargs="?", help="a URDF (default: Krang, the krang_kernels module)")
    ap.add_argument("ee", nargs="*", help="its end effectors")
    args = ap.parse_args(argv)
    import jax
    jax.config.update("jax_enable_x64", True)
    import krang_kernels.jax as kj
    if args.urdf:
        import codegen
        m = codegen.import_urdf(args.urdf, end_effectors=args.ee, quiet=True)
    else:
        import krang_kernels as m
    out = measure(m, kj.wrap(m))
    cpu = platform.machine()
    try:  # the CPU's model name (Linux)
        cpu = next(ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    print(f"{getattr(m, '__name__', 'robot')}: {m.N_DOF} DOF, forward dynamics; {cpu}, "
          f"{len(os.sched_getaffinity(0))} CPUs (shared: noisy); jax {jax.__version__}")
    print("| call | us |\n|---|---:|")
    for k, us in out.items():
        print(f"| {k} | {us:.3f} |")
    raw = out["raw C kernel"]
    print(f"FFI above the raw kernel: {out['FFI, per call in a jitted scan'] - raw:.3f} us in the graph, "
          f"{out['jit(FFI), from Python'] - out[DISPATCH + ', from Python'] - raw:.3f} us "
          "from Python beyond JAX's dispatch")


if __name__ == "__main__":
    main()
