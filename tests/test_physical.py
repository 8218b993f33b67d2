"""Physical validity of parameter vectors (codegen/read/physical.py).

Valid links are built from their physical description (mass, centre of mass,
principal moments, a rotation) with the parallel axis theorem written out
here; invalid ones break exactly one physical condition.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from codegen.read.model import ModelError, load_model, load_param_values
from codegen.read.physical import check_params, is_physical

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[1]
INERTIAL = ("m", "MX", "MY", "MZ", "XX", "XY", "XZ", "YY", "YZ", "ZZ")


def rot(axis, angle):
    """Rodrigues' formula."""
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def link(m, S, moments, R=np.eye(3)):
    """The 10 standard parameters: J = I_c + m (|S|^2 1 - S S^T) about the origin."""
    S = np.asarray(S, float)
    Ic = R @ np.diag(moments) @ R.T
    J = Ic + m * (S @ S * np.eye(3) - np.outer(S, S))
    return [m, *(m * S), J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2]]


def vector(links, extra=()):
    """names and values for links {key: 10 values}, plus (name, value) extras."""
    names, values = ["L1", "g"], [-0.3, 9.81]  # geometry may be negative; it is not checked
    for key, vals in links.items():
        names += [f"{n}_{key}" for n in INERTIAL]
        values += list(vals)
    for n, v in extra:
        names.append(n)
        values.append(v)
    return names, values


R1 = rot([1, 2, 3], 0.7)
VALID = {
    "box": link(2.0, [0.1, -0.2, 0.3], [0.02, 0.03, 0.04], R1),
    "rod (triangle equality)": link(1.0, [0.0, 0.0, 0.5], [0.0, 0.1, 0.1], R1),
    "point mass": link(3.0, [0.2, 0.1, -0.4], [0.0, 0.0, 0.0]),
    "thin disc (I3 = I1 + I2)": link(0.5, [0.3, 0.0, 0.0], [0.01, 0.01, 0.02], rot([0, 1, 1], 1.1)),
    "massless link": [0.0] * 10,
    "heavy and far": link(500.0, [3.0, -4.0, 12.0], [10.0, 20.0, 25.0], R1),
}


@pytest.mark.parametrize("case", list(VALID))
def test_valid_links(case):
    names, values = vector({"k": VALID[case]}, [("Ia_k", 0.0), ("Fv_k", 0.1), ("Fc_k", 0.0)])
    check_params(names, values)
    check_params(names, np.array(values))  # any sequence or array
    assert is_physical(names, values)


def test_rounded_values_pass():
    """Parameters printed to 6 significant digits still pass (relative tolerance)."""
    names, values = vector({"k": link(3.0, [0.2, 0.1, -0.4], [0.0, 0.0, 0.0])})
    check_params(names, [float(f"{v:.6g}") for v in values])


def invalid(**change):
    """A valid box link with some of its physical description changed."""
    spec = dict(m=2.0, S=[0.1, -0.2, 0.3], moments=[0.02, 0.03, 0.04], R=R1)
    spec.update(change)
    return link(**spec)


def edit(vals, **entries):
    vals = list(vals)
    for n, v in entries.items():
        vals[INERTIAL.index(n)] = v
    return vals


INVALID = {
    "negative mass": (edit(VALID["box"], m=-2.0), ["mass", "negative"]),
    "negative mass, negated link": ([-v for v in VALID["box"]], ["mass", "negative"]),
    "massless with a first moment": (edit([0.0] * 10, MX=0.1), ["mass is 0"]),
    "massless with an inertia": (edit([0.0] * 10, XX=0.1, YY=0.1, ZZ=0.1), ["mass is 0"]),
    "negative principal moment": (invalid(moments=[-0.01, 0.03, 0.04]), ["positive semidefinite"]),
    "triangle inequality": (invalid(moments=[0.01, 0.01, 0.03]), ["triangle"]),
    "inertia about the origin too small for the offset":
        (edit(VALID["box"], XX=0.01, YY=0.01, ZZ=0.01, XY=0.0, XZ=0.0, YZ=0.0), ["centre of mass"]),
    "negative diagonal": (edit(VALID["box"], XX=-1.0), ["centre of mass"]),
}


@pytest.mark.parametrize("case", list(INVALID))
def test_invalid_links(case):
    vals, words = INVALID[case]
    names, values = vector({"good": VALID["box"], "bad one": vals})
    with pytest.raises(ValueError) as info:
        check_params(names, values)
    msg = str(info.value)
    assert "'bad one'" in msg, msg  # names the link
    for w in words:
        assert w in msg, (msg, w)
    assert not is_physical(names, values)


@pytest.mark.parametrize("n, what", [("Ia", "rotor inertia"), ("Fv", "viscous"), ("Fc", "Coulomb")])
def test_negative_actuator_parameters(n, what):
    names, values = vector({"3": VALID["box"]}, [(f"{n}_3", -1e-6)])
    with pytest.raises(ValueError, match=f"link '3': {what}.*{n}_3"):
        check_params(names, values)


def test_not_finite_and_wrong_length():
    names, values = vector({"k": VALID["box"]})
    for bad in (float("nan"), float("inf")):
        v = list(values)
        v[5] = bad
        with pytest.raises(ValueError, match="not finite"):
            check_params(names, v)
    with pytest.raises(ValueError, match="expected"):
        check_params(names, values[:-1])


def test_incomplete_groups_are_not_links():
    """A name that only looks like a parameter (no full set of 10) is not checked."""
    check_params(["m_x", "Ia_y"], [-1.0, -1.0])


def test_committed_parameter_files_are_physical():
    for model, params in [(ROOT / "models" / "krang.toml", ROOT / "models" / "krang_params.toml"),
                          (ROOT / "tests" / "models" / "mini.toml", ROOT / "tests" / "models" / "mini_params.toml")]:
        m = load_model(model)
        check_params(m.param_names, load_param_values(params, m))


def test_load_param_values_refuses_unphysical(tmp_path):
    m = load_model(ROOT / "tests" / "models" / "mini.toml")
    text = (ROOT / "tests" / "models" / "mini_params.toml").read_text()
    assert "\nm_a = 1.2\n" in text
    bad = tmp_path / "p.toml"
    bad.write_text(text.replace("\nm_a = 1.2\n", "\nm_a = -1.2\n"))
    with pytest.raises(ModelError, match=r"p\.toml: physically impossible parameters: link 'a': mass"):
        load_param_values(bad, m)
