"""The generated base parameters (codegen/derive/base_parameters.py), compiled and called via ctypes.

* base_regressor(q, dq, ddq, p) . base_params(p) = inverse_dynamics(q, dq,
  ddq, p) at random states for random physically valid inertial and
  friction parameters with the default geometry (the combinations are fixed
  for it), to 1e-10 relative;
* NBASE = the numerical rank of the full regressor stacked over random
  states (other states than the generator's), and the base regressor has
  full column rank; its columns are those of Y that base_regressor_column
  names (to rounding);
* textbook sets: the planar 2R and 3R arms and a SCARA-like RRP arm against
  Khalil and Dombre's grouping rules (2002, sec. 12.4.2) written as exact
  expressions of the link lengths: same number of base parameters and the
  same span of standard-parameter combinations; the names the generator
  writes are the textbook ones where its column choice is the textbook's.
"""
from __future__ import annotations

import numpy as np
import pytest

from krang_kernels.base_columns import numerical_rank
from codegen.emit.abi import regressor_columns
from reference.abi_ctypes import build, write_params
from reference.ctrl_cases import TESTS, cases, library, param_sets, states
from reference.reference_fk import random_physical_params

pytestmark = pytest.mark.builds

_LIBS: dict = {}
TEXTBOOK = ("planar2r", "planar3r", "scara_rrp")


def textbook_library(name, tmp_path_factory):
    if name not in _LIBS:
        if name == "planar2r":
            _LIBS[name] = library(name, tmp_path_factory)
        else:
            from codegen.read.model import load_model

            path = TESTS / "models" / f"{name}.toml"
            model = load_model(path)
            out = tmp_path_factory.mktemp(f"base_{name}")
            params = write_params(model, random_physical_params(model, np.random.default_rng(7)), out / "p.toml")
            _LIBS[name] = build(path, params, out)
    return _LIBS[name]


def _default(lib):
    p = np.empty(len(lib.model.param_names))
    getattr(lib.lib, lib.abi.prefix + "default_params")(p.ctypes.data_as(__import__("ctypes").POINTER(
        __import__("ctypes").c_double)))
    return p


def _same_geometry(lib, sets):
    """The parameter sets with the library's default geometry and g (random inertia and friction)."""
    p0 = _default(lib)
    first = regressor_columns(lib.model)[0]
    out = [("default", p0)]
    for label, p in sets:
        p = p.copy()
        p[:first] = p0[:first]
        out.append((label, p))
    return out


def _base_column(lib, i):
    return getattr(lib.lib, lib.abi.prefix + "base_regressor_column")(i)


def _name(lib, i):
    import ctypes

    f = getattr(lib.lib, lib.abi.prefix + "base_param_name")
    f.restype = ctypes.c_char_p
    return f(i).decode()


@pytest.mark.parametrize("name", cases("mini", "tree", "pendulum", "planar2r", "pr", "krang"))
def test_base_regressor_times_base_params_is_inverse_dynamics(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    assert lib.nbase is not None and 0 < lib.nbase <= len(regressor_columns(lib.model))
    qs, dqs, ddqs = states(lib.model.ndof, n=8)
    worst = 0.0
    for label, p in _same_geometry(lib, param_sets(name, n_random=3)):
        beta = lib.base_params(p)
        for q, dq, ddq in zip(qs, dqs, ddqs):
            tau = lib.inverse_dynamics(q, dq, ddq, p)
            err = np.max(np.abs(lib.base_regressor(q, dq, ddq, p) @ beta - tau)) / (1 + np.max(np.abs(tau)))
            worst = max(worst, err)
            assert err <= 1e-10, f"[{label}] rel err {err:.1e}"
    print(f"\n{name}: NBASE {lib.nbase} of NPI {len(regressor_columns(lib.model))}, max rel err {worst:.1e}")


@pytest.mark.parametrize("name", cases("tree", "planar2r", "pr", "krang"))
def test_nbase_is_the_rank_of_the_stacked_regressor(name, tmp_path_factory):
    lib = library(name, tmp_path_factory)
    p = _default(lib)
    n = max(30, 3 * len(regressor_columns(lib.model)) // lib.model.ndof)
    Ys, Ybs = [], []
    for q, dq, ddq in zip(*states(lib.model.ndof, n=n, seed=12)):
        Y, Yb = lib.regressor(q, dq, ddq, p), lib.base_regressor(q, dq, ddq, p)
        cols = [_base_column(lib, i) for i in range(lib.nbase)]
        # the same columns (to rounding: the emitter's CSE of the two kernels differs)
        np.testing.assert_allclose(Yb, Y[:, cols], rtol=1e-12, atol=1e-12 * (1 + np.max(np.abs(Y))))
        Ys.append(Y)
        Ybs.append(Yb)
    assert numerical_rank(np.vstack(Ys)) == lib.nbase
    assert numerical_rank(np.vstack(Ybs)) == lib.nbase  # full column rank
    assert _base_column(lib, -1) == -1 and _base_column(lib, lib.nbase) == -1


def _khalil(name, l1, l2):
    """Khalil and Dombre's grouped base parameters (2002, sec. 12.4.2) as {standard name: coefficient}."""
    if name in ("planar2r", "planar3r"):
        # parallel revolute z axes, gravity in the plane. planar2r: frame 3 a
        # tool frame welded at l2 along x_2 (its inertia joins link 2);
        # planar3r: link 3 rotates about z at l2 along x_2.
        sets = [
            {"ZZ_1": 1, "Ia_1": 1, "m_2": l1 ** 2, "m_3": l1 ** 2},
            {"MX_1": 1, "m_2": l1, "m_3": l1},
            {"MY_1": 1},
            {"Ia_2": 1},
        ]
        if name == "planar2r":
            sets += [{"ZZ_2": 1, "ZZ_3": 1, "MX_3": 2 * l2, "m_3": l2 ** 2},
                     {"MX_2": 1, "MX_3": 1, "m_3": l2}, {"MY_2": 1, "MY_3": 1}]
        else:
            sets += [{"ZZ_2": 1, "m_3": l2 ** 2}, {"MX_2": 1, "m_3": l2}, {"MY_2": 1},
                     {"ZZ_3": 1}, {"MX_3": 1}, {"MY_3": 1}, {"Ia_3": 1}]
        frames = ("1", "2") if name == "planar2r" else ("1", "2", "3")
    else:
        # RRP, every axis along z, gravity along -z: the revolute links act
        # through ZZ, MX, MY only; the prismatic link's inertia joins link 2
        # (it does not rotate relative to it) and its mass acts alone on joint 3
        sets = [
            {"ZZ_1": 1, "Ia_1": 1, "m_2": l1 ** 2, "m_3": l1 ** 2},
            {"ZZ_2": 1, "ZZ_3": 1, "MX_3": 2 * l2, "m_3": l2 ** 2},
            {"MX_2": 1, "MX_3": 1, "m_3": l2},
            {"MY_2": 1, "MY_3": 1},
            {"Ia_2": 1}, {"m_3": 1}, {"Ia_3": 1},
        ]
        frames = ("1", "2", "3")
    sets += [{f"{k}_{f}": 1} for f in frames for k in ("Fv", "Fc")]
    return sets


@pytest.mark.parametrize("name", TEXTBOOK)
def test_textbook_base_sets(name, tmp_path_factory):
    lib = textbook_library(name, tmp_path_factory)
    model, p = lib.model, _default(lib)
    names = [model.param_names[i] for i in regressor_columns(model)]
    val = {n: p[model.param_names.index(n)] for n in model.geometry}
    expected = _khalil(name, val["l1"], val["l2"])
    K = np.zeros((len(expected), len(names)))
    for i, row in enumerate(expected):
        for n, c in row.items():
            K[i, names.index(n)] = c
    assert lib.nbase == len(expected) == numerical_rank(K)
    # the generated combinations, recovered from base_params at unit vectors of pi
    first = regressor_columns(model)[0]
    G = np.zeros((lib.nbase, len(names)))
    for k in range(len(names)):
        e = p.copy()
        e[first:] = 0
        e[first + k] = 1
        G[:, k] = lib.base_params(e)
    assert numerical_rank(np.vstack([K, G])) == lib.nbase  # the same span
    text = [_name(lib, i) for i in range(lib.nbase)]
    print(f"\n{name}: " + "; ".join(text))
    assert "ZZ_1 + Ia_1 + l1**2*m_2" in text[[t.startswith("ZZ_1") for t in text].index(True)]


@pytest.mark.robots
def test_floating_base(tmp_path):
    """The tiny floating robot (tests/models/floating_tiny.urdf, its own floating root joint): Yb .
    base_params = inverse_dynamics at random base poses and velocities, NBASE = the rank of
    the stacked regressor, and its inertial columns have the rank of Pinocchio's
    computeJointTorqueRegressor on the free-flyer model (the same states)."""
    pin = pytest.importorskip("pinocchio")
    from reference.floating_reference import PinFreeFlyer, random_base_states
    from tests.test_floating_base import STRICT, TINY, TINY_EES, cli
    from reference.abi_ctypes import Library, compile_shared
    from codegen.read.urdf import load_urdf

    robot = load_urdf(TINY, name="tiny", end_effectors=TINY_EES, snap=False, floating_base=False)
    assert robot.model.floating_base
    c = cli(TINY, tmp_path, "tiny", TINY_EES)
    lib = Library(robot.model, compile_shared(c, tmp_path / "libkernels.so", STRICT), "tiny")
    model, p0 = robot.model, np.array(robot.values)
    assert lib.nbase is not None
    rng = np.random.default_rng(21)
    p = random_physical_params(model, rng)
    first = regressor_columns(model)[0]
    p[:first] = p0[:first]
    ref = PinFreeFlyer(TINY, model, p, True)
    qs, dqs = random_base_states(rng, model, 40)
    inertial = [k for k, i in enumerate(regressor_columns(model)) if model.param_names[i][:2] not in ("Ia", "Fv", "Fc")]
    beta, Ys, ours, theirs = lib.base_params(p), [], [], []
    for q, dq in zip(qs, dqs):
        ddq = rng.uniform(-5, 5, size=model.ndof)
        tau = lib.inverse_dynamics(q, dq, ddq, p)
        assert np.max(np.abs(lib.base_regressor(q, dq, ddq, p) @ beta - tau)) <= 1e-10 * (1 + np.max(np.abs(tau)))
        Y = lib.regressor(q, dq, ddq, p)
        Ys.append(Y)
        ours.append(Y[:, inertial])
        vp, ap = np.zeros(model.ndof), np.zeros(model.ndof)
        vp[ref.perm], ap[ref.perm] = dq, ddq
        theirs.append(np.array(pin.computeJointTorqueRegressor(ref.pm, ref.data, ref.q(q), vp, ap)))
    assert numerical_rank(np.vstack(Ys)) == lib.nbase
    assert numerical_rank(np.vstack(ours)) == numerical_rank(np.vstack(theirs))
    print(f"\nfloating tiny: NBASE {lib.nbase}, inertial rank {numerical_rank(np.vstack(ours))} "
          f"(Pinocchio {numerical_rank(np.vstack(theirs))})")
