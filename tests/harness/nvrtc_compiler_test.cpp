// NVRTC compiler, toolkit only (no GPU): templated kernels with name expressions, the compile log on
// a syntax error, cache hits (in memory and in the ConfigCache database), concurrent compiles.

#include "harness/nvrtc_compiler.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <filesystem>
#include <mutex>
#include <thread>

#include "cache/config_cache.hpp"
#include "harness/cuda_check.hpp"
#include "harness/cupti_api.hpp"
#include "harness/nvrtc_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

constexpr const char* kSource = R"(
template <int N, typename T>
__global__ void scale_add(T* out, const T* in, T alpha, int n) {
  __shared__ T tile[N * 32];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x % (N * 32)] = i < n ? in[i] : T(0);
  __syncthreads();
  if (i < n) out[i] = alpha * tile[(threadIdx.x + 1) % (N * 32)] + T(N);
}
)";

CompileRequest request(const std::string& arch) {
  CompileRequest r;
  r.source = kSource;
  r.program_name = "scale_add.cu";
  r.name_expressions = {"scale_add<2, float>", "scale_add<4, double>"};
  r.arch = arch;
  return r;
}

/// A thread-safe in-memory CompileStore.
class MemoryStore : public CompileStore {
 public:
  std::optional<CompileResult> find(const std::string& key) override {
    std::lock_guard lock(mutex_);
    auto it = results_.find(key);
    if (it == results_.end()) return std::nullopt;
    return it->second;
  }
  void store(const std::string& key, const CompileResult& result) override {
    std::lock_guard lock(mutex_);
    results_[key] = result;
  }

 private:
  std::mutex mutex_;
  std::map<std::string, CompileResult> results_;
};

/// CompileStore over the ConfigCache's compile cache table.
class ConfigCacheStore : public CompileStore {
 public:
  explicit ConfigCacheStore(cache::ConfigCache& db) : db_(db) {}
  std::optional<CompileResult> find(const std::string& key) override {
    std::lock_guard lock(mutex_);
    std::optional<cache::CompiledArtifact> a = db_.find_compiled(key);
    if (!a) return std::nullopt;
    CompileResult r;
    r.cubin = a->cubin;
    r.log = a->log;
    r.lowered_names = nlohmann::json::parse(a->lowered_names_json).get<std::map<std::string, std::string>>();
    r.resources = resources_from_json(a->resources_json);
    r.compile_ms = a->compile_ms;
    return r;
  }
  void store(const std::string& key, const CompileResult& result) override {
    cache::CompiledArtifact a;
    a.key = key;
    a.cubin = result.cubin;
    a.log = result.log;
    a.lowered_names_json = nlohmann::json(result.lowered_names).dump();
    a.resources_json = resources_to_json(result.resources);
    a.compile_ms = result.compile_ms;
    std::lock_guard lock(mutex_);
    db_.store_compiled(a);
  }

 private:
  std::mutex mutex_;
  cache::ConfigCache& db_;
};

void expect_valid(const CompileResult& r, const std::string& arch) {
  ASSERT_GT(r.cubin.size(), 4u) << arch;
  EXPECT_EQ(r.cubin.substr(0, 4),
            "\x7f"
            "ELF")
      << "not a CUBIN (ELF) for " << arch;
  ASSERT_EQ(r.lowered_names.size(), 2u);
  const std::string& f = r.lowered_names.at("scale_add<2, float>");
  const std::string& d = r.lowered_names.at("scale_add<4, double>");
  EXPECT_EQ(f, "_Z9scale_addILi2EfEvPT0_PKS0_S0_i");
  EXPECT_EQ(d, "_Z9scale_addILi4EdEvPT0_PKS0_S0_i");
  ASSERT_TRUE(r.resources.count(f)) << r.log;
  ASSERT_TRUE(r.resources.count(d)) << r.log;
  EXPECT_GT(r.resources.at(f).registers, 0);
  EXPECT_EQ(r.resources.at(f).shared_bytes, 2 * 32 * 4);  // tile[N * 32] of float, N = 2
  EXPECT_EQ(r.resources.at(d).shared_bytes, 4 * 32 * 8);  // tile[N * 32] of double, N = 4
  EXPECT_NE(r.log.find("for '" + arch + "'"), std::string::npos) << r.log;
  EXPECT_GT(r.compile_ms, 0.0);
  EXPECT_FALSE(r.from_cache);
  EXPECT_EQ(r.cache_key.size(), 32u);
}

TEST(NvrtcCompiler, TemplatedKernelForSm80AndSm90) {
  NvrtcCompiler compiler;
  for (const std::string arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    expect_valid(compiler.compile(request(arch)), arch);
  }
  EXPECT_EQ(compiler.compiles_done(), 2);
}

TEST(NvrtcCompiler, SyntaxErrorCarriesTheLog) {
  NvrtcCompiler compiler;
  CompileRequest r = request("sm_90");
  r.source = "__global__ void broken(int* p) { p[0] = 1 }\n";
  r.name_expressions = {"broken"};
  r.program_name = "broken.cu";
  try {
    compiler.compile(r);
    FAIL() << "a syntax error compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_EQ(e.api_code(), "NVRTC_ERROR_COMPILATION");
    EXPECT_NE(e.detail().find("broken.cu"), std::string::npos) << e.detail();
    EXPECT_NE(e.detail().find("error"), std::string::npos) << e.detail();
    EXPECT_NE(std::string(e.what()).find("nvrtcCompileProgram"), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("nvrtc_compiler.cpp:"), std::string::npos) << e.where();
  }
  EXPECT_EQ(compiler.compiles_done(), 0);
}

TEST(NvrtcCompiler, BadRequestsAreBadInput) {
  NvrtcCompiler compiler;
  CompileRequest r = request("");
  EXPECT_THROW(
      try { compiler.compile(r); } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
        throw;
      },
      Error);
  r.arch = "hopper";
  try {
    compiler.compile(r);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kBadInput);
    EXPECT_NE(std::string(e.what()).find("hopper"), std::string::npos);
  }
}

TEST(NvrtcCompiler, CacheKeyCoversEveryInput) {
  NvrtcCompiler compiler;
  const CompileRequest base = request("sm_90");
  const std::string key = compiler.cache_key(base);
  EXPECT_EQ(compiler.cache_key(base), key);
  auto changed = [&](auto mutate) {
    CompileRequest r = base;
    mutate(r);
    return compiler.cache_key(r);
  };
  EXPECT_NE(changed([](CompileRequest& r) { r.arch = "sm_80"; }), key);
  EXPECT_NE(changed([](CompileRequest& r) { r.source += " "; }), key);
  EXPECT_NE(changed([](CompileRequest& r) { r.options.push_back("-DX=1"); }), key);
  EXPECT_NE(changed([](CompileRequest& r) { r.name_expressions.pop_back(); }), key);
  EXPECT_NE(changed([](CompileRequest& r) { r.headers.emplace_back("a.h", "int a;"); }), key);
  // Field boundaries matter: moving text between two fields changes the key.
  EXPECT_NE(
      changed([](CompileRequest& r) { r.name_expressions = {"scale_add<2, float>scale_add<4, double>"}; }),
      key);
}

TEST(NvrtcCompiler, SecondRequestServedFromMemoryStore) {
  MemoryStore store;
  NvrtcCompiler compiler(&store);
  const CompileResult first = compiler.compile(request("sm_90"));
  ASSERT_EQ(compiler.compiles_done(), 1);
  const CompileResult second = compiler.compile(request("sm_90"));
  EXPECT_EQ(compiler.compiles_done(), 1) << "the identical request was compiled again";
  EXPECT_TRUE(second.from_cache);
  EXPECT_EQ(second.cubin, first.cubin);
  EXPECT_EQ(second.lowered_names, first.lowered_names);
  EXPECT_EQ(second.cache_key, first.cache_key);
  compiler.compile(request("sm_80"));
  EXPECT_EQ(compiler.compiles_done(), 2) << "another arch must compile";
}

TEST(NvrtcCompiler, SecondRequestServedFromConfigCacheDatabase) {
  const auto db_path =
      std::filesystem::temp_directory_path() / ("ktune_nvrtc_cache_" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(db_path);
  CompileResult first;
  {
    cache::ConfigCache db = cache::ConfigCache::open(db_path);
    ConfigCacheStore store(db);
    NvrtcCompiler compiler(&store);
    first = compiler.compile(request("sm_90"));
    EXPECT_EQ(compiler.compiles_done(), 1);
  }
  {  // A new database connection and compiler, as in a later process.
    cache::ConfigCache db = cache::ConfigCache::open(db_path);
    ConfigCacheStore store(db);
    NvrtcCompiler compiler(&store);
    const CompileResult second = compiler.compile(request("sm_90"));
    EXPECT_EQ(compiler.compiles_done(), 0) << "the cached CUBIN was not used";
    EXPECT_TRUE(second.from_cache);
    EXPECT_EQ(second.cubin, first.cubin);
    EXPECT_EQ(second.lowered_names, first.lowered_names);
    EXPECT_EQ(second.resources, first.resources);
    EXPECT_EQ(second.log, first.log);
  }
  std::filesystem::remove(db_path);
}

TEST(NvrtcCompiler, ConcurrentCompilesFromFourThreads) {
  constexpr int kThreads = 4;
  MemoryStore store;
  NvrtcCompiler compiler(&store);
  std::vector<CompileResult> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        CompileRequest r = request("sm_90");
        r.name_expressions = {"scale_add<" + std::to_string(t + 1) + ", float>"};  // distinct per thread
        results[t] = compiler.compile(r);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(errors[t], "") << "thread " << t;
    EXPECT_FALSE(results[t].cubin.empty()) << "thread " << t;
    const std::string& lowered =
        results[t].lowered_names.at("scale_add<" + std::to_string(t + 1) + ", float>");
    EXPECT_EQ(results[t].resources.at(lowered).shared_bytes, (t + 1) * 32 * 4) << "thread " << t;
  }
  EXPECT_EQ(compiler.compiles_done(), kThreads);
}

TEST(CheckMacros, NvrtcErrorUsesNvrtcsOwnNameAndKeepsTheLog) {
  const NvrtcApi& api = nvrtc();
  EXPECT_GE(api.version_major, 12);
  try {
    KTUNE_NVRTC_CHECK(api.nvrtcCompileProgram(nullptr, 0, nullptr), std::string("the log"));
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.api_code(), api.nvrtcGetErrorString(NVRTC_ERROR_INVALID_PROGRAM));
    EXPECT_EQ(e.detail(), "the log");
    EXPECT_NE(std::string(e.what()).find("nvrtcCompileProgram(nullptr, 0, nullptr)"), std::string::npos);
    EXPECT_NE(e.where().find("nvrtc_compiler_test.cpp:"), std::string::npos);
  }
}

TEST(CheckMacros, CuptiErrorUsesCuptisOwnName) {
  std::string why;
  const CuptiApi* api = cupti_or_null(&why);
  ASSERT_NE(api, nullptr) << why;
  const char* expected = nullptr;
  ASSERT_EQ(api->cuptiGetResultString(CUPTI_ERROR_INVALID_PARAMETER, &expected), CUPTI_SUCCESS);
  try {
    KTUNE_CUPTI_CHECK(api->cuptiGetResultString(CUPTI_SUCCESS, nullptr));  // null out-pointer
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_EQ(e.api_code(), expected);
    EXPECT_NE(std::string(e.what()).find("cuptiGetResultString(CUPTI_SUCCESS, nullptr)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace ktune::harness
