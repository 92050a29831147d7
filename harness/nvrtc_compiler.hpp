#pragma once
/// Compiles CUDA C++ to CUBIN with NVRTC (D1, D3): name expressions select template instantiations,
/// the ptxas verbose report gives each kernel's registers, shared memory and spills, and an optional
/// CompileStore (the ConfigCache's compile cache, D6) serves repeated requests without compiling.
/// A request may also carry a cubin compiled elsewhere (a Triton config, compiled ahead of time):
/// it is handed back as the result, with no NVRTC and no store, so every consumer of compile
/// results takes it the same way.
/// Thread-safe: many threads may call compile() at once (each uses its own nvrtcProgram).

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/ptxas_report.hpp"

#include "ktune/error.hpp"

namespace ktune::harness {

struct CompileRequest {
  std::string source;
  std::string program_name = "ktune_kernel.cu";
  std::vector<std::string> name_expressions;  ///< e.g. "gemm<128,128,32,__nv_bfloat16>"
  std::vector<std::string> options;           ///< extra NVRTC options ("-std=c++17" is the default)
  std::string arch;                           ///< "sm_90"; required
  std::vector<std::pair<std::string, std::string>> headers;  ///< (include name, contents)
  /// Non-empty: the binary, already compiled; `name_expressions` are its entry names, and the
  /// source, headers and options are unused.
  std::string prebuilt_cubin;
};

struct CompileResult {
  std::string cubin;                                 ///< binary bytes
  std::map<std::string, std::string> lowered_names;  ///< name expression -> lowered (mangled) name
  std::string log;
  std::map<std::string, KernelResources> resources;  ///< lowered name -> resources
  double compile_ms = 0;  ///< time spent in NVRTC (of the original compile, when from_cache)
  bool from_cache = false;
  std::string cache_key;
};

/// Where compiled results are kept between requests (and processes).
class CompileStore {
 public:
  virtual ~CompileStore();
  virtual std::optional<CompileResult> find(const std::string& key) = 0;
  virtual void store(const std::string& key, const CompileResult& result) = 0;
};

class NvrtcCompiler {
 public:
  /// `store` (optional, not owned, must outlive the compiler and be thread-safe) serves and keeps results.
  explicit NvrtcCompiler(CompileStore* store = nullptr);

  /// Compiles `request` (or serves it from the store). Throws Error(kBadInput) for an empty arch or
  /// source, Error(kRuntime, api_code "NVRTC_ERROR_COMPILATION", detail = the full log) for a compile
  /// error, Error(kNoDevice) when NVRTC cannot be opened.
  CompileResult compile(const CompileRequest& request);

  /// Compiles actually run by this compiler (cache hits not counted).
  int compiles_done() const noexcept { return compiles_done_.load(); }

  /// Hex xxHash3-128 of source, headers, options, name expressions, arch and the NVRTC version; of a
  /// prebuilt request, of its cubin, names and arch (no NVRTC needed).
  std::string cache_key(const CompileRequest& request) const;

 private:
  CompileStore* store_;
  std::atomic<int> compiles_done_{0};
};

}  // namespace ktune::harness
