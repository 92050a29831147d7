// A fingerprint of the code every kernel template generates: for a sample of each spec's configs
// (the suites' shared samples, every dtype and layout/mode the samples cover) and each GPU
// reference, NVRTC compiles one program per (spec, problem) and the test hashes its PTX and its
// cubin. With KTUNE_PTX_FINGERPRINT=FILE set the list is written there; compare two such files
// (before and after a refactor) with diff: a refactor that must not change behaviour leaves every
// line identical. Toolkit only, no GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <xxhash.h>

#include "decode_attention_samples.hpp"
#include "fp8_gemm_samples.hpp"
#include "gemm_mma_samples.hpp"
#include "gemm_samples.hpp"
#include "gemm_wgmma_samples.hpp"
#include "harness/nvrtc_api.hpp"
#include "kernel_templates/compile_request.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "ops_samples.hpp"

namespace ktune::kernel_templates {
namespace {

std::string hex(std::string_view bytes) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
  return buf;
}

/// NVRTC names internal-linkage symbols `<len>_INTERNAL_<hash>_<n>_<file>_cu_<hash>_<pid>...`, the
/// last part different in every process: each such identifier (its length prefix says where it
/// ends) becomes `_INTERNAL_`, so that two runs of one compile hash alike.
std::string normalized(std::string text) {
  static constexpr std::string_view kTag = "_INTERNAL_";
  std::size_t pos = 0;
  while ((pos = text.find(kTag, pos)) != std::string::npos) {
    std::size_t digits = pos;
    while (digits > 0 && text[digits - 1] >= '0' && text[digits - 1] <= '9') --digits;
    if (digits == pos) {
      pos += kTag.size();
      continue;
    }
    const std::size_t len = std::stoul(text.substr(digits, pos - digits));
    text.replace(digits, pos - digits + len, kTag);
    pos = digits + kTag.size();
  }
  return text;
}

struct Fingerprint {
  std::string ptx;
  std::string cubin;
};

/// PTX and cubin of one NVRTC program, compiled exactly as harness::NvrtcCompiler compiles it.
Fingerprint compile(const harness::CompileRequest& r) {
  const harness::NvrtcApi& api = harness::nvrtc();
  std::vector<const char*> names, texts;
  for (const auto& [n, t] : r.headers) {
    names.push_back(n.c_str());
    texts.push_back(t.c_str());
  }
  nvrtcProgram p = nullptr;
  EXPECT_EQ(api.nvrtcCreateProgram(&p, r.source.c_str(), r.program_name.c_str(),
                                   static_cast<int>(texts.size()), texts.data(), names.data()),
            NVRTC_SUCCESS);
  for (const auto& e : r.name_expressions) api.nvrtcAddNameExpression(p, e.c_str());
  std::vector<std::string> options = {"--gpu-architecture=" + r.arch, "-Xptxas=-v"};
  bool has_std = false;
  for (const std::string& o : r.options)
    has_std = has_std || o.rfind("-std=", 0) == 0 || o.rfind("--std=", 0) == 0;
  if (!has_std) options.emplace_back("-std=c++17");
  options.insert(options.end(), r.options.begin(), r.options.end());
  std::vector<const char*> opts;
  for (const auto& o : options) opts.push_back(o.c_str());
  Fingerprint f;
  if (api.nvrtcCompileProgram(p, static_cast<int>(opts.size()), opts.data()) != NVRTC_SUCCESS) {
    std::size_t n = 0;
    api.nvrtcGetProgramLogSize(p, &n);
    std::string log(n, '\0');
    api.nvrtcGetProgramLog(p, log.data());
    ADD_FAILURE() << r.program_name << ": " << log;
  } else {
    std::size_t n = 0;
    api.nvrtcGetPTXSize(p, &n);
    std::string ptx(n, '\0');
    api.nvrtcGetPTX(p, ptx.data());
    api.nvrtcGetCUBINSize(p, &n);
    std::string cubin(n, '\0');
    api.nvrtcGetCUBIN(p, cubin.data());
    f = {hex(normalized(ptx)), hex(normalized(cubin))};
    if (const char* dir = std::getenv("KTUNE_PTX_DUMP"); dir != nullptr && *dir != '\0') {
      std::ofstream(std::string(dir) + "/" +
                    hex(r.program_name + r.arch +
                        [&] {
                          std::string all;
                          for (const auto& e : r.name_expressions) all += e + ";";
                          return all;
                        }()) +
                    ".ptx")
          << ptx;
    }
  }
  api.nvrtcDestroyProgram(&p);
  return f;
}

struct Group {
  std::string kernel, variant;
  Problem problem;
  std::vector<Config> configs;
};

std::string arch_of(const KernelSpec& spec) {
  for (const char* a : {"sm_90", "sm_90a", "sm_89"}) {
    if (!spec.arch_rejection(a)) return a;
  }
  return "sm_90a";
}

std::vector<Group> groups() {
  using namespace testing;
  std::vector<Group> g;
  for (DType t : gemm_dtypes()) {
    for (const char* layout : {"nt", "nn"}) {
      g.push_back({"gemm", "tiled", gemm_problem(77, 93, 331, t, layout), tiled_samples()});
      g.push_back({"gemm", "gemv", gemm_problem(1, 4096, 4096, t, layout), gemv_samples()});
      g.push_back({"gemm", "mma", gemm_problem(77, 93, 331, t, layout), mma_samples()});
      g.push_back({"gemm", "wgmma", gemm_problem(77, 93, 331, t, layout), wgmma_samples()});
      g.push_back({"gemm", "wgmma_tma", gemm_problem(200, 300, 520, t, layout), wgmma_samples()});
    }
  }
  for (const char* layout : {"nt+bias+silu", "nn+bias", "nt+silu"}) {
    g.push_back({"gemm", "mma", gemm_problem(100, 200, 300, DType::kBF16, layout), mma_samples()});
    g.push_back({"gemm", "wgmma", gemm_problem(100, 200, 300, DType::kBF16, layout), wgmma_samples()});
  }
  for (const char* layout : {"nt", "nt+rowcol"}) {
    g.push_back({"fp8_gemm", "mma", fp8_problem(77, 93, 336, layout), fp8_samples()});
    g.push_back({"fp8_gemm", "wgmma_tma", fp8_problem(77, 93, 336, layout), fp8_wgmma_samples()});
  }
  for (DType t : ops_dtypes()) {
    g.push_back({"rmsnorm", "rowwise", {{{"rows", 7}, {"hidden", 4096}}, t, ""}, rmsnorm_samples(t)});
    g.push_back({"rmsnorm", "rowwise", {{{"rows", 7}, {"hidden", 1024}}, t, "residual"}, rmsnorm_samples(t)});
    g.push_back({"rmsnorm", "bulk", {{{"rows", 7}, {"hidden", 4096}}, t, ""}, rmsnorm_bulk_samples(t)});
    g.push_back(
        {"rmsnorm", "bulk", {{{"rows", 7}, {"hidden", 1024}}, t, "residual"}, rmsnorm_bulk_samples(t)});
    for (const char* mode : {"", "causal", "padding"}) {
      g.push_back({"softmax", "rowwise", {{{"rows", 9}, {"cols", 4096}}, t, mode}, softmax_samples(t)});
      g.push_back({"softmax", "rowwise", {{{"rows", 9}, {"cols", 32768}}, t, mode}, softmax_long_samples(t)});
      g.push_back(
          {"softmax", "cluster", {{{"rows", 7}, {"cols", 262144}}, t, mode}, softmax_cluster_samples(t)});
    }
    for (const char* mode : {"neox", "gptj"}) {
      const Problem rope{{{"tokens", 5}, {"heads_q", 32}, {"heads_kv", 8}, {"head_dim", 128}}, t, mode};
      g.push_back({"rmsnorm_rope", "headwise", rope, rope_samples()});
      g.push_back({"rmsnorm_rope", "bulk", rope, rope_bulk_samples()});
    }
    for (const char* mode : {"fused", "split"}) {
      g.push_back({"swiglu", "elementwise", {{{"m", 5}, {"i", 14336}}, t, mode}, swiglu_samples(t)});
    }
  }
  for (int64_t d : {64, 128}) {
    Problem p = decode_problem(3, 32, 8, 4097, d);
    for (DType t : ops_dtypes()) {
      p.dtype = t;
      g.push_back({"decode_attention", "splitkv", p, decode_attention_samples()});
      g.push_back({"decode_attention", "mma", p, decode_attention_mma_samples()});
      g.push_back({"decode_attention", "mma_cluster", p, decode_attention_mma_cluster_samples()});
    }
  }
  return g;
}

TEST(PtxFingerprint, EveryTemplateSample) {
  const SourceLibrary lib = SourceLibrary::builtin();
  std::vector<std::string> lines;
  const char* filter = std::getenv("KTUNE_PTX_FILTER");
  for (const Group& g : groups()) try {
      if (filter != nullptr && (g.kernel + "." + g.variant).find(filter) == std::string::npos) continue;
      const KernelSpec& spec = find_spec(g.kernel, g.variant);
      const std::string arch = arch_of(spec);
      const std::string label =
          g.kernel + "." + g.variant + "." + std::string(ktune::to_string(g.problem.dtype)) + "." +
          (g.problem.layout.empty() ? "-" : g.problem.layout) + "@" + g.problem.shape_text() + " " + arch;
      // One program per distinct (source, options): the accepted configs' name expressions together.
      std::map<std::pair<std::string, std::vector<std::string>>, std::vector<std::string>> programs;
      std::size_t accepted = 0;
      for (const Config& c : g.configs) {
        if (spec.rejection(g.problem, c)) continue;
        ++accepted;
        const CompileSpec cs = spec.compile_spec(g.problem, c);
        auto& names = programs[{cs.source_name, cs.options}];
        for (const auto& e : cs.name_expressions) {
          if (std::find(names.begin(), names.end(), e) == names.end()) names.push_back(e);
        }
      }
      if (accepted == 0) continue;  // a dtype or mode the template lacks
      std::printf("%s\n", label.c_str());
      std::fflush(stdout);
      for (const auto& [key, names] : programs) {
        CompileSpec cs{key.first, names, key.second};
        const Fingerprint f = compile(make_compile_request(cs, lib, arch));
        std::string all_names;
        for (const auto& n : names) all_names += n + ";";
        lines.push_back(label + " " + key.first + " n=" + std::to_string(names.size()) +
                        " names=" + hex(all_names) + " ptx=" + f.ptx + " cubin=" + f.cubin);
      }
      const CompileSpec ref = spec.reference(g.problem).compile;
      const Fingerprint f = compile(make_compile_request(ref, lib, arch));
      lines.push_back(label + " reference " + ref.source_name + " ptx=" + f.ptx + " cubin=" + f.cubin);
    } catch (const std::exception& e) {
      ADD_FAILURE() << g.kernel << "." << g.variant << " " << g.problem.shape_text() << ": " << e.what();
      lines.push_back(g.kernel + "." + g.variant + " " + g.problem.shape_text() + " error " + e.what());
    }
  for (const auto& [kernel, hash] : current_template_hashes())
    lines.push_back("template_source_hash " + kernel + " " + hash);
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  const char* out = std::getenv("KTUNE_PTX_FINGERPRINT");
  if (out != nullptr && *out != '\0') {
    std::ofstream f(out);
    for (const auto& l : lines) f << l << "\n";
  }
  for (const auto& l : lines) std::printf("%s\n", l.c_str());
}

}  // namespace
}  // namespace ktune::kernel_templates
