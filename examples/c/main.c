/* Krang's dynamics from C: inverse dynamics and an end-effector velocity.
 *
 *   tau = A(q) ddq + C(q, dq) dq + Q(q)      (joint torques, friction apart)
 *   v   = J_left(q) dq                       (left hand, world axes: linear, angular)
 *
 * Build from the repository root (no CMake needed):
 *   cc -O2 -std=c99 -I generated examples/c/main.c generated/krang_kernels.c -lm
 * or against the installed library (CMake: krang_kernels::krang_kernels, see
 * CMakeLists.txt here; pkg-config: `pkg-config --cflags --libs krang_kernels`).
 *
 * Prints "tau i value" and "v k value" lines (tests/test_c_examples.py checks
 * them against Pinocchio). */
#include <stdio.h>

#include "krang_kernels.h"

enum { N = KRANG_NDOF };

int main(void)
{
    double q[N], dq[N], ddq[N], p[KRANG_NP];
    /* Outputs are row-major: A[i * N + j] is A(i, j); J is 6 x N, linear rows first. */
    double A[N * N], C[N * N], Q[N], J[6 * N], tau[N], v[6];

    krang_default_params(p); /* or identified values, in the order krang_param_name(i) gives */
    for (int i = 0; i < N; ++i) {
        q[i] = 0.1 * (i + 1) - 0.8;
        dq[i] = 0.3 - 0.05 * i;
        ddq[i] = 1.0;
    }

    krang_compute_A(q, p, A);
    krang_compute_C(q, dq, p, C);
    krang_compute_Q(q, p, Q);
    krang_jacobian(q, p, KRANG_LEFT, KRANG_WORLD, J);

    for (int i = 0; i < N; ++i) {
        tau[i] = Q[i];
        for (int j = 0; j < N; ++j)
            tau[i] += A[i * N + j] * ddq[j] + C[i * N + j] * dq[j];
    }
    for (int k = 0; k < 6; ++k) {
        v[k] = 0.0;
        for (int j = 0; j < N; ++j)
            v[k] += J[k * N + j] * dq[j];
    }

    for (int i = 0; i < N; ++i)
        printf("tau %d %.17g  (%s)\n", i, tau[i], krang_joint_name(i));
    for (int k = 0; k < 6; ++k)
        printf("v %d %.17g\n", k, v[k]);
    return 0;
}
