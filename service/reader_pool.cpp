#include "service/reader_pool.hpp"

#include <atomic>

namespace ktune::service {

ReaderPool::ReaderPool(const std::filesystem::path& path, size_t handles) {
  handles_.reserve(handles == 0 ? 1 : handles);
  for (size_t i = 0; i < std::max<size_t>(handles, 1); ++i) {
    handles_.push_back(std::make_unique<cache::ConfigCache>(
        cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly)));
  }
}

const cache::ConfigCache& ReaderPool::get() const {
  // Threads take handles round robin on their first lookup, so they spread evenly.
  static std::atomic<size_t> next{0};
  thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed);
  return *handles_[slot % handles_.size()];
}

}  // namespace ktune::service
