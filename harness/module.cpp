#include "harness/module.hpp"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "harness/cuda_check.hpp"
#include "harness/driver_api.hpp"

namespace ktune::harness {

Module Module::load(std::string_view cubin) {
  if (cubin.empty()) throw Error(ErrorKind::kBadInput, "Module::load: empty cubin");
  CUmodule m = nullptr;
  KTUNE_CU_CHECK(driver().cuModuleLoadData(&m, cubin.data()));
  return Module(m);
}

Module::Module(Module&& other) noexcept : module_(std::exchange(other.module_, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    Module old(std::move(*this));
    module_ = std::exchange(other.module_, nullptr);
  }
  return *this;
}

Module::~Module() {
  if (module_ == nullptr) return;
  const DriverApi* api = driver_table_or_null();
  if (api == nullptr) return;
  const CUresult r = api->cuModuleUnload(module_);
  if (r != CUDA_SUCCESS) std::fprintf(stderr, "ktune: cuModuleUnload failed: %s\n", cu_error_name(r).c_str());
}

CUfunction Module::function(const std::string& lowered_name) const {
  CUfunction f = nullptr;
  const CUresult r = driver().cuModuleGetFunction(&f, module_, lowered_name.c_str());
  if (r != CUDA_SUCCESS) {
    const std::string call = "cuModuleGetFunction(\"" + lowered_name + "\")";
    throw_cu_error(r, call.c_str(), KTUNE_WHERE);
  }
  return f;
}

void allow_dynamic_smem(CUfunction func, unsigned dynamic_bytes) {
  constexpr int kWithoutOptIn = 48 * 1024;
  if (dynamic_bytes == 0) return;
  int static_bytes = 0;
  KTUNE_CU_CHECK(driver().cuFuncGetAttribute(&static_bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, func));
  if (static_bytes + static_cast<int>(dynamic_bytes) <= kWithoutOptIn) return;
  KTUNE_CU_CHECK(driver().cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                             static_cast<int>(dynamic_bytes)));
}

void allow_cluster_size(CUfunction func) {
  constexpr int kPortableClusterSize = 8;
  int blocks = 1;
  for (CUfunction_attribute a :
       {CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT,
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH}) {
    int v = 0;
    // A driver or device without clusters may refuse the query: then there is nothing to allow.
    if (driver().cuFuncGetAttribute(&v, a, func) != CUDA_SUCCESS) return;
    blocks *= std::max(v, 1);
  }
  if (blocks <= kPortableClusterSize) return;
  KTUNE_CU_CHECK(driver().cuFuncSetAttribute(func, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1));
}

void prepare_function(CUfunction func, unsigned dynamic_bytes) {
  allow_dynamic_smem(func, dynamic_bytes);
  allow_cluster_size(func);
}

void launch(CUfunction func, Dim3 grid, Dim3 block, unsigned smem_bytes, CUstream stream, void** args) {
  KTUNE_CU_CHECK(driver().cuLaunchKernel(func, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem_bytes,
                                         stream, args, nullptr));
}

}  // namespace ktune::harness
