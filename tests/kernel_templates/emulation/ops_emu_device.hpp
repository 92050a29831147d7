// CPU stand-ins the operator templates need beyond emu_device.hpp (the gemm emulation's): 8-byte
// vectors, rsqrtf, __expf, max, the dynamic shared memory of a block (blocks run one at a time).
#pragma once
#include <cmath>

#include "emu_device.hpp"

// The operators also give a minimum of blocks an SM: __launch_bounds__ with one or two arguments.
#undef __launch_bounds__
#define __launch_bounds__(...)

struct int2 {
  int x, y;
};
inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }
using std::max;
inline float __int_as_float(unsigned bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// The emulated block's dynamic shared memory: 227 KB, the sm_90 opt-in limit.
inline int4 g_ops_dynamic_smem[232448 / 16];
#define KTUNE_OPS_DYNAMIC_SMEM(name) int4* name = g_ops_dynamic_smem
