"""iLQR on Panda (example-robot-data): reach an end-effector pose within the torque limits, with
the analytical derivatives of the dynamics, then with finite differences for comparison.

    python -m examples.ilqr            (from the repository root; `make examples`)
    python -m examples.ilqr --short    (short horizon, few iterations: what CI runs)

The module comes from the URDF in one call, codegen.import_urdf (built on first use, then cached):
9 joints (7 arm, 2 fingers; the second finger mimics the first in the URDF, read as a joint of its
own with mimic="independent", as Pinocchio reads it by default), viscous friction from the URDF's
<dynamics>. The state is x = (q, v), the control u the joint torques, the step semi-implicit
Euler, v+ = v + dt a(q, v, u), q+ = q + dt v+ (fixed base: nq = nv), with a = forward_dynamics.
Its Jacobians need d a/dq, d a/dv and d a/du = A^-1, which forward_dynamics_derivatives returns in one call (batched
over the horizon); the comparison run takes them by central differences of forward_dynamics.

iLQR (Li and Todorov 2004) with the regularization, line search and value update of Tassa, Erez and
Todorov 2012; the torque limits (JOINT_LIMITS["effort"]) are box constraints on the controls,
solved at every step by projected Newton (Tassa, Mansard and Todorov 2014, control-limited DDP:
clamped directions get no feedback; without that paper's line search inside the box QP). Cost:
torques (scaled by their limits), velocities and the fingers' opening along the way; at the end
the hand's position, orientation (|R - R*|_F^2) and velocity (arrive at rest). Prints the cost and
time per iteration of both runs (in this Python loop the backward pass dominates an iteration; the
derivatives' own time is in parentheses), the derivatives' agreement, and saves a PNG of the
optimized trajectory (matplotlib: `pip install krang-kernels[examples]`; else skipped, one line).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from examples.plotting import pyplot, save
from reference.robot_data import robots_dir

EE = "panda_hand_tcp"
Q0 = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])  # Panda's "ready" pose
Q_GOAL = np.array([1.2, 0.4, -0.3, -1.5, 0.5, 2.2, -0.3, 0.02, 0.02])  # fk of this is the target pose
W_U, W_V, W_FINGER = 1e-2, 1e-2, 1e3  # running cost weights (per second)
W_POS, W_ROT, W_VEL = 1e3, 1e2, 1e1  # terminal cost weights
FD_H = 1e-6  # central differences: truncation O(h^2), rounding O(eps / h)


def panda_urdf() -> Path:
    """Panda's URDF as example-robot-data installs it (with Pinocchio, `make setup`)."""
    return robots_dir() / "panda_description" / "urdf" / "panda.urdf"


def load_robot():
    import codegen

    # panda_finger_joint2 mimics panda_finger_joint1: a coordinate of its own here
    return codegen.import_urdf(panda_urdf(), end_effectors=[EE], name="panda", mimic="independent")


class Problem:
    """Dynamics, cost and their derivatives; x = (q, v), u = tau, N steps of dt."""

    def __init__(self, m, horizon, dt):
        self.m, self.p, self.n, self.N, self.dt = m, m.default_params(), m.N_DOF, int(round(horizon / dt)), dt
        self.umax = np.asarray(m.JOINT_LIMITS["effort"], dtype=float)
        self.target = m.fk(Q_GOAL, EE, self.p)
        self.wq = np.where(np.array(["finger" in j for j in m.JOINT_NAMES]), W_FINGER, 0.0)
        self.lxx = dt * np.diag(np.concatenate([self.wq, np.full(self.n, W_V)]))  # constant Hessians
        self.luu = dt * W_U * np.diag(1 / self.umax ** 2)

    def step(self, x, u):
        n, dt = self.n, self.dt
        v = x[n:] + dt * self.m.forward_dynamics(x[:n], x[n:], u, self.p)
        return np.concatenate([x[:n] + dt * v, v])

    def running(self, x, u):
        """l, l_x, l_u (l_xx, l_uu are constant: self.lxx, self.luu)."""
        n, dt, s = self.n, self.dt, u / self.umax
        e = x[:n] - Q0
        l = 0.5 * dt * (W_U * s @ s + W_V * x[n:] @ x[n:] + self.wq @ (e * e))
        return l, dt * np.concatenate([self.wq * e, W_V * x[n:]]), dt * W_U * s / self.umax

    def terminal(self, x, derivatives=True):
        """Gauss-Newton on the residual r = (sqrt(W_POS) (p - p*), sqrt(W_ROT) (R - R*)): with the world
        Jacobian J (linear rows first), dp/dq = J_lin and dR/dq_j = [J_ang,j]x R."""
        n, m = self.n, self.m
        T = m.fk(x[:n], EE, self.p)
        r = np.concatenate([np.sqrt(W_POS) * (T[:3, 3] - self.target[:3, 3]),
                            np.sqrt(W_ROT) * (T[:3, :3] - self.target[:3, :3]).T.ravel()])
        cost = 0.5 * (r @ r + W_VEL * x[n:] @ x[n:])
        if not derivatives:
            return cost
        J = m.jacobian(x[:n], EE, "world", self.p)
        dR = np.cross(J[3:].T[:, None, :], T[:3, :3].T[None, :, :])  # [j, column, row]
        Jr = np.vstack([np.sqrt(W_POS) * J[:3], np.sqrt(W_ROT) * dR.reshape(n, 9).T])
        Vx = np.concatenate([Jr.T @ r, W_VEL * x[n:]])
        Vxx = np.zeros((2 * n, 2 * n))
        Vxx[:n, :n], Vxx[n:, n:] = Jr.T @ Jr, W_VEL * np.eye(n)
        return cost, Vx, Vxx

    def rollout(self, x0, U):
        X = np.empty((self.N + 1, 2 * self.n))
        X[0] = x0
        for k in range(self.N):
            X[k + 1] = self.step(X[k], U[k])
        return X

    def cost(self, X, U):
        return sum(self.running(x, u)[0] for x, u in zip(X, U)) + self.terminal(X[-1], False)

    def linearize(self, X, U, da):
        """f_x, f_u of every step from (d a/dq, d a/dv, d a/du) of the whole horizon at once, and the
        time (s) `da` took."""
        n, dt, eye = self.n, self.dt, np.eye(self.n)
        t0 = time.perf_counter()
        aq, av, au = da(self.m, self.p, X[:-1, :n], X[:-1, n:], U)
        t_der = time.perf_counter() - t0
        fx = np.empty((self.N, 2 * n, 2 * n))
        fx[:, n:, :n], fx[:, n:, n:] = dt * aq, eye + dt * av  # v+
        fx[:, :n, :] = dt * fx[:, n:, :]  # q+ = q + dt v+
        fx[:, :n, :n] += eye
        fu = np.concatenate([dt * dt * au, dt * au], axis=1)
        return fx, fu, t_der


def analytic(m, p, Q, V, U):
    return m.forward_dynamics_derivatives(Q, V, U, p)


def finite_differences(m, p, Q, V, U):
    """Central differences of forward_dynamics in q, v and tau: 6 n calls per node, one batch."""
    N, n = Q.shape
    E = np.concatenate([np.eye(n), -np.eye(n)]) * FD_H  # (2n, n): +h e_j then -h e_j
    args = [np.repeat(a[:, None, :], 6 * n, axis=1) for a in (Q, V, U)]
    for i, a in enumerate(args):
        a[:, 2 * n * i:2 * n * (i + 1)] += E
    acc = m.forward_dynamics(*(a.reshape(-1, n) for a in args), p).reshape(N, 3, 2, n, n)
    d = (acc[:, :, 0] - acc[:, :, 1]) / (2 * FD_H)  # [node, argument, j, i] = d a_i / d x_j
    return tuple(np.swapaxes(d[:, i], 1, 2) for i in range(3))


def box_qp(H, g, lo, hi, iters=20):
    """min 1/2 k'Hk + g'k on lo <= k <= hi by projected Newton (Bertsekas 1982; Tassa, Mansard and
    Todorov 2014, Alg. 1): Newton steps on the free directions, the clamped ones held at their
    bound. Returns k and the free set."""
    k = np.clip(-np.linalg.solve(H, g), lo, hi)
    for _ in range(iters):
        grad = g + H @ k
        free = ~(((k <= lo) & (grad > 0)) | ((k >= hi) & (grad < 0)))  # at a bound, pushing outwards
        if not free.any():
            break
        new = k.copy()
        new[free] = np.clip(k[free] - np.linalg.solve(H[np.ix_(free, free)], grad[free]), lo[free], hi[free])
        if np.allclose(new, k, rtol=0, atol=1e-12):
            break
        k = new
    return k, free


def backward(pb, X, U, fx, fu, mu):
    """Tassa, Erez and Todorov 2012, eq. (5), (10), (11): Q's expansion, the gains (here from the box
    QP), the value's update; mu regularizes Q_uu. None if Q_uu + mu I is not positive definite."""
    N, n = pb.N, pb.n
    k, K = np.zeros((N, n)), np.zeros((N, n, 2 * n))
    _, Vx, Vxx = pb.terminal(X[-1])
    for t in range(N - 1, -1, -1):
        _, lx, lu = pb.running(X[t], U[t])
        A, B = fx[t], fu[t]
        Qx, Qu = lx + A.T @ Vx, lu + B.T @ Vx
        Qxx, Quu, Qux = pb.lxx + A.T @ Vxx @ A, pb.luu + B.T @ Vxx @ B, B.T @ Vxx @ A
        H = Quu + mu * np.eye(n)
        try:
            np.linalg.cholesky(H)
        except np.linalg.LinAlgError:
            return None
        k[t], free = box_qp(H, Qu, -pb.umax - U[t], pb.umax - U[t])
        if free.any():
            K[t][free] = -np.linalg.solve(H[np.ix_(free, free)], Qux[free])
        Vx = Qx + K[t].T @ Quu @ k[t] + K[t].T @ Qu + Qux.T @ k[t]
        Vxx = Qxx + K[t].T @ Quu @ K[t] + K[t].T @ Qux + Qux.T @ K[t]
        Vxx = 0.5 * (Vxx + Vxx.T)
    return k, K


def ilqr(pb, x0, U, da, iters, label, tol=1e-7):
    """Returns X, U, the costs per iteration and the times (whole iteration, derivatives) in s."""
    X, mu = pb.rollout(x0, U), 1e-6
    costs, times = [pb.cost(X, U)], []
    print(f"{label}\n  iter        cost    step       mu   ms/iter  (derivatives)")
    for it in range(1, iters + 1):
        t0 = time.perf_counter()
        fx, fu, t_der = pb.linearize(X, U, da)
        while (res := backward(pb, X, U, fx, fu, mu)) is None:
            mu *= 10
        k, K = res
        for alpha in (1.0, 0.5, 0.25, 0.1, 0.03, 0.01):  # line search on the feed-forward term
            Xn, Un = np.empty_like(X), np.empty_like(U)
            Xn[0] = x0
            try:
                with np.errstate(over="ignore", invalid="ignore"):  # a trial step may diverge
                    for t in range(pb.N):
                        Un[t] = np.clip(U[t] + alpha * k[t] + K[t] @ (Xn[t] - X[t]), -pb.umax, pb.umax)
                        Xn[t + 1] = pb.step(Xn[t], Un[t])
                    c = pb.cost(Xn, Un)
            except ValueError:  # it did: forward_dynamics refuses non-finite input
                c = np.inf
            if c < costs[-1]:
                break
        else:  # no decrease: more regularization, same point
            mu *= 10
            times.append((time.perf_counter() - t0, t_der))
            print(f"  {it:4d}  no decrease: mu -> {mu:.1e}")
            continue
        X, U, mu = Xn, Un, max(mu / 10, 1e-9)
        costs.append(c)
        times.append((time.perf_counter() - t0, t_der))
        print(f"  {it:4d} {c:11.5e} {alpha:7.2f} {mu:8.1e} {1e3 * times[-1][0]:9.2f}  ({1e3 * t_der:.2f})")
        if costs[-2] - c < tol * costs[-2]:
            break
    return X, U, np.array(costs), np.array(times)


def plot(pb, X, U, path):
    plt = pyplot()
    if plt is None:
        return
    t, n = np.arange(pb.N + 1) * pb.dt, pb.n
    dist = [np.linalg.norm(pb.m.fk(x[:n], EE, pb.p)[:3, 3] - pb.target[:3, 3]) for x in X]
    fig, ax = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    ax[0].plot(t, X[:, :7])
    ax[0].legend([f"joint {i + 1}" for i in range(7)], fontsize=7, ncol=4)
    ax[0].set_ylabel("arm joints q (rad)")
    ax[0].set_title("Panda, iLQR: reaching a pose within the torque limits")
    ax[1].step(t[:-1], U / pb.umax, where="post")
    ax[1].set_ylabel("torque / limit (fingers' too)")
    ax[1].set_ylim(-1.1, 1.1)
    ax[2].plot(t, dist)
    ax[2].set_ylabel("hand to target (m)")
    ax[2].set_xlabel("t (s)")
    save(fig, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--short", action="store_true", help="0.6 s instead of 0.8 s, 20 ms steps (CI)")
    ap.add_argument("--png", type=Path, default=Path("build/examples/ilqr.png"))
    args = ap.parse_args(argv)
    m = load_robot()
    pb = Problem(m, 0.6 if args.short else 0.8, 0.02)  # the shorter the horizon, the more the limits bind
    iters = 80 if args.short else 200
    x0 = np.concatenate([Q0, np.zeros(pb.n)])
    hold = m.inverse_dynamics(Q0, np.zeros(pb.n), np.zeros(pb.n), pb.p)  # first guess: gravity compensation
    U0 = np.tile(np.clip(hold, -pb.umax, pb.umax), (pb.N, 1))
    print(f"Panda ({pb.n} joints), {pb.N} steps of {1e3 * pb.dt:.0f} ms, torque limits {pb.umax} N m")
    runs = {name: ilqr(pb, x0, U0, da, iters, label) for name, da, label in [
        ("analytic", analytic, "analytic derivatives (forward_dynamics_derivatives):"),
        ("fd", finite_differences, f"finite differences (central, h = {FD_H:g}, forward_dynamics):")]}
    (X, U, ca, ta), (_, _, cf, tf) = runs["analytic"], runs["fd"]
    an = analytic(m, pb.p, X[:-1, :pb.n], X[:-1, pb.n:], U)
    fd = finite_differences(m, pb.p, X[:-1, :pb.n], X[:-1, pb.n:], U)
    rel = [np.abs(f - a).max() / np.abs(a).max() for a, f in zip(an, fd)]
    T = m.fk(X[-1, :pb.n], EE, pb.p)
    cos = np.clip((np.trace(pb.target[:3, :3].T @ T[:3, :3]) - 1) / 2, -1, 1)
    print(f"iterations: analytic {len(ta)}, finite differences {len(tf)}")
    print(f"final cost: analytic {ca[-1]:.6e}, finite differences {cf[-1]:.6e} (initial {ca[0]:.6e})")
    print(f"time per iteration: analytic {1e3 * ta[:, 0].mean():.2f} ms, finite differences "
          f"{1e3 * tf[:, 0].mean():.2f} ms")
    print(f"derivatives per iteration: analytic {1e3 * ta[:, 1].mean():.3f} ms, finite differences "
          f"{1e3 * tf[:, 1].mean():.3f} ms ({tf[:, 1].mean() / ta[:, 1].mean():.1f}x; per node "
          f"{1e6 * ta[:, 1].mean() / pb.N:.1f} vs {1e6 * tf[:, 1].mean() / pb.N:.1f} us)")
    print("derivative max relative difference (FD vs analytic, optimized trajectory): "
          + ", ".join(f"{k} {e:.1e}" for k, e in zip(("dddq_dq", "dddq_dv", "Minv"), rel)))
    print(f"max relative difference: {max(rel):.3e}")
    print(f"final position error: {np.linalg.norm(T[:3, 3] - pb.target[:3, 3]):.3e} m, orientation error: "
          f"{np.arccos(cos):.3e} rad, final speed: {np.linalg.norm(X[-1, pb.n:]):.3e} rad/s")
    print(f"max torque / limit: {np.abs(U / pb.umax).max():.3e}")
    plot(pb, X, U, args.png)


if __name__ == "__main__":
    main()
