#include "harness/context.hpp"

#include <cstdio>
#include <utility>

#include "harness/cuda_check.hpp"
#include "harness/device_info.hpp"
#include "harness/driver_api.hpp"

namespace ktune::harness {

PrimaryContext::PrimaryContext(int ordinal) : ordinal_(ordinal) {
  const int count = device_count();
  if (ordinal < 0 || ordinal >= count) {
    throw Error(ErrorKind::kBadInput, "device " + std::to_string(ordinal) +
                                          " does not exist: the driver sees " + std::to_string(count) +
                                          " device(s)");
  }
  const DriverApi& api = driver();
  KTUNE_CU_CHECK(api.cuDeviceGet(&device_, ordinal));
  KTUNE_CU_CHECK(api.cuDevicePrimaryCtxRetain(&ctx_, device_));
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : ctx_(std::exchange(other.ctx_, nullptr)), device_(other.device_), ordinal_(other.ordinal_) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    ctx_ = std::exchange(other.ctx_, nullptr);
    device_ = other.device_;
    ordinal_ = other.ordinal_;
  }
  return *this;
}

PrimaryContext::~PrimaryContext() { release(); }

void PrimaryContext::make_current() const { KTUNE_CU_CHECK(driver().cuCtxSetCurrent(ctx_)); }

void PrimaryContext::synchronize() const {
  make_current();
  KTUNE_CU_CHECK(driver().cuCtxSynchronize());
}

void PrimaryContext::release() noexcept {
  if (ctx_ == nullptr) return;
  const DriverApi* api = driver_table_or_null();
  if (api != nullptr) {
    const CUresult r = api->cuDevicePrimaryCtxRelease(device_);
    if (r != CUDA_SUCCESS) {
      std::fprintf(stderr, "ktune: cuDevicePrimaryCtxRelease(device %d) failed: %s\n", ordinal_,
                   cu_error_name(r).c_str());
    }
  }
  ctx_ = nullptr;
}

}  // namespace ktune::harness
