#include "ops_gpu_support.hpp"

#include <algorithm>
#include <cstring>
#include <random>

#include "kernel_templates/reference_ops.hpp"
#include "kernel_templates/rmsnorm_rope/rmsnorm_rope_spec.hpp"

namespace ktune::kernel_templates::testing {
namespace {

constexpr double kRopeTheta = 500000.0;  // Llama-3's rope_theta

std::vector<uint8_t> int32_bytes(const std::vector<int32_t>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

bool is_int32_tensor(const std::string& name) { return name == "positions" || name == "lengths"; }

void fill_inputs(const Problem& problem, const std::vector<TensorSpec>& tensors, DeviceTensors& device,
                 HostTensors& host, uint64_t seed, std::size_t offset_bytes) {
  std::mt19937_64 rng(seed);
  for (const TensorSpec& t : tensors) {
    if (t.role != TensorRole::kInput) {
      device.ensure(t);
      device.poison(t.name);
      continue;
    }
    // The f32 table and the int32 tensors need their natural alignment (AlignmentRule::required).
    const bool natural = is_int32_tensor(t.name) || t.integer.has_value() || t.name == "cos_sin";
    device.ensure(t, natural ? 0 : offset_bytes);
    std::vector<double>& values = host[t.name];
    if (t.integer && t.fill.kind == BufferFill::Kind::kSequence) {  // a block table: the spec's permutation
      std::vector<int32_t> ints(static_cast<std::size_t>(t.elements));
      for (std::size_t i = 0; i < ints.size(); ++i) {
        const int64_t v = t.fill.start + static_cast<int64_t>(i) * t.fill.step;
        ints[i] = static_cast<int32_t>(t.fill.modulo ? v % *t.fill.modulo : v);
      }
      values.assign(ints.begin(), ints.end());
      device.upload(t.name, int32_bytes(ints));
    } else if (is_int32_tensor(t.name)) {
      std::vector<int32_t> ints(static_cast<std::size_t>(t.elements));
      for (std::size_t i = 0; i < ints.size(); ++i) {
        if (t.name == "positions") {
          const auto span = static_cast<uint64_t>(3 * RmsNormRopeSpec::kMaxPos + 3);
          ints[i] = static_cast<int32_t>(static_cast<int64_t>(rng() % span) - 3);
        } else {
          const auto span = static_cast<uint64_t>(problem.dim("cols") + 3);
          ints[i] = i == 1 ? -1 : static_cast<int32_t>(rng() % span);
        }
      }
      values.assign(ints.begin(), ints.end());
      device.upload(t.name, int32_bytes(ints));
    } else if (t.name == "cos_sin") {
      // The table's rows are rot_dim wide where the problem has one (rope_append), else head_dim.
      const bool partial = std::any_of(problem.dims.begin(), problem.dims.end(),
                                       [](const auto& d) { return d.first == "rot_dim"; });
      const int64_t head_dim = problem.dim(partial ? "rot_dim" : "head_dim");
      const auto table = rope_table_f64(t.elements / head_dim, head_dim, kRopeTheta);
      std::vector<float> f(table.begin(), table.end());
      values.assign(f.begin(), f.end());
      std::vector<uint8_t> bytes(f.size() * 4);
      std::memcpy(bytes.data(), f.data(), bytes.size());
      device.upload(t.name, bytes);
    } else {
      device.upload(t.name, random_tensor(t.dtype, t.elements, rng(), values));
    }
  }
}

std::vector<double> download_values(const DeviceTensors& device, const TensorSpec& spec) {
  const auto raw = device.download(spec.name, static_cast<std::size_t>(spec.bytes()));
  return ktune::decode(spec.dtype, std::as_bytes(std::span(raw)));
}

}  // namespace ktune::kernel_templates::testing
