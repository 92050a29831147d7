/// The C ABI (include/ktune/ktune.h) over the ConfigCache. Every entry point is a `noexcept`
/// wrapper that turns any exception into a return code plus the thread's last error, so no C++
/// exception ever unwinds into C.

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cache/config_cache.hpp"
#include "core/c_abi_guard.hpp"
#include "core/shape.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "ktune/error.hpp"
#include "ktune/ktune.h"
#include "ktune/version.h"

struct ktune_db {
  ktune::cache::ConfigCache cache;
};

namespace {

thread_local std::string t_last_error;

int fail(int code, std::string message) noexcept {
  return ktune::c_abi::fail(t_last_error, code, std::move(message));
}

template <typename Body>
int guarded(Body&& body) noexcept {
  return ktune::c_abi::guarded(t_last_error, std::forward<Body>(body));
}

/// The GPU to look up: `gpu` when given, else the database's only GPU.
std::string resolve_gpu(const ktune::cache::ConfigCache& cache, const char* gpu) {
  if (gpu != nullptr) return gpu;
  auto gpus = cache.gpu_names();
  if (gpus.size() == 1) return gpus.front();
  if (gpus.empty()) throw ktune::Error(ktune::ErrorKind::kNotFound, "the database holds no GPU yet");
  std::string names;
  for (const auto& g : gpus) names += (names.empty() ? "" : ", ") + g;
  throw ktune::Error(ktune::ErrorKind::kBadInput,
                     "gpu is NULL but the database holds several GPUs (" + names + "); name one");
}

char* copy_to_c(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace

extern "C" {

int ktune_open(const char* path, ktune_db** out) {
  if (out != nullptr) *out = nullptr;
  return guarded([&] {
    if (out == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_open: out is NULL");
    std::optional<std::string> flag;
    if (path != nullptr) flag = path;
    auto resolved = ktune::cache::resolve_db_path(flag);
    if (!std::filesystem::exists(resolved)) {
      return fail(KTUNE_ERR_NOT_FOUND, "no database at " + resolved.string() + "; run `ktune tune` first");
    }
    *out =
        new ktune_db{ktune::cache::ConfigCache::open(resolved, ktune::cache::ConfigCache::Mode::kReadOnly)};
    return KTUNE_OK;
  });
}

int ktune_lookup(ktune_db* db, const char* gpu, const char* kernel, const char* shape, const char* dtype,
                 const char* layout, int allow_fallback, char** json_out) {
  if (json_out != nullptr) *json_out = nullptr;
  return guarded([&] {
    if (db == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_lookup: db is NULL");
    if (kernel == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_lookup: kernel is NULL");
    if (shape == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_lookup: shape is NULL");
    if (dtype == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_lookup: dtype is NULL");
    if (json_out == nullptr) return fail(KTUNE_ERR_BAD_INPUT, "ktune_lookup: json_out is NULL");

    ktune::kernel_templates::KernelDescriptor stored_only;
    const auto* desc = ktune::kernel_templates::lookup_kernel(
        kernel, shape, dtype,
        [&](std::string_view name) { return db->cache.current_source_hash(name).has_value(); }, stored_only);
    ktune::cache::Lookup lookup;
    lookup.dtype = desc->parse_dtype(dtype);
    const std::string chosen_layout = layout != nullptr ? std::string(layout) : desc->default_layout;
    desc->require_layout(chosen_layout);
    const std::string canonical = ktune::Shape::parse(shape).normalized(desc->dims).canonical();

    lookup.gpu_name = resolve_gpu(db->cache, gpu);
    lookup.kernel = desc->name;
    lookup.shape = canonical;
    lookup.layout = chosen_layout;
    auto best = db->cache.best(lookup, allow_fallback != 0);
    if (!best) {
      // A GPU the database does not hold is most often a name spelt otherwise ("H200" for
      // "NVIDIA H200"): the message lists the ones it holds.
      std::string holds;
      if (const auto gpus = db->cache.gpu_names();
          std::find(gpus.begin(), gpus.end(), lookup.gpu_name) == gpus.end()) {
        for (const auto& g : gpus)
          holds += (holds.empty() ? "; the database holds no such GPU, only '" : "', '") + g;
        if (!holds.empty()) holds += "'";
      }
      return fail(KTUNE_ERR_NOT_FOUND, "no tuned config for kernel " + desc->name + ", shape " + canonical +
                                           ", dtype " + to_string(lookup.dtype) + ", layout '" +
                                           chosen_layout + "' on GPU '" + lookup.gpu_name + "'" +
                                           (allow_fallback != 0 ? "" : " (fallback disabled)") + holds);
    }
    // Re-serialised here so the ABI's JSON is compact and always carries these keys.
    auto json = nlohmann::json::parse(best->to_json());
    json["shape"] = best->shape;
    json["tuned_shape"] = best->tuned_shape;
    json["fallback"] = best->fallback;
    *json_out = copy_to_c(json.dump());
    return KTUNE_OK;
  });
}

void ktune_free_string(char* s) { std::free(s); }

void ktune_close(ktune_db* db) {
  t_last_error.clear();
  delete db;  // ~ConfigCache never throws (destructors log)
}

const char* ktune_last_error(void) { return t_last_error.c_str(); }

const char* ktune_version(void) {
  t_last_error.clear();
  return KTUNE_VERSION_STRING;
}

}  // extern "C"
