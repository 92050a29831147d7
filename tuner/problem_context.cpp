#include "tuner/problem_context.hpp"

#include <fmt/format.h>

#include "ktune/error.hpp"

namespace ktune::tuner {

int64_t dtype_bytes(std::string_view dtype) {
  if (dtype == "f32") return 4;
  if (dtype == "f16" || dtype == "bf16") return 2;
  if (dtype == "fp8e4m3" || dtype == "fp8e5m2") return 1;
  throw Error(ErrorKind::kBadInput,
              fmt::format("unknown dtype '{}' (known: f32, f16, bf16, fp8e4m3, fp8e5m2)", dtype));
}

}  // namespace ktune::tuner
