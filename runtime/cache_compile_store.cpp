#include "runtime/cache_compile_store.hpp"

#include <nlohmann/json.hpp>

#include "harness/ptxas_report.hpp"
#include "ktune/error.hpp"

namespace ktune::runtime {

cache::CompiledArtifact to_artifact(const std::string& key, const harness::CompileResult& result) {
  cache::CompiledArtifact a;
  a.key = key;
  a.cubin = result.cubin;
  a.log = result.log;
  a.lowered_names_json = nlohmann::json(result.lowered_names).dump();
  a.resources_json = harness::resources_to_json(result.resources);
  a.compile_ms = result.compile_ms;
  return a;
}

harness::CompileResult from_artifact(const cache::CompiledArtifact& artifact) {
  harness::CompileResult r;
  r.cubin = artifact.cubin;
  r.log = artifact.log;
  try {
    r.lowered_names =
        nlohmann::json::parse(artifact.lowered_names_json).get<std::map<std::string, std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput,
                "compile cache entry " + artifact.key + ": lowered names are not a JSON object: " + e.what());
  }
  r.resources = harness::resources_from_json(artifact.resources_json);
  r.compile_ms = artifact.compile_ms;
  r.from_cache = true;
  r.cache_key = artifact.key;
  return r;
}

CacheCompileStore::CacheCompileStore(cache::ConfigCache& db, std::string kernel_name, std::string source_hash,
                                     bool writable)
    : db_(db),
      kernel_name_(std::move(kernel_name)),
      source_hash_(std::move(source_hash)),
      writable_(writable) {}

std::optional<harness::CompileResult> CacheCompileStore::find(const std::string& key) {
  std::optional<cache::CompiledArtifact> a = db_.find_compiled(key);
  if (!a) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return from_artifact(*a);
}

void CacheCompileStore::store(const std::string& key, const harness::CompileResult& result) {
  if (!writable_) return;
  cache::CompiledArtifact a = to_artifact(key, result);
  a.kernel_name = kernel_name_;
  a.source_hash = source_hash_;
  try {
    db_.store_compiled(a);
  } catch (const Error&) {
    ++failed_stores_;
  }
}

}  // namespace ktune::runtime
