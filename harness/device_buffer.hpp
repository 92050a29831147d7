#pragma once
/// RAII device allocation (cuMemAlloc / cuMemFree) in the current context, with typed copies.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <span>
#include <utility>
#include <vector>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::harness {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (> 0) in the current context. Throws Error (CUDA_ERROR_OUT_OF_MEMORY, ...).
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    KTUNE_CU_CHECK(driver().cuMemAlloc(&ptr_, bytes));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, 0)), bytes_(std::exchange(other.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, 0);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { reset(); }

  /// A buffer holding a copy of `host`.
  template <class T>
  static DeviceBuffer from_host(std::span<const T> host) {
    DeviceBuffer buffer(host.size_bytes());
    buffer.upload(host.data(), host.size_bytes());
    return buffer;
  }

  CUdeviceptr get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  /// The address as a kernel argument slot: `void* args[] = {buf.arg(), ...}`.
  void* arg() noexcept { return &ptr_; }

  /// Synchronous copies; `offset` in bytes.
  void upload(const void* src, std::size_t bytes, std::size_t offset = 0) {
    KTUNE_CU_CHECK(driver().cuMemcpyHtoD(ptr_ + offset, src, bytes));
  }
  void download(void* dst, std::size_t bytes, std::size_t offset = 0) const {
    KTUNE_CU_CHECK(driver().cuMemcpyDtoH(dst, ptr_ + offset, bytes));
  }
  /// The first `count` elements as T.
  template <class T>
  std::vector<T> download_as(std::size_t count) const {
    std::vector<T> out(count);
    download(out.data(), count * sizeof(T));
    return out;
  }
  /// Fills every 32-bit word with `value` (e.g. a NaN pattern to poison outputs).
  void fill_u32(std::uint32_t value) { KTUNE_CU_CHECK(driver().cuMemsetD32(ptr_, value, bytes_ / 4)); }
  void fill_u8(std::uint8_t value) { KTUNE_CU_CHECK(driver().cuMemsetD8(ptr_, value, bytes_)); }

  /// Frees now (never throws; a failure is logged to stderr).
  void reset() noexcept {
    if (ptr_ != 0) {
      const CUresult r = driver().cuMemFree(ptr_);
      if (r != CUDA_SUCCESS) std::fprintf(stderr, "ktune: cuMemFree failed: %s\n", cu_error_name(r).c_str());
      ptr_ = 0;
      bytes_ = 0;
    }
  }

 private:
  CUdeviceptr ptr_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace ktune::harness
