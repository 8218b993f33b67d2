// One XLA FFI handler for every robot's kernels (krang_kernels.jax): it calls a
// C kernel of the generated ABI (docs/c-abi.md: row-major doubles, caller-owned,
// `void NAME_f(const double *in..., [int...], double *out...)`) through the
// function address it receives as an attribute, once per state of a batch.
//
// Attributes (all int64; set by krang_kernels/jax/__init__.py, never by a user):
//   fn        the kernel's address in a library this process loaded
//   pattern   the C signature: 0 = `slots` pointers; 1 = (P, P, int, P);
//             2 = (P, P, P, int, P); 3 = (P, P, int, int, P)
//   slots     one per C argument: k < 100 input buffer k, 100 + k output k,
//             200 + v the int constant v (an end-effector index, a frame)
//   in_sizes, out_sizes  the doubles of one state's argument
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

void Invoke(int64_t fn, int64_t pattern, int n, P *a, const int *ints) {
  switch (pattern) {
    case 1: reinterpret_cast<void (*)(P, P, int, P)>(fn)(a[0], a[1], ints[0], a[2]); return;
    case 2: reinterpret_cast<void (*)(P, P, P, int, P)>(fn)(a[0], a[1], a[2], ints[0], a[3]); return;
    case 3: reinterpret_cast<void (*)(P, P, int, int, P)>(fn)(a[0], a[1], ints[0], ints[1], a[2]); return;
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

ffi::Error KernelCall(ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t fn, int64_t pattern,
                      ffi::Span<const int64_t> slots, ffi::Span<const int64_t> in_sizes,
                      ffi::Span<const int64_t> out_sizes) {
  const size_t nin = args.size(), nout = rets.size(), n = slots.size();
  if (fn == 0 || n == 0 || n > 12 || nout == 0 || nin > kMaxSlots || nout > kMaxSlots || in_sizes.size() != nin ||
      out_sizes.size() != nout || pattern < 0 || pattern > 3)
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
  int nints = 0, nptr = 0;
  for (size_t s = 0; s < n; ++s) {
    const int64_t c = slots[s];
    if (c >= 200) {
      if (nints == 2) return ffi::Error::InvalidArgument("krang kernel_call: too many int arguments");
      ints[nints++] = static_cast<int>(c - 200);
    } else if ((c >= 0 && c < static_cast<int64_t>(nin)) || (c >= 100 && c < 100 + static_cast<int64_t>(nout))) {
      ++nptr;
    } else {
      return ffi::Error::InvalidArgument("krang kernel_call: bad slot");
    }
  }
  P a[kMaxSlots];
  for (int64_t i = 0; i < batch; ++i) {
    int m = 0;
    for (size_t s = 0; s < n; ++s) {
      const int64_t c = slots[s];
      if (c >= 200) continue;
      a[m++] = c < 100 ? const_cast<double *>(in[c] + i * in_stride[c]) : out[c - 100] + i * out_sizes[c - 100];
    }
    Invoke(fn, pattern, nptr, a, ints);
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
                                  .Attr<ffi::Span<const int64_t>>("out_sizes"));
