#include <cstdlib>

#include "cache/config_cache.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

}  // namespace

std::filesystem::path resolve_db_path(const std::optional<std::string>& flag) {
  if (flag && !flag->empty()) return *flag;
  if (auto p = env("KTUNE_DB")) return *p;
  if (auto xdg = env("XDG_CACHE_HOME")) return std::filesystem::path(*xdg) / "ktune" / "ktune.db";
  if (auto home = env("HOME")) return std::filesystem::path(*home) / ".cache" / "ktune" / "ktune.db";
  throw Error(ErrorKind::kBadInput,
              "no database path: pass --db PATH or set KTUNE_DB (HOME is not set either)");
}

}  // namespace ktune::cache
