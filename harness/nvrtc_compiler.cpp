#include "harness/nvrtc_compiler.hpp"

#include <fmt/format.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <regex>

#include "harness/cuda_check.hpp"
#include "harness/nvrtc_api.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// Bump when the way a request becomes NVRTC options changes, so old cache entries stop matching.
constexpr int kRecipeVersion = 1;

/// Options ktune always passes besides the request's own: C++17 unless the request picks a standard,
/// and the ptxas verbose report that parse_ptxas_report reads.
std::vector<std::string> effective_options(const CompileRequest& r) {
  std::vector<std::string> out = {"--gpu-architecture=" + r.arch, "-Xptxas=-v"};
  bool has_std = false;
  for (const std::string& o : r.options)
    has_std = has_std || o.rfind("-std=", 0) == 0 || o.rfind("--std=", 0) == 0;
  if (!has_std) out.emplace_back("-std=c++17");
  out.insert(out.end(), r.options.begin(), r.options.end());
  return out;
}

void validate(const CompileRequest& r) {
  static const std::regex kArch(R"((sm|compute)_\d+[af]?)");
  if (r.arch.empty())
    throw Error(ErrorKind::kBadInput, "compile request without an architecture (e.g. \"sm_90\")");
  if (!std::regex_match(r.arch, kArch)) {
    throw Error(ErrorKind::kBadInput,
                fmt::format("bad architecture \"{}\": expected sm_XX, e.g. sm_90", r.arch));
  }
  if (r.source.empty() && r.prebuilt_cubin.empty())
    throw Error(ErrorKind::kBadInput, "compile request with an empty source");
}

/// Destroys the program on every path out of compile().
class ProgramGuard {
 public:
  explicit ProgramGuard(nvrtcProgram p) : program_(p) {}
  ProgramGuard(const ProgramGuard&) = delete;
  ProgramGuard& operator=(const ProgramGuard&) = delete;
  ~ProgramGuard() {
    if (program_ != nullptr && nvrtc().nvrtcDestroyProgram(&program_) != NVRTC_SUCCESS) {
      std::fprintf(stderr, "ktune: nvrtcDestroyProgram failed\n");
    }
  }
  nvrtcProgram get() const { return program_; }

 private:
  nvrtcProgram program_;
};

std::string program_log(nvrtcProgram program) {
  const NvrtcApi& api = nvrtc();
  std::size_t size = 0;
  if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

}  // namespace

CompileStore::~CompileStore() = default;

NvrtcCompiler::NvrtcCompiler(CompileStore* store) : store_(store) {}

std::string NvrtcCompiler::cache_key(const CompileRequest& request) const {
  XXH3_state_t* state = XXH3_createState();
  if (state == nullptr) throw Error(ErrorKind::kRuntime, "XXH3_createState: out of memory");
  XXH3_128bits_reset(state);
  // Each field is length-prefixed so that ("ab","c") and ("a","bc") hash differently.
  auto feed = [state](std::string_view field) {
    const std::uint64_t size = field.size();
    XXH3_128bits_update(state, &size, sizeof size);
    XXH3_128bits_update(state, field.data(), field.size());
  };
  if (!request.prebuilt_cubin.empty()) {
    feed("prebuilt");
    feed(request.arch);
    feed(request.prebuilt_cubin);
    for (const std::string& e : request.name_expressions) feed(e);
    const XXH128_hash_t h = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    return fmt::format("{:016x}{:016x}", h.high64, h.low64);
  }
  const NvrtcApi& api = nvrtc();
  feed(
      fmt::format("ktune-nvrtc-recipe-{} nvrtc-{}.{}", kRecipeVersion, api.version_major, api.version_minor));
  feed(request.arch);
  feed(request.source);
  feed(fmt::format("{} headers", request.headers.size()));
  for (const auto& [name, contents] : request.headers) {
    feed(name);
    feed(contents);
  }
  const std::vector<std::string> options = effective_options(request);
  feed(fmt::format("{} options", options.size()));
  for (const std::string& o : options) feed(o);
  feed(fmt::format("{} names", request.name_expressions.size()));
  for (const std::string& e : request.name_expressions) feed(e);
  const XXH128_hash_t h = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

CompileResult NvrtcCompiler::compile(const CompileRequest& request) {
  validate(request);
  const std::string key = cache_key(request);
  if (!request.prebuilt_cubin.empty()) {
    CompileResult result;
    result.cubin = request.prebuilt_cubin;
    for (const std::string& e : request.name_expressions) result.lowered_names[e] = e;
    result.log = "prebuilt " + request.program_name;
    result.cache_key = key;
    return result;
  }
  if (store_ != nullptr) {
    if (std::optional<CompileResult> hit = store_->find(key)) {
      hit->from_cache = true;
      hit->cache_key = key;
      return *std::move(hit);
    }
  }

  const NvrtcApi& api = nvrtc();
  const auto start = std::chrono::steady_clock::now();
  std::vector<const char*> header_sources;
  std::vector<const char*> header_names;
  for (const auto& [name, contents] : request.headers) {
    header_names.push_back(name.c_str());
    header_sources.push_back(contents.c_str());
  }
  nvrtcProgram raw = nullptr;
  KTUNE_NVRTC_CHECK(api.nvrtcCreateProgram(&raw, request.source.c_str(), request.program_name.c_str(),
                                           static_cast<int>(header_sources.size()), header_sources.data(),
                                           header_names.data()),
                    std::string());
  ProgramGuard program(raw);
  for (const std::string& e : request.name_expressions) {
    KTUNE_NVRTC_CHECK(api.nvrtcAddNameExpression(program.get(), e.c_str()), std::string());
  }
  const std::vector<std::string> options = effective_options(request);
  std::vector<const char*> option_ptrs;
  for (const std::string& o : options) option_ptrs.push_back(o.c_str());

  const nvrtcResult rc =
      api.nvrtcCompileProgram(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());
  CompileResult result;
  result.log = program_log(program.get());
  if (rc != NVRTC_SUCCESS) {
    const std::string call = fmt::format("nvrtcCompileProgram({}, {})", request.program_name, request.arch);
    throw_nvrtc_error(rc, call.c_str(), KTUNE_WHERE, result.log);
  }
  std::size_t cubin_size = 0;
  KTUNE_NVRTC_CHECK(api.nvrtcGetCUBINSize(program.get(), &cubin_size), result.log);
  result.cubin.resize(cubin_size);
  KTUNE_NVRTC_CHECK(api.nvrtcGetCUBIN(program.get(), result.cubin.data()), result.log);
  for (const std::string& e : request.name_expressions) {
    const char* lowered = nullptr;
    KTUNE_NVRTC_CHECK(api.nvrtcGetLoweredName(program.get(), e.c_str(), &lowered), result.log);
    result.lowered_names[e] = lowered;
  }
  result.resources = parse_ptxas_report(result.log);
  result.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  result.cache_key = key;
  compiles_done_.fetch_add(1);

  if (store_ != nullptr) {
    try {
      store_->store(key, result);
    } catch (const Error& e) {
      // The compile itself succeeded; a cache that cannot be written only costs a recompile later.
      std::fprintf(stderr, "ktune: warning: compile cache write failed: %s\n", e.what());
    }
  }
  return result;
}

}  // namespace ktune::harness
