// decode_attention's own source (the split kernel, the combine kernel and the GPU reference) run on
// the CPU (a std::thread per CUDA thread, a std::barrier per __syncthreads and per shuffle, 3-D
// grids) and compared with the CPU float64 reference: catches indexing, split, tail, GQA and
// log-sum-exp bugs before GPU time is spent. Odd context lengths (not multiples of BLOCK_N nor of
// SPLIT_K * BLOCK_N), seq 1, empty splits, a cache larger than the context, per-sequence lengths
// (0, clamped, negative), groups of 1, 2, 4 and 8, head_dim 64 and 128. Outputs are poisoned first.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attn_templates_emulated.hpp"
#include "kernel_templates/decode_attention/decode_attention_f64.hpp"

thread_local uint3e threadIdx;
thread_local uint3e blockIdx;
uint3e blockDim;
uint3e gridDim;
std::barrier<>* g_barrier = nullptr;
float g_shfl[1024];

namespace {

namespace kt = ktune::kernel_templates;

void launch(uint3e grid, unsigned threads, const std::function<void()>& body) {
  gridDim = grid;
  blockDim = {threads, 1, 1};
  for (unsigned bz = 0; bz < grid.z; ++bz) {
    for (unsigned by = 0; by < grid.y; ++by) {
      for (unsigned bx = 0; bx < grid.x; ++bx) {
        std::barrier<> barrier(threads);
        g_barrier = &barrier;
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t) {
          pool.emplace_back([&, t] {
            blockIdx = {bx, by, bz};
            threadIdx = {t, 0, 0};
            body();
          });
        }
        for (auto& t : pool) t.join();
      }
    }
  }
}

/// bf16 values in a 16-byte-aligned buffer.
struct Bf16Buf {
  std::vector<unsigned char> mem;
  bf16e* p = nullptr;
  std::size_t n = 0;
  explicit Bf16Buf(std::size_t count) : mem(count * 2 + 32), n(count) {
    auto addr = reinterpret_cast<uintptr_t>(mem.data());
    p = reinterpret_cast<bf16e*>((addr + 15) / 16 * 16);
    std::memset(p, 0xFF, count * 2);  // NaN
  }
  std::vector<double> randomize(unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mag(0.25f, 1.0f);
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) {
      p[i] = ktune_dev::from_f32<bf16e>((rng() & 1 ? 1.0f : -1.0f) * mag(rng));
      out[i] = ktune_dev::to_f32(p[i]);
    }
    return out;
  }
  std::vector<double> values() const {
    std::vector<double> out(n);
    for (std::size_t i = 0; i < n; ++i) out[i] = ktune_dev::to_f32(p[i]);
    return out;
  }
};

struct Case {
  int batch, hq, hkv, seq, seq_max;
  std::vector<int> lens;  // empty: uniform
};

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rel,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_TRUE(std::fabs(got[i] - want[i]) <= rel * std::fabs(want[i]) + 1e-5)
        << what << " element " << i << ": " << got[i] << " vs " << want[i];
  }
}

/// Runs ktune_decode_attention<D,G,BLOCK_N,WARPS> with `splits` (then the combine kernel when
/// splits > 1) and the GPU reference on random inputs; both against float64.
template <int D, int G, int BLOCK_N, int WARPS>
void run_case(const Case& c, int splits) {
  const std::string what =
      "D" + std::to_string(D) + " G" + std::to_string(G) + " n" + std::to_string(BLOCK_N) + " w" +
      std::to_string(WARPS) + " sk" + std::to_string(splits) + " b" + std::to_string(c.batch) + " hq" +
      std::to_string(c.hq) + " hkv" + std::to_string(c.hkv) + " s" + std::to_string(c.seq) + "/" +
      std::to_string(c.seq_max) + (c.lens.empty() ? "" : " lens");
  const std::size_t rows = std::size_t(c.batch) * c.hq;
  const std::size_t kv = std::size_t(c.batch) * c.hkv * c.seq_max * D;
  Bf16Buf q(rows * D), k(kv), v(kv), o(rows * D);
  const auto qv = q.randomize(11u + c.seq), kvals = k.randomize(12u + c.hq), vv = v.randomize(13u + D);
  std::vector<int32_t> lens(c.lens.begin(), c.lens.end());
  const int* lens_ptr = lens.empty() ? nullptr : lens.data();
  const float scale = 1.0f / std::sqrt(float(D));
  const kt::DecodeAttentionShape shape{c.batch, c.hq, c.hkv, c.seq, c.seq_max, D};
  const auto want = kt::decode_attention_f64(qv, kvals, vv, lens, shape, scale);

  std::vector<float> ws(splits > 1 ? rows * splits * (D + 2) : 0, std::nanf(""));
  launch({unsigned(splits), unsigned(c.hq / G), unsigned(c.batch)}, WARPS * 32, [&] {
    ktune_decode_attention<D, G, BLOCK_N, WARPS, bf16e>(
        q.p, k.p, v.p, splits > 1 ? nullptr : o.p, splits > 1 ? ws.data() : nullptr, lens_ptr, c.hq, c.hkv,
        c.seq, c.seq_max, splits, scale, nullptr, 0, 0, 0);
  });
  if (splits > 1) {
    launch({unsigned((rows + 3) / 4), 1, 1}, 128,
           [&] { ktune_decode_attention_combine<D, bf16e>(ws.data(), o.p, int(rows), splits); });
  }
  expect_close(o.values(), want, 0.0079, what);

  std::vector<float> o_ref(rows * D, std::nanf("")), scores(rows * c.seq, std::nanf(""));
  launch({unsigned(c.hq), unsigned(c.batch), 1}, 128, [&] {
    ktune_decode_attention_reference<D, bf16e>(q.p, k.p, v.p, o_ref.data(), scores.data(), lens_ptr, c.hq,
                                               c.hkv, c.seq, c.seq_max, scale, nullptr, 0, 0, 0);
  });
  expect_close(std::vector<double>(o_ref.begin(), o_ref.end()), want, 2e-5, "reference " + what);
}

/// The GPU reference over a paged cache (blocks of `block` keys, the blocks of the sequences
/// shuffled, one spare block, one id out of range that reads block 0) against float64 over the
/// same pages, and the float64 reference over pages against itself over the equivalent contiguous
/// cache.
template <int D>
void run_paged_reference(int batch, int hq, int hkv, int seq, int block) {
  const int max_blocks = (seq + block - 1) / block + 1;  // a spare column
  const int num_blocks = batch * max_blocks + 1;
  std::vector<int32_t> table(static_cast<std::size_t>(batch * max_blocks));
  for (std::size_t i = 0; i < table.size(); ++i)
    table[i] = static_cast<int32_t>((i * 7 + 3) % (num_blocks - 1)) + 1;
  const std::size_t rows = std::size_t(batch) * hq;
  const std::size_t kv = std::size_t(num_blocks) * hkv * block * D;
  Bf16Buf q(rows * D), k(kv), v(kv);
  const auto qv = q.randomize(21u + seq), kvals = k.randomize(22u), vv = v.randomize(23u);
  const float scale = 1.0f / std::sqrt(float(D));
  kt::DecodeAttentionShape paged{batch, hq, hkv, seq, seq, D};
  paged.block_size = block, paged.max_blocks = max_blocks, paged.num_blocks = num_blocks;
  const auto want = kt::decode_attention_f64(qv, kvals, vv, {}, paged, scale, table);
  // The same keys gathered into a contiguous cache [batch, hkv, seq, D].
  std::vector<double> kc(std::size_t(batch) * hkv * seq * D), vc(kc.size());
  for (int b = 0; b < batch; ++b)
    for (int h = 0; h < hkv; ++h)
      for (int t = 0; t < seq; ++t) {
        const auto id = static_cast<std::size_t>(table[std::size_t(b * max_blocks + t / block)]);
        const std::size_t src = ((id * hkv + h) * block + t % block) * D;
        const std::size_t dst = ((std::size_t(b) * hkv + h) * seq + t) * D;
        for (int d = 0; d < D; ++d) kc[dst + d] = kvals[src + d], vc[dst + d] = vv[src + d];
      }
  expect_close(want, kt::decode_attention_f64(qv, kc, vc, {}, {batch, hq, hkv, seq, seq, D}, scale), 1e-12,
               "paged f64 vs contiguous f64");
  std::vector<float> o_ref(rows * D, std::nanf("")), scores(rows * seq, std::nanf(""));
  launch({unsigned(hq), unsigned(batch), 1}, 128, [&] {
    ktune_decode_attention_reference<D, bf16e>(q.p, k.p, v.p, o_ref.data(), scores.data(), nullptr, hq, hkv,
                                               seq, seq, scale, table.data(), block, max_blocks, num_blocks);
  });
  expect_close(std::vector<double>(o_ref.begin(), o_ref.end()), want, 2e-5, "paged reference");
  // An id out of range reads block 0, in both references.
  table[0] = num_blocks + 9;
  const auto clamped = kt::decode_attention_f64(qv, kvals, vv, {}, paged, scale, table);
  launch({unsigned(hq), unsigned(batch), 1}, 128, [&] {
    ktune_decode_attention_reference<D, bf16e>(q.p, k.p, v.p, o_ref.data(), scores.data(), nullptr, hq, hkv,
                                               seq, seq, scale, table.data(), block, max_blocks, num_blocks);
  });
  expect_close(std::vector<double>(o_ref.begin(), o_ref.end()), clamped, 2e-5,
               "paged reference, id out of range");
}

TEST(AttnEmulation, PagedReferenceMatchesTheContiguousCache) {
  run_paged_reference<64>(2, 4, 2, 37, 16);
  run_paged_reference<128>(3, 8, 2, 70, 32);
}

TEST(AttnEmulation, HeadDim64GroupOf2OddContext) {
  const Case c{2, 4, 2, 37, 37, {}};
  run_case<64, 2, 16, 1>(c, 1);  // 4 loads a lane; 37 = 2 tiles + 5
  run_case<64, 2, 16, 2>(c, 3);  // chunk 16: splits of 16, 16, 5
  run_case<64, 2, 32, 2>(c, 5);  // chunk 32: splits 2..4 empty
}

TEST(AttnEmulation, HeadDim128GroupOf4CacheLargerThanContext) {
  const Case c{1, 8, 2, 45, 61, {}};
  run_case<128, 4, 8, 4>(c, 1);
  run_case<128, 4, 16, 2>(c, 2);
  run_case<128, 4, 32, 1>(c, 4);
}

TEST(AttnEmulation, PerSequenceLengths) {
  // 0 (output 0), 1, clamped from 99 to seq, negative (0), a tail.
  const Case c{5, 2, 1, 33, 40, {0, 1, 99, -4, 20}};
  run_case<64, 2, 16, 1>(c, 1);
  run_case<64, 2, 16, 1>(c, 3);
}

TEST(AttnEmulation, SingleKeyAndGroupOf1) {
  run_case<64, 1, 8, 2>(Case{3, 3, 3, 1, 1, {}}, 1);
  run_case<64, 1, 8, 2>(Case{3, 3, 3, 1, 1, {}}, 2);
  run_case<128, 1, 8, 1>(Case{1, 2, 2, 9, 9, {}}, 2);
}

TEST(AttnEmulation, GroupOf8AndSplitGroup) {
  run_case<64, 8, 16, 1>(Case{1, 8, 1, 21, 21, {}}, 2);
  // A group of 16 as two blocks of 8 heads reading the same K/V head.
  run_case<64, 8, 16, 1>(Case{1, 16, 1, 21, 24, {}}, 1);
}

}  // namespace
