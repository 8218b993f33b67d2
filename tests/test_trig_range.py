"""The kernels' own vectorized sin/cos (generated sincos_q) over the whole
range of joint angles: exact quadrant boundaries, large angles where the
range reduction is hardest, and beyond 1e5 where libm takes over. Reference:
Pinocchio, which uses libm."""
import numpy as np
import pytest

kk = pytest.importorskip("krang_kernels")
from codegen.model import load_model  # noqa: E402
from tests.pin_reference import build_pin_model, pin_reference  # noqa: E402

MODEL = load_model(__import__("pathlib").Path(__file__).resolve().parents[1] / "models" / "krang.toml")


def _angles():
    rng = np.random.default_rng(7)
    k = np.arange(-40, 41)
    yield "multiples of pi/2", np.resize(k * np.pi / 2, (5, kk.N_DOF))
    yield "next to multiples of pi/4", np.resize(k * np.pi / 4 + 1e-9, (5, kk.N_DOF))
    for scale in (10.0, 1e3, 9.9e4, 1e5, 1.0000001e5, 1e7):
        yield f"|q| up to {scale:g}", rng.uniform(-scale, scale, (5, kk.N_DOF))


@pytest.mark.parametrize("label,qs", list(_angles()), ids=lambda v: v if isinstance(v, str) else "")
def test_kernels_match_pinocchio_over_the_angle_range(label, qs):
    p = kk.default_params()
    pm, _ = build_pin_model(MODEL, p)
    data = pm.createData()
    dq = np.linspace(-1, 1, kk.N_DOF)
    for q in qs:
        ref = pin_reference(pm, data, q, dq)
        for name, ours in (("A", kk.compute_A(q)), ("C", kk.compute_C(q, dq)), ("Q", kk.compute_Q(q)),
                           ("J_left_world", kk.jacobian(q, "left"))):
            err = np.abs(ours - ref[name]).max() / (1 + np.abs(ref[name]).max())
            assert err <= 1e-10, f"{label}: {name} off by {err:.2e} at q={q}"
