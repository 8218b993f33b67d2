// One XLA FFI handler for every robot's kernels (krang_kernels.jax): it calls a
// C kernel of the generated ABI (docs/c-abi.md: row-major doubles, caller-owned,
// `void NAME_f(const double *in..., [int...], double *out...)`) through the
// function address it receives as an attribute, once per state of a batch.
//
// Attributes (all int64; set by krang_kernels/jax/__init__.py, never by a user):
//   fn        the kernel's address in a library this process loaded
//   pattern   the C signature: 0 = `slots` pointers; 1 = (P, P, int, P);
//             2 = (P, P, P, int, P); 3 = (P, P, int, int, P); the contact kernels
//             (docs/contact-dynamics.md): 4 = constrained_dynamics
//             (P, P, P, P, int, double, double, double, P, P, P), 5 = its
//             derivatives (the same, six outputs), 6 = impulse_dynamics
//             (P, P, P, int, double, double, P, P), 7 = its derivatives (the
//             same, four outputs)
//   slots     one per C argument: k < 100 input buffer k, 100 + k output k,
//             200 + v the int constant v (an end-effector index, a frame),
//             1000 + 100 k + j element j of input k as a double, which must be
//             finite and >= 0 (a gain, a damping, a restitution), 3000 + k the
//             contact mask from input k's flags, each exactly 0 or 1 (bit j set
//             for flag j = 1); a value that fails is an error, not a call
//   in_sizes, out_sizes  the doubles of one state's argument
//   batch_fn  0, or the address of the kernel's batch form (pattern 0 only:
//             `void NAME_f_batch(int n, P in..., P out...)`, inputs and outputs
//             n states back to back, one parameter vector, its last input): a
//             batch of more than one state whose parameter rows are all equal
//             (vmap broadcasts an unmapped argument) is one call of it, which
//             evaluates several states per instruction (docs/c-abi.md);
//             otherwise the states are a loop over `fn`
// A buffer of in_sizes[k] doubles is shared by every state (vmap_method
// "expand_dims" leaves an unbatched argument with a leading 1: params);
// otherwise it holds B states back to back, B = the first output's size over
// out_sizes[0]. Sizes that fit neither are an error, never a read out of bounds.
#include <cstdint>
#include <cstring>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

constexpr int kMaxSlots = 16;
using P = void *;

void Invoke(int64_t fn, int64_t pattern, int n, P *a, const int *ints, const double *d) {
  switch (pattern) {
    case 1: reinterpret_cast<void (*)(P, P, int, P)>(fn)(a[0], a[1], ints[0], a[2]); return;
    case 2: reinterpret_cast<void (*)(P, P, P, int, P)>(fn)(a[0], a[1], a[2], ints[0], a[3]); return;
    case 3: reinterpret_cast<void (*)(P, P, int, int, P)>(fn)(a[0], a[1], ints[0], ints[1], a[2]); return;
    case 4:
      reinterpret_cast<void (*)(P, P, P, P, int, double, double, double, P, P, P)>(fn)(
          a[0], a[1], a[2], a[3], ints[0], d[0], d[1], d[2], a[4], a[5], a[6]);
      return;
    case 5:
      reinterpret_cast<void (*)(P, P, P, P, int, double, double, double, P, P, P, P, P, P, P)>(fn)(
          a[0], a[1], a[2], a[3], ints[0], d[0], d[1], d[2], a[4], a[5], a[6], a[7], a[8], a[9], a[10]);
      return;
    case 6:
      reinterpret_cast<void (*)(P, P, P, int, double, double, P, P)>(fn)(a[0], a[1], a[2], ints[0], d[0], d[1], a[3],
                                                                       a[4]);
      return;
    case 7:
      reinterpret_cast<void (*)(P, P, P, int, double, double, P, P, P, P)>(fn)(a[0], a[1], a[2], ints[0], d[0], d[1],
                                                                             a[3], a[4], a[5], a[6]);
      return;
    default: break;
  }
  switch (n) {
    case 1: reinterpret_cast<void (*)(P)>(fn)(a[0]); return;
    case 2: reinterpret_cast<void (*)(P, P)>(fn)(a[0], a[1]); return;
    case 3: reinterpret_cast<void (*)(P, P, P)>(fn)(a[0], a[1], a[2]); return;
    case 4: reinterpret_cast<void (*)(P, P, P, P)>(fn)(a[0], a[1], a[2], a[3]); return;
    case 5: reinterpret_cast<void (*)(P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4]); return;
    case 6: reinterpret_cast<void (*)(P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5]); return;
    case 7: reinterpret_cast<void (*)(P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6]); return;
    case 8: reinterpret_cast<void (*)(P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7]); return;
    case 9:
      reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8]);
      return;
    case 10:
      reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8],
                                                                  a[9]);
      return;
    case 11:
      reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7],
                                                                     a[8], a[9], a[10]);
      return;
    default:
      reinterpret_cast<void (*)(P, P, P, P, P, P, P, P, P, P, P, P)>(fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6],
                                                                        a[7], a[8], a[9], a[10], a[11]);
      return;
  }
}

// NAME_f_batch(n, pointers...): compute_A (3 pointers), bias (4), forward and inverse dynamics (5).
bool InvokeBatch(int64_t fn, int n, int count, P *a) {
  switch (count) {
    case 3: reinterpret_cast<void (*)(int, P, P, P)>(fn)(n, a[0], a[1], a[2]); return true;
    case 4: reinterpret_cast<void (*)(int, P, P, P, P)>(fn)(n, a[0], a[1], a[2], a[3]); return true;
    case 5: reinterpret_cast<void (*)(int, P, P, P, P, P)>(fn)(n, a[0], a[1], a[2], a[3], a[4]); return true;
    default: return false;
  }
}

// Whether the batch kernel can take these buffers: every input but the last holds one state per
// batch entry, and the last (the parameters) is one vector or `batch` equal ones.
bool BatchFits(size_t nin, const int64_t *in_stride, ffi::Span<const int64_t> in_sizes, const double *const *in,
               int64_t batch) {
  if (nin < 2 || batch < 2 || batch > 2147483647) return false;
  for (size_t k = 0; k + 1 < nin; ++k)
    if (in_stride[k] != in_sizes[k]) return false;
  const size_t last = nin - 1;
  const size_t bytes = static_cast<size_t>(in_sizes[last]) * sizeof(double);
  if (in_stride[last] != 0)
    for (int64_t i = 1; i < batch; ++i)
      if (std::memcmp(in[last], in[last] + i * in_stride[last], bytes) != 0) return false;
  return true;
}

ffi::Error KernelCall(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t fn, int64_t pattern,
                      ffi::Span<const int64_t> slots, ffi::Span<const int64_t> in_sizes,
                      ffi::Span<const int64_t> out_sizes, int64_t batch_fn) {
  const size_t nin = args.size(), nout = rets.size(), n = slots.size();
  if (fn == 0 || n == 0 || n > 15 || nout == 0 || nin > kMaxSlots || nout > kMaxSlots || in_sizes.size() != nin ||
      out_sizes.size() != nout || pattern < 0 || pattern > 7)
    return ffi::Error::InvalidArgument("krang kernel_call: inconsistent attributes");
  const double *in[kMaxSlots];
  double *out[kMaxSlots];
  int64_t in_stride[kMaxSlots];
  auto first = rets.get<ffi::AnyBuffer>(0);
  if (first.has_error()) return first.error();
  if (out_sizes[0] <= 0) return ffi::Error::InvalidArgument("krang kernel_call: empty output");
  const int64_t total = static_cast<int64_t>((*first)->element_count());
  const int64_t batch = total / out_sizes[0];
  if (batch * out_sizes[0] != total) return ffi::Error::InvalidArgument("krang kernel_call: output size");
  for (size_t k = 0; k < nin; ++k) {
    auto b = args.get<ffi::AnyBuffer>(k);
    if (b.has_error()) return b.error();
    if (b->element_type() != ffi::DataType::F64) return ffi::Error::InvalidArgument("krang kernel_call: not float64");
    const int64_t count = static_cast<int64_t>(b->element_count());
    if (count == in_sizes[k]) in_stride[k] = 0;
    else if (count == batch * in_sizes[k]) in_stride[k] = in_sizes[k];
    else return ffi::Error::InvalidArgument("krang kernel_call: input size");
    in[k] = reinterpret_cast<const double *>(b->untyped_data());
  }
  for (size_t k = 0; k < nout; ++k) {
    auto r = rets.get<ffi::AnyBuffer>(k);
    if (r.has_error()) return r.error();
    if ((*r)->element_type() != ffi::DataType::F64 ||
        static_cast<int64_t>((*r)->element_count()) != batch * out_sizes[k])
      return ffi::Error::InvalidArgument("krang kernel_call: output size");
    out[k] = reinterpret_cast<double *>((*r)->untyped_data());
  }
  int ints[2] = {0, 0};
  double dbl[3] = {0.0, 0.0, 0.0};
  int nints = 0, nptr = 0, ndbl = 0;
  for (size_t s = 0; s < n; ++s) {
    const int64_t c = slots[s];
    if (c >= 3000) {  // a mask from flags: its input and size checked, its value per state below
      if (c - 3000 >= static_cast<int64_t>(nin) || in_sizes[c - 3000] > 16 || nints == 2)
        return ffi::Error::InvalidArgument("krang kernel_call: bad mask slot");
      ++nints;
    } else if (c >= 1000) {
      const int64_t k = (c - 1000) / 100, j = (c - 1000) % 100;
      if (k >= static_cast<int64_t>(nin) || j >= in_sizes[k] || ndbl == 3)
        return ffi::Error::InvalidArgument("krang kernel_call: bad scalar slot");
      ++ndbl;
    } else if (c >= 200) {
      if (nints == 2) return ffi::Error::InvalidArgument("krang kernel_call: too many int arguments");
      ++nints;
    } else if ((c >= 0 && c < static_cast<int64_t>(nin)) || (c >= 100 && c < 100 + static_cast<int64_t>(nout))) {
      ++nptr;
    } else {
      return ffi::Error::InvalidArgument("krang kernel_call: bad slot");
    }
  }
  P a[kMaxSlots];
  if (batch_fn != 0 && pattern == 0 && nints == 0 && ndbl == 0 && BatchFits(nin, in_stride, in_sizes, in, batch)) {
    int m = 0;
    for (size_t s = 0; s < n; ++s) {
      const int64_t c = slots[s];
      a[m++] = c < 100 ? const_cast<double *>(in[c]) : out[c - 100];
    }
    if (InvokeBatch(batch_fn, static_cast<int>(batch), m, a)) return ffi::Error::Success();
  }
  for (int64_t i = 0; i < batch; ++i) {
    int m = 0, mi = 0, md = 0;
    for (size_t s = 0; s < n; ++s) {
      const int64_t c = slots[s];
      if (c >= 3000) {  // this state's flags as a bit mask
        const double *f = in[c - 3000] + i * in_stride[c - 3000];
        int mask = 0;
        for (int64_t j = 0; j < in_sizes[c - 3000]; ++j) {
          if (f[j] == 1.0) mask |= 1 << j;
          else if (f[j] != 0.0) return ffi::Error::InvalidArgument("krang kernel_call: a contact flag is not 0 or 1");
        }
        ints[mi++] = mask;
      } else if (c >= 1000) {
        const int64_t k = (c - 1000) / 100;
        const double x = in[k][i * in_stride[k] + (c - 1000) % 100];
        if (!(x >= 0.0 && x - x == 0.0))
          return ffi::Error::InvalidArgument("krang kernel_call: a gain, damping or restitution is negative or not finite");
        dbl[md++] = x;
      } else if (c >= 200) {
        ints[mi++] = static_cast<int>(c - 200);
      } else {
        a[m++] = c < 100 ? const_cast<double *>(in[c] + i * in_stride[c]) : out[c - 100] + i * out_sizes[c - 100];
      }
    }
    Invoke(fn, pattern, nptr, a, ints, dbl);
  }
  return ffi::Error::Success();
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(KrangKernelCall, KernelCall,
                              ffi::Ffi::Bind()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("fn")
                                  .Attr<int64_t>("pattern")
                                  .Attr<ffi::Span<const int64_t>>("slots")
                                  .Attr<ffi::Span<const int64_t>>("in_sizes")
                                  .Attr<ffi::Span<const int64_t>>("out_sizes")
                                  .Attr<int64_t>("batch_fn"));
