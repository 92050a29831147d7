// CPU stand-in for what gemm_wgmma.cu uses from CUDA, ktune_device.cuh, gemm_wgmma_ops.cuh and
// gemm_wgmma_sync.cuh: a
// block is one std::thread per CUDA thread, __syncthreads a std::barrier. Shared memory is the host
// buffer g_smem: a block's window t_smem (block pairs: one window each) and a "shared address" is
// the offset into the window.
//
// wgmma.mma_async is modelled from the PTX ISA, independently of the kernel's layout helpers: each
// thread computes its own accumulator fragment (acc_row / acc_col), reading A and B through the
// decoded 64-bit descriptors as the canonical 128B-swizzle layouts define (K-major: element (i, j)
// at sw128(start + (i/8) SBO + (i%8) 128 + 2j); MN-major: element (k, n) at sw128(start + (n/64) LBO
// + (n%64) 2 + (k%8) 128 + (k/8) SBO)). Asynchrony is played adversarially, one schedule a run:
// - kLateCopies: cp.async lands only when the cp.async.wait_group that retires it runs, and a
//   wgmma reads shared memory when issued: a tile read before its copies were waited for is stale.
// - kLateMma: copies land at issue, a wgmma reads shared memory only when the wgmma.wait_group
//   that retires it runs: a stage refilled while a wgmma may still read it gives wrong sums.
// mbarriers (the warp-specialised kernel) are counters with a phase, waited for on a condition
// variable; a cp.async mbarrier arrive lands the thread's copies (under kLateCopies, not before)
// and then arrives. A wrong parity or a missing arrival hangs the test rather than passing it.
#pragma once

#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "gemm_wgmma_layout.cuh"

struct uint3e {
  unsigned x = 0, y = 0, z = 0;
};
extern thread_local uint3e threadIdx, blockIdx;
extern uint3e blockDim, gridDim;
extern thread_local std::barrier<>* t_barrier;  ///< the thread's block
extern thread_local std::vector<std::unique_ptr<std::barrier<>>>* t_warp_barriers;  ///< one per warp of the block
extern thread_local std::barrier<>* t_cluster_barrier;  ///< both blocks of a pair
extern thread_local unsigned char* t_smem;               ///< the block's shared-memory window
extern thread_local unsigned t_rank;                     ///< the block's rank in its pair (0 alone)
extern unsigned char g_smem[];
constexpr unsigned kSmemWindow = 232448;  ///< bytes of a block's window: the H200's 227 KiB
inline void __syncthreads() { t_barrier->arrive_and_wait(); }
/// The warp's 32 threads meet: the lockstep a warp keeps at .sync.aligned instructions (wgmma).
inline void __syncwarp() { (*t_warp_barriers)[threadIdx.x / 32]->arrive_and_wait(); }
inline unsigned long long __cvta_generic_to_shared(const void* p) {
  return static_cast<unsigned long long>(static_cast<const unsigned char*>(p) - t_smem);
}
inline float __expf(float x) { return std::exp(x); }

/// The two 16-bit formats: bf16 (round to nearest even by hand) and f16 (the compiler's _Float16).
struct bf16e {
  uint16_t bits;
};
struct f16e {
  uint16_t bits;
};
struct bf16e2 {
  bf16e x, y;
};
struct f16e2 {
  f16e x, y;
};

#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__

namespace wgmma_emu {
enum class Schedule { kLateCopies, kLateMma };
extern Schedule g_schedule;
extern std::atomic<int> g_bad_descriptors;  ///< descriptors with a base offset or a mode other than 128B
/// Deferred work of one thread, grouped as the PTX commit groups are.
struct Groups {
  std::vector<std::function<void()>> open;
  std::vector<std::vector<std::function<void()>>> committed;
  void add(std::function<void()> f) { open.push_back(std::move(f)); }
  void commit() {
    committed.push_back(std::move(open));
    open.clear();
  }
  void retire_until(std::size_t pending) {
    while (committed.size() > pending) {
      for (auto& f : committed.front()) f();
      committed.erase(committed.begin());
    }
  }
};
extern thread_local Groups t_copies;
extern thread_local Groups t_mmas;

/// An mbarrier: arrivals still expected in the current phase, the transaction bytes still owed
/// (negative when bytes arrived before they were expected), and the number of completed phases.
struct MBarrier {
  unsigned expected = 0;
  unsigned pending = 0;
  unsigned phase = 0;
  long long tx = 0;
};
/// Map key of a block's barrier: the rank in bits 24.., the shared address below.
inline unsigned mbar_key(unsigned addr, unsigned rank) { return (rank << 24) | addr; }

/// The block's mbarriers by shared address (re-initialised by each block's mbar_init).
inline std::mutex g_mbar_mutex;
inline std::condition_variable g_mbar_cv;
inline std::map<unsigned, MBarrier> g_mbars;
}  // namespace wgmma_emu

namespace ktune_dev {
template <typename T>
float to_f32(T v);
template <>
inline float to_f32<bf16e>(bf16e v) {
  const uint32_t b = uint32_t(v.bits) << 16;
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
template <>
inline float to_f32<f16e>(f16e v) {
  _Float16 h;
  std::memcpy(&h, &v.bits, 2);
  return static_cast<float>(h);
}
template <typename T>
T from_f32(float v);
template <>
inline bf16e from_f32<bf16e>(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  b += 0x7FFF + ((b >> 16) & 1);
  return {uint16_t(b >> 16)};
}
template <>
inline f16e from_f32<f16e>(float v) {
  const _Float16 h = static_cast<_Float16>(v);
  f16e out;
  std::memcpy(&out.bits, &h, 2);
  return out;
}
inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
inline void cp_async16(void* smem, const void* gmem, int src_bytes) {
  auto land = [smem, gmem, src_bytes] {
    if (src_bytes == 16) {
      std::memcpy(smem, gmem, 16);
    } else {
      std::memset(smem, 0, 16);
    }
  };
  if (wgmma_emu::g_schedule == wgmma_emu::Schedule::kLateCopies) {
    wgmma_emu::t_copies.add(land);
  } else {
    land();
  }
}
inline void cp_async_commit() { wgmma_emu::t_copies.commit(); }
template <int N>
void cp_async_wait() {
  wgmma_emu::t_copies.retire_until(N);
}
}  // namespace ktune_dev

namespace ktune_wgmma {

inline void mbar_init(unsigned bar, unsigned count) {
  std::lock_guard<std::mutex> lock(wgmma_emu::g_mbar_mutex);
  wgmma_emu::g_mbars[wgmma_emu::mbar_key(bar, t_rank)] = {count, count, 0, 0};
}
inline void mbar_init_fence() {}
/// Arrivals and transaction bytes on the barrier with map key `key`.
inline void mbar_update(unsigned key, unsigned arrivals, long long expect_bytes, long long done_bytes) {
  std::lock_guard<std::mutex> lock(wgmma_emu::g_mbar_mutex);
  wgmma_emu::MBarrier& b = wgmma_emu::g_mbars.at(key);
  b.pending -= arrivals;
  b.tx += expect_bytes - done_bytes;
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.expected;
    wgmma_emu::g_mbar_cv.notify_all();
  }
}
inline void mbar_arrive(unsigned bar) { mbar_update(wgmma_emu::mbar_key(bar, t_rank), 1, 0, 0); }
inline void mbar_arrive_expect_tx(unsigned bar, unsigned bytes) {
  mbar_update(wgmma_emu::mbar_key(bar, t_rank), 1, bytes, 0);
}
// Pairs: a cluster address is the shared address with the rank in bits 24.. and bit 31 set.
inline unsigned cluster_rank() { return t_rank; }
inline unsigned cluster_address(unsigned addr, unsigned rank) { return (1u << 31) | (rank << 24) | addr; }
inline void cluster_sync() { t_cluster_barrier->arrive_and_wait(); }
inline void mbar_arrive_cluster(unsigned cluster_addr) { mbar_update(cluster_addr & ~(1u << 31), 1, 0, 0); }
/// The copy lands at once (into the other block's window), then completes its bytes.
inline void bulk_copy_to_peer(unsigned dst_cluster, unsigned src, unsigned bytes, unsigned bar_cluster) {
  const unsigned rank = (dst_cluster >> 24) & 0x7F;
  std::memcpy(g_smem + rank * kSmemWindow + (dst_cluster & 0xFFFFFF), t_smem + src, bytes);
  mbar_update(bar_cluster & ~(1u << 31), 0, 0, bytes);
}
/// try_wait.parity succeeds once the phase of that parity has completed: the current phase's
/// parity differs.
inline void mbar_wait(unsigned bar, unsigned parity) {
  const unsigned key = wgmma_emu::mbar_key(bar, t_rank);
  std::unique_lock<std::mutex> lock(wgmma_emu::g_mbar_mutex);
  wgmma_emu::g_mbar_cv.wait(lock, [&] { return (wgmma_emu::g_mbars.at(key).phase & 1u) != parity; });
}
inline void mbar_wait_cluster(unsigned bar, unsigned parity) { mbar_wait(bar, parity); }
/// Lands this thread's copies (the latest they may land), then arrives.
inline void cp_async_mbar_arrive(unsigned bar) {
  wgmma_emu::t_copies.commit();
  wgmma_emu::t_copies.retire_until(0);
  mbar_arrive(bar);
}
inline void wgmma_fence() {}
inline void fence_proxy_async() {}
inline void wgmma_commit() { wgmma_emu::t_mmas.commit(); }
/// .sync.aligned: the warp's lanes leave the wait together, each with its groups retired.
template <int N>
void wgmma_wait() {
  wgmma_emu::t_mmas.retire_until(N);
  __syncwarp();
}

namespace emu {
inline unsigned sw128(unsigned addr) { return addr ^ (((addr >> 7) & 7u) << 4); }
struct Desc {
  unsigned start, lead, stride;
};
inline Desc decode(unsigned long long d) {
  if (((d >> 49) & 7) != 0 || (d >> 62) != 1) ++wgmma_emu::g_bad_descriptors;
  return {static_cast<unsigned>(d & 0x3FFF) << 4, static_cast<unsigned>((d >> 16) & 0x3FFF) << 4,
          static_cast<unsigned>((d >> 32) & 0x3FFF) << 4};
}
template <typename T>
float at(unsigned addr) {
  T v;
  std::memcpy(&v, t_smem + addr, sizeof v);
  return ktune_dev::to_f32(v);
}
}  // namespace emu

/// d (this thread's part of a 64 x N f32 accumulator) += A (64 x 16, K-major) * B (16 x N).
template <int N, int TRANS_B, typename T>
struct Mma64xNk16 {
  static void run(float (&d)[N / 2], unsigned long long a, unsigned long long b) {
    const int t = static_cast<int>(threadIdx.x % 128);
    float* out = d;
    auto mma = [out, a, b, t] {
      const emu::Desc da = emu::decode(a);
      const emu::Desc db = emu::decode(b);
      for (int i = 0; i < N / 2; ++i) {
        const int row = acc_row(t, i);
        const int col = acc_col(t, i);
        float s = 0.0f;
        for (int j = 0; j < 16; ++j) {
          const float x =
              emu::at<T>(emu::sw128(da.start + (row / 8) * da.stride + (row % 8) * 128u + 2u * j));
          const unsigned b_addr =
              TRANS_B == 0 ? emu::sw128(db.start + (col / 8) * db.stride + (col % 8) * 128u + 2u * j)
                           : emu::sw128(db.start + (col / 64) * db.lead + (col % 64) * 2u + (j % 8) * 128u +
                                        (j / 8) * db.stride);
          s += x * emu::at<T>(b_addr);
        }
        out[i] += s;
      }
    };
    if (wgmma_emu::g_schedule == wgmma_emu::Schedule::kLateMma) {
      wgmma_emu::t_mmas.add(mma);
    } else {
      mma();
    }
  }
};

}  // namespace ktune_wgmma
