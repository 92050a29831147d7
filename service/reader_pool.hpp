#pragma once
/// Read-only ConfigCache handles for the request threads. A ConfigCache serialises the calls on one
/// handle, so lookups from many connections spread over several handles (WAL: none of them waits
/// for a running sweep's writes).

#include <filesystem>
#include <memory>
#include <vector>

#include "cache/config_cache.hpp"

namespace ktune::service {

class ReaderPool {
 public:
  /// Opens `handles` read-only handles on `path` (which must exist).
  ReaderPool(const std::filesystem::path& path, size_t handles);
  /// A handle for the calling thread (the same one each time for a thread).
  const cache::ConfigCache& get() const;

 private:
  std::vector<std::unique_ptr<cache::ConfigCache>> handles_;
};

}  // namespace ktune::service
