#pragma once
/// RAII on a device's primary context: retains it and makes it current on the constructing thread;
/// the destructor releases it (never throws; a failure is logged to stderr).

#include <cuda.h>

#include "ktune/error.hpp"

namespace ktune::harness {

class PrimaryContext {
 public:
  /// Retains device `ordinal`'s primary context and makes it current. Throws kBadInput for a bad
  /// ordinal, kNoDevice without a driver/device, kRuntime for other driver failures.
  explicit PrimaryContext(int ordinal);
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  ~PrimaryContext();

  /// Makes this context current on the calling thread (needed on threads other than the creator).
  void make_current() const;
  /// cuCtxSynchronize on this context; throws Error on a failed (e.g. faulted) context.
  void synchronize() const;

  CUcontext get() const noexcept { return ctx_; }
  CUdevice device() const noexcept { return device_; }
  int ordinal() const noexcept { return ordinal_; }

 private:
  void release() noexcept;
  CUcontext ctx_ = nullptr;
  CUdevice device_ = 0;
  int ordinal_ = -1;
};

}  // namespace ktune::harness
