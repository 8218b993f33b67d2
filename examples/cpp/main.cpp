// Krang's dynamics from C++ with Eigen: the kernels write row-major arrays,
// which Eigen::Map views in place (no copy) as fixed-size row-major matrices.
//
//   cc -O2 -std=c99 -I generated -c generated/krang_kernels.c -o krang_kernels.o
//   c++ -O2 -std=c++17 -I generated -I EIGEN_INCLUDE examples/cpp/main.cpp krang_kernels.o -o example_cpp
//
// (compile the generated C as C, then link; the header has extern "C").
// Same q, dq, ddq as examples/c/main.c and the same "tau"/"v" lines, plus
// forward dynamics: ddq back from tau by a Cholesky solve of A.
#include <Eigen/Dense>
#include <array>
#include <cstdio>

#include "krang_kernels.h"

constexpr int N = KRANG_NDOF;
using MatN = Eigen::Matrix<double, N, N, Eigen::RowMajor>;
using Jac = Eigen::Matrix<double, 6, N, Eigen::RowMajor>;
using VecN = Eigen::Matrix<double, N, 1>;

int main()
{
    std::array<double, KRANG_NP> p;
    krang_default_params(p.data());

    VecN q, dq, ddq;
    for (int i = 0; i < N; ++i) {
        q[i] = 0.1 * (i + 1) - 0.8;
        dq[i] = 0.3 - 0.05 * i;
        ddq[i] = 1.0;
    }

    // Plain buffers (e.g. a controller's preallocated storage) viewed by Eigen.
    double A_buf[N * N], C_buf[N * N], J_buf[6 * N];
    Eigen::Map<MatN> A(A_buf), C(C_buf);
    Eigen::Map<Jac> J(J_buf);
    VecN Q;  // a column vector's storage is the same in either order
    krang_compute_A(q.data(), p.data(), A.data());
    krang_compute_C(q.data(), dq.data(), p.data(), C.data());
    krang_compute_Q(q.data(), p.data(), Q.data());
    krang_jacobian(q.data(), p.data(), KRANG_LEFT, KRANG_WORLD, J.data());

    const VecN tau = A * ddq + C * dq + Q;
    const Eigen::Matrix<double, 6, 1> v = J * dq;
    const VecN ddq_back = A.llt().solve(tau - C * dq - Q);

    for (int i = 0; i < N; ++i)
        std::printf("tau %d %.17g\n", i, tau[i]);
    for (int k = 0; k < 6; ++k)
        std::printf("v %d %.17g\n", k, v[k]);
    std::printf("ddq_error %.3g\n", (ddq_back - ddq).cwiseAbs().maxCoeff());
    return 0;
}
