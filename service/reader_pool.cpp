#include "service/reader_pool.hpp"

#include <functional>
#include <thread>

namespace ktune::service {

ReaderPool::ReaderPool(const std::filesystem::path& path, size_t handles) {
  handles_.reserve(handles == 0 ? 1 : handles);
  for (size_t i = 0; i < std::max<size_t>(handles, 1); ++i) {
    handles_.push_back(std::make_unique<cache::ConfigCache>(
        cache::ConfigCache::open(path, cache::ConfigCache::Mode::kReadOnly)));
  }
}

const cache::ConfigCache& ReaderPool::get() const {
  const size_t slot = std::hash<std::thread::id>{}(std::this_thread::get_id()) % handles_.size();
  return *handles_[slot];
}

}  // namespace ktune::service
