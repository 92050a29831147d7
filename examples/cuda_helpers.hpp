#pragma once
// What the examples need of the CUDA runtime, as a user's program would write it: a checked call
// and device memory freed at scope exit. Nothing of ktune's internals.

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "ktune/ktune.hpp"

namespace example {

/// Throws ktune::Error naming the failed CUDA call (kNoDevice when there is no usable GPU).
inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  const bool no_gpu = status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver;
  throw ktune::Error(no_gpu ? ktune::ErrorKind::kNoDevice : ktune::ErrorKind::kRuntime,
                     std::string(what) + ": " + cudaGetErrorString(status));
}

/// Device memory, freed at scope exit.
class DeviceMemory {
 public:
  explicit DeviceMemory(std::size_t bytes) : bytes_(bytes) { check(cudaMalloc(&ptr_, bytes), "cudaMalloc"); }
  /// Device memory holding a copy of `host`.
  template <typename T>
  static DeviceMemory of(const std::vector<T>& host) {
    DeviceMemory d(host.size() * sizeof(T));
    check(cudaMemcpy(d.ptr_, host.data(), d.bytes_, cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
  }
  ~DeviceMemory() { cudaFree(ptr_); }
  DeviceMemory(DeviceMemory&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory& operator=(DeviceMemory&&) = delete;

  void* get() const { return ptr_; }
  /// The first `n` elements, copied back (waits for the legacy default stream).
  template <typename T>
  std::vector<T> download(std::size_t n) const {
    std::vector<T> out(n);
    check(cudaMemcpy(out.data(), ptr_, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return out;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace example
