// A library call as a candidate's launch (measure/library_call.hpp): the call survives the worker
// protocol inside its launch, its JSON form round-trips, and malformed calls are bad input naming
// what is wrong.
#include "measure/library_call.hpp"

#include <gtest/gtest.h>

#include <random>

#include "ktune/error.hpp"
#include "measure/worker_protocol.hpp"

namespace ktune::measure {
namespace {

LibraryGemmCall random_call(std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> dim(1, 1 << 15);
  std::uniform_int_distribution<int64_t> attr(0, 40);
  LibraryGemmCall c;
  c.fp8 = rng() % 3 == 0;
  c.dtype = c.fp8 ? DType::kFP8E4M3 : rng() % 2 ? DType::kBF16 : DType::kF16;
  static const char* const kLayouts[] = {"nt", "nn", "nt+bias", "nn+bias"};
  c.layout = c.fp8 ? "nt" : kLayouts[rng() % 4];
  if (c.layout.ends_with("+bias")) c.bias = "bias" + std::to_string(rng() % 100);
  if (c.fp8) {
    c.a_scale = "sa" + std::to_string(rng() % 100);
    c.b_scale = "sb" + std::to_string(rng() % 100);
  }
  c.m = dim(rng);
  c.n = dim(rng);
  c.k = dim(rng);
  c.algorithm = Config("cublaslt", {{"VERSION", 130100},
                                    {"ALGO", attr(rng)},
                                    {"TILE", attr(rng)},
                                    {"STAGES", attr(rng)},
                                    {"SPLIT_K", 1 + attr(rng) % 8}});
  return c;
}

void expect_same(const LibraryGemmCall& got, const LibraryGemmCall& want) {
  EXPECT_EQ(got.fp8, want.fp8);
  if (want.fp8) {
    EXPECT_EQ(got.a_scale, want.a_scale);
    EXPECT_EQ(got.b_scale, want.b_scale);
  }
  EXPECT_EQ(got.dtype, want.dtype);
  EXPECT_EQ(got.layout, want.layout);
  EXPECT_EQ(got.m, want.m);
  EXPECT_EQ(got.n, want.n);
  EXPECT_EQ(got.k, want.k);
  EXPECT_EQ(got.a, want.a);
  EXPECT_EQ(got.b, want.b);
  EXPECT_EQ(got.c, want.c);
  if (want.layout.ends_with("+bias")) {
    EXPECT_EQ(got.bias, want.bias);
  }
  EXPECT_EQ(got.algorithm, want.algorithm);
}

TEST(LibraryCall, TravelsInsideItsLaunchOverTheWorkerProtocol) {
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < 20; ++i) {
    const LibraryGemmCall call = random_call(rng);
    CandidateRequest r;
    r.id = 7 + static_cast<uint64_t>(i);
    r.name = "gemm.bf16.nt.cublaslt.v130100";
    r.buffers = {{"a", call.dtype, static_cast<uint64_t>(call.m * call.k), BufferSpec::Init::kFill,
                  BufferFill::random(1.0)}};
    r.launches = {library_launch(call)};
    r.checks = {{"c", "c_ref"}};
    std::string attachment;
    const nlohmann::json j = to_json(r, &attachment);
    const CandidateRequest back = candidate_request_from_json(j, &attachment);
    ASSERT_EQ(back.launches.size(), 1U);
    EXPECT_TRUE(back.launches[0].cubin.empty());
    EXPECT_EQ(back.launches[0].function, r.launches[0].function);
    ASSERT_FALSE(back.launches[0].library.is_null());
    expect_same(library_gemm_call_from_json(back.launches[0].library), call);
  }
}

TEST(LibraryCall, KernelLaunchesCarryNoLibraryCall) {
  CandidateRequest r;
  LaunchSpec l;
  l.cubin =
      "\x7f"
      "ELF";
  l.function = "_Z4gemmv";
  r.launches = {l};
  const CandidateRequest back = candidate_request_from_json(to_json(r));
  EXPECT_TRUE(back.launches.at(0).library.is_null());
  EXPECT_FALSE(to_json(r).at("launches").at(0).contains("library"));
}

TEST(LibraryCall, MalformedCallsNameTheirFault) {
  std::mt19937_64 rng(11);
  const nlohmann::json good = to_json(random_call(rng));
  const auto error_of = [](const nlohmann::json& j) -> std::string {
    try {
      library_gemm_call_from_json(j);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  nlohmann::json j = good;
  j["call"] = "cublas_trsm";
  EXPECT_NE(error_of(j).find("cublas_trsm"), std::string::npos);
  j = good;
  j["layout"] = "tt";
  EXPECT_NE(error_of(j).find("tt"), std::string::npos);
  j = good;
  j["layout"] = "nt+silu";  // cuBLASLt has no SiLU epilogue
  EXPECT_NE(error_of(j).find("nt+silu"), std::string::npos);
  LibraryGemmCall biased = random_call(rng);
  biased.fp8 = false;
  biased.dtype = DType::kBF16;
  biased.layout = "nn+bias";
  j = to_json(biased);
  EXPECT_TRUE(error_of(j).empty()) << error_of(j);
  j.erase("bias");
  EXPECT_NE(error_of(j).find("bias"), std::string::npos) << error_of(j);
  j = good;
  j["m"] = 0;
  EXPECT_NE(error_of(j).find("positive"), std::string::npos);
  j = good;
  j.erase("algorithm");
  EXPECT_NE(error_of(j).find("algorithm"), std::string::npos);
  j = good;
  j["k"] = "many";
  EXPECT_FALSE(error_of(j).empty());
  EXPECT_FALSE(error_of(nlohmann::json::array()).empty());
  LibraryGemmCall fp8 = random_call(rng);
  fp8.fp8 = true;
  fp8.layout = "nt";
  j = to_json(fp8);
  EXPECT_TRUE(error_of(j).empty()) << error_of(j);
  j.erase("b_scale");
  EXPECT_NE(error_of(j).find("b_scale"), std::string::npos) << error_of(j);
  j = to_json(fp8);
  j["layout"] = "nn";
  EXPECT_NE(error_of(j).find("nt only"), std::string::npos) << error_of(j);
  EXPECT_TRUE(error_of(good).empty());
}

}  // namespace
}  // namespace ktune::measure
