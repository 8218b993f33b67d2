"""The report's rows, computed from the timing summaries (no formatting of whole documents here).

`summary` is {harness: {key: {median, lo, hi, n}}} (harness.summarize), `tick_summary`
{harness: {mode: {key: {...}}}}; harnesses are "ours", "pin" and "pin-lib".
Keys follow robot.py: J_<ee> per end effector, group_key(ees) for all of them.
"""
from __future__ import annotations

from .robot import KernelSet, group_key, group_label, j_key, tick_group


def fmt_ns(v):
    if v is None:
        return "n/a"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def fmt_us(v):
    return "n/a" if v is None else f"{v:.2f}"


def fmt_dus(v):
    return "n/a" if v is None else f"{v:+.2f}"


def ratio(a, b):
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.3g}"


def pin_calls(ees) -> dict:
    """What each Pinocchio harness key calls."""
    g, n, jw = group_key(ees), len(ees), "computeJointJacobian + rotate to LOCAL_WORLD_ALIGNED"
    d = {
        "A": "crba (upper triangle, Convention::LOCAL)",
        "A_sym": "crba + copy upper to lower triangle",
        "A_worldconv": "crba(Convention::WORLD)",
        "C": "computeCoriolisMatrix",
        "Q": "computeGeneralizedGravity",
        "nle_rnea": "rnea(q, dq, 0) (= C*dq + Q, vector only)",
    }
    d.update({j_key(e): jw for e in ees})
    d.update({
        g: f"{n} x ({jw})",
        g + "_alljac": f"computeJointJacobians + {n} getJointJacobian(LOCAL_WORLD_ALIGNED)",
        g + "_framejac": f"{n} computeFrameJacobian(LOCAL_WORLD_ALIGNED)",
        j_key(ees[0]) + "_local": "computeJointJacobian (LOCAL)",
        g + "_local": f"{n} computeJointJacobian (LOCAL)",
        "all_seq": f"crba + computeCoriolisMatrix + computeGeneralizedGravity + {n} x J (in sequence)",
    })
    return d


def our_calls(ks: KernelSet) -> dict:
    """What each of our harness keys calls."""
    ees, P, g = ks.ee_names, ks.prefix, group_key(ks.ee_names)
    jac = ks.fn("jacobian")
    both = " + ".join(e.upper() for e in ees)
    d = {"A": ks.fn("compute_A"), "C": ks.fn("compute_C"), "Q": ks.fn("compute_Q")}
    d.update({j_key(e): f"{jac}({e.upper()}, WORLD)" for e in ees})
    d[g] = f"{jac} {both} (WORLD)"
    if ks.direct:
        d[j_key(ees[0]) + "_direct"] = f"{ks.direct[0]} (no dispatch)"
        d[g + "_direct"] = " + ".join(ks.direct)
    d[j_key(ees[0]) + "_local"] = f"{jac}({ees[0].upper()}, LOCAL)"
    d[g + "_local"] = f"{jac} {both} (LOCAL)"
    d["friction"] = ks.fn("friction")
    d["all"] = ks.fn("compute_all")
    jseq = " + ".join(x.removeprefix(P + "_") for x in ks.direct) if ks.direct else f"{len(ees)} x jacobian"
    d["all_seq"] = f"{ks.fn('compute_A')} + _C + _Q + {jseq} (in sequence)"
    return d


def j_variants(ees):
    g = group_key(ees)
    return (g, g + "_alljac", g + "_framejac")


def _med(d, k):
    return d[k]["median"] if k in d else None


def headline(summary, ees):
    """Rows kernel | ours | pin | pin-lib | pin call, and the fastest Pinocchio group variant."""
    ours, pin, lib = (summary.get(h, {}) for h in ("ours", "pin", "pin-lib"))
    calls = pin_calls(ees)

    def best_j(d):
        cands = [(d[k]["median"], k) for k in j_variants(ees) if k in d]
        return min(cands) if cands else (None, None)

    pj, pj_name = best_j(pin)
    lj, _ = best_j(lib)
    rows = [(k, _med(ours, k), _med(pin, k), _med(lib, k), calls[k]) for k in ("A", "C", "Q")]
    rows += [(j_key(e), _med(ours, j_key(e)), _med(pin, j_key(e)), _med(lib, j_key(e)), calls[j_key(e)])
             for e in ees]
    rows.append((group_label(ees), _med(ours, group_key(ees)), pj, lj,
                 f"fastest of three: {calls[pj_name]}" if pj_name else ""))
    four = [_med(pin, "A"), _med(pin, "C"), _med(pin, "Q"), pj]
    four_lib = [_med(lib, "A"), _med(lib, "C"), _med(lib, "Q"), lj]
    rows.append(("compute_all vs sum of pin's four", _med(ours, "all"),
                 sum(four) if None not in four else None,
                 sum(four_lib) if None not in four_lib else None,
                 "sum of the four rows above"))
    return rows, pj_name


def tick_keys(ees):
    """[(row label, tick key, [tight-loop keys whose sum is its tight-loop figure]), ...]."""
    g = group_key(ees)
    return [("A", "A", ["A"]), ("C", "C", ["C"]), ("Q", "Q", ["Q"]),
            (group_label(ees), tick_group(ees), [g]), ("whole tick", "tick", ["A", "C", "Q", g])]


def tick_rows(summary, tick_summary, mode, ees):
    """Rows label | ours | pin | pin-lib | ours tight | pin tight, ns (None where missing)."""
    def tk(h, k):
        return _med(tick_summary.get(h, {}).get(mode, {}), k)

    def tight(h, keys):
        vals = [_med(summary.get(h, {}), x) for x in keys]
        return sum(vals) if None not in vals else None

    return [(label, tk("ours", k), tk("pin", k), tk("pin-lib", k), tight("ours", t), tight("pin", t))
            for label, k, t in tick_keys(ees)]


def add_c_columns(py_rows, summary, tick_summary, ees):
    """Python out= minus the C tight loop and minus the C control tick (ours), µs."""
    ours = summary.get("ours", {})
    warm = tick_summary.get("ours", {}).get("warm", {})
    first = j_key(ees[0])
    keys = {"A": ("A", "A"), "C": ("C", "C"), "Q": ("Q", "Q"), first: (first, first),
            group_label(ees): (group_key(ees), tick_group(ees))}
    for r in py_rows:
        tight_k, tick_k = keys.get(r["kernel"], (None, None))
        c_tight = ours[tight_k]["median"] / 1e3 if tight_k in ours else None
        c_tick = warm[tick_k]["median"] / 1e3 if tick_k in warm else None
        py = r.get("ours_out")
        r["c_tight_us"], r["c_tick_us"] = c_tight, c_tick
        r["out_minus_c_tight_us"] = py - c_tight if py is not None and c_tight is not None else None
        r["out_minus_c_tick_us"] = py - c_tick if py is not None and c_tick is not None else None
    return py_rows


# The controller kernels: (key, our call, Pinocchio call, the target ratio ours/pin).
CONTROLLER_ROWS = (
    ("ID", "inverse_dynamics(q, dq, ddq)", "rnea(q, v, a)", 0.2),
    ("NLE", "bias(q, dq)", "nonLinearEffects(q, v)", 0.2),
    ("FD", "forward_dynamics(q, dq, tau)", "aba(q, v, tau)", 0.3),
    ("FK", "fk(q, ee 0)", "forwardKinematics(q) + updateFramePlacement(ee 0)", 0.2),
    ("JdotQdot", "jdot_qdot(q, dq, ee 0)",
     "forwardKinematics(q, v, 0) + getFrameClassicalAcceleration(ee 0, LOCAL_WORLD_ALIGNED)", 0.3),
    ("ID_derivatives", "inverse_dynamics_derivatives(q, dq, ddq)", "computeRNEADerivatives(q, v, a)", 0.3),
    ("FD_derivatives", "forward_dynamics_derivatives(q, dq, tau)", "computeABADerivatives(q, v, tau)", 0.3),
)


def controller_rows(summary):
    """Rows key | ours | pin | pin-lib | our call | pin call | target, ns (None where missing)."""
    ours, pin, lib = (summary.get(h, {}) for h in ("ours", "pin", "pin-lib"))
    return [(k, _med(ours, k), _med(pin, k), _med(lib, k), oc, pc, target)
            for k, oc, pc, target in CONTROLLER_ROWS if k in ours or k in pin]
