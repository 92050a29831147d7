#include "measure/library_call.hpp"

#include <fmt/format.h>

#include "core/json_integer.hpp"
#include "ktune/error.hpp"

namespace ktune::measure {

namespace {
constexpr const char* kGemmCall = "cublaslt_gemm";
constexpr const char* kFp8GemmCall = "cublaslt_fp8_gemm";
}  // namespace

nlohmann::json to_json(const LibraryGemmCall& call) {
  nlohmann::json j{{"call", call.fp8 ? kFp8GemmCall : kGemmCall},
                   {"dtype", std::string(to_string(call.dtype))},
                   {"layout", call.layout},
                   {"m", call.m},
                   {"n", call.n},
                   {"k", call.k},
                   {"a", call.a},
                   {"b", call.b},
                   {"c", call.c},
                   {"algorithm", call.algorithm.to_json_text()}};
  if (call.fp8) {
    j["a_scale"] = call.a_scale;
    j["b_scale"] = call.b_scale;
  }
  if (harness::library_layout_bias(call.layout)) j["bias"] = call.bias;
  return j;
}

LibraryGemmCall library_gemm_call_from_json(const nlohmann::json& j) {
  try {
    if (!j.is_object()) throw Error(ErrorKind::kBadInput, "a library call must be a JSON object");
    const std::string call = j.at("call").get<std::string>();
    if (call != kGemmCall && call != kFp8GemmCall) {
      throw Error(ErrorKind::kBadInput,
                  fmt::format("unknown library call '{}' (known: {}, {})", call, kGemmCall, kFp8GemmCall));
    }
    LibraryGemmCall c;
    c.fp8 = call == kFp8GemmCall;
    c.dtype = dtype_from_string(j.at("dtype").get<std::string>());
    c.layout = j.at("layout").get<std::string>();
    if (!harness::is_library_gemm_layout(c.layout))
      throw Error(ErrorKind::kBadInput,
                  fmt::format("library gemm layout '{}' is not nt, nn, nt+bias or nn+bias", c.layout));
    c.m = json_integer<int64_t>(j.at("m"), "m");
    c.n = json_integer<int64_t>(j.at("n"), "n");
    c.k = json_integer<int64_t>(j.at("k"), "k");
    if (c.m < 1 || c.n < 1 || c.k < 1)
      throw Error(ErrorKind::kBadInput,
                  fmt::format("library gemm needs positive m, n, k ({}, {}, {})", c.m, c.n, c.k));
    c.a = j.at("a").get<std::string>();
    c.b = j.at("b").get<std::string>();
    c.c = j.at("c").get<std::string>();
    if (harness::library_layout_bias(c.layout)) c.bias = j.at("bias").get<std::string>();
    if (c.fp8) {
      c.a_scale = j.at("a_scale").get<std::string>();
      c.b_scale = j.at("b_scale").get<std::string>();
      if (c.layout != "nt") throw Error(ErrorKind::kBadInput, "the library fp8 gemm has layout nt only");
    }
    c.algorithm = Config::from_json_text(j.at("algorithm").get<std::string>());
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput, fmt::format("library call: {}", e.what()));
  }
}

LaunchSpec library_launch(const LibraryGemmCall& call) {
  LaunchSpec l;
  l.function = fmt::format("cuBLASLt matmul {}", call.algorithm.key());
  l.library = to_json(call);
  return l;
}

}  // namespace ktune::measure
