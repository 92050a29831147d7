#pragma once
/// The CUDA driver API, opened at run time from libcuda.so.1 (D2).
///
/// Every entry point is resolved through cuGetProcAddress_v2 with an EXPLICIT ABI version and typed
/// with the matching PFN_<name>_v<version> typedef of cudaTypedefs.h. Resolving with CUDA_VERSION and
/// calling through cuda.h's prototypes breaks: at 13000 "cuCtxSynchronize" resolves to the CUDA 13 ABI
/// cuCtxSynchronize_v2(CUcontext) while cuda.h declares cuCtxSynchronize(void) (seen on the H200 as
/// CUDA_ERROR_CONTEXT_IS_DESTROYED).
///
/// Members are named exactly like the CUDA functions: `driver().cuLaunchKernel(...)`. Wrap calls in
/// KTUNE_CU_CHECK (harness/cuda_check.hpp).

#include <cuda.h>
#include <cudaTypedefs.h>

#include <string>

#include "ktune/error.hpp"

/// X(name, abi_version) for every driver function ktune uses. To add one: pick the version whose
/// PFN_<name>_v<version> in cudaTypedefs.h has the signature you want (not a _ptds/_ptsz variant).
#define KTUNE_DRIVER_FUNCS(X)                          \
  X(cuInit, 2000)                                      \
  X(cuDriverGetVersion, 2020)                          \
  X(cuGetErrorName, 6000)                              \
  X(cuGetErrorString, 6000)                            \
  X(cuDeviceGet, 2000)                                 \
  X(cuDeviceGetCount, 2000)                            \
  X(cuDeviceGetName, 2000)                             \
  X(cuDeviceGetAttribute, 2000)                        \
  X(cuDeviceGetUuid, 11040)                            \
  X(cuDeviceTotalMem, 3020)                            \
  X(cuDeviceGetPCIBusId, 4010)                         \
  X(cuDevicePrimaryCtxRetain, 7000)                    \
  X(cuDevicePrimaryCtxRelease, 11000)                  \
  X(cuDevicePrimaryCtxReset, 11000)                    \
  X(cuDevicePrimaryCtxGetState, 7000)                  \
  X(cuCtxSetCurrent, 4000)                             \
  X(cuCtxGetCurrent, 4000)                             \
  X(cuCtxGetDevice, 2000)                              \
  X(cuCtxSynchronize, 2000)                            \
  X(cuCtxGetLimit, 3010)                               \
  X(cuCtxSetLimit, 3010)                               \
  X(cuModuleLoadData, 2000)                            \
  X(cuModuleLoadDataEx, 2010)                          \
  X(cuModuleUnload, 2000)                              \
  X(cuModuleGetFunction, 2000)                         \
  X(cuModuleGetGlobal, 3020)                           \
  X(cuFuncGetAttribute, 2020)                          \
  X(cuFuncSetAttribute, 9000)                          \
  X(cuFuncGetName, 12030)                              \
  X(cuLaunchKernel, 4000)                              \
  X(cuLaunchKernelEx, 11060)                           \
  X(cuTensorMapEncodeTiled, 12000)                     \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor, 6050) \
  X(cuMemAlloc, 3020)                                  \
  X(cuMemFree, 3020)                                   \
  X(cuMemAllocHost, 3020)                              \
  X(cuMemFreeHost, 2000)                               \
  X(cuMemGetInfo, 3020)                                \
  X(cuMemsetD8, 3020)                                  \
  X(cuMemsetD32, 3020)                                 \
  X(cuMemsetD8Async, 3020)                             \
  X(cuMemsetD32Async, 3020)                            \
  X(cuMemcpyHtoD, 3020)                                \
  X(cuMemcpyDtoH, 3020)                                \
  X(cuMemcpyDtoD, 3020)                                \
  X(cuMemcpyHtoDAsync, 3020)                           \
  X(cuMemcpyDtoHAsync, 3020)                           \
  X(cuMemcpyDtoDAsync, 3020)                           \
  X(cuStreamCreate, 2000)                              \
  X(cuStreamCreateWithPriority, 5050)                  \
  X(cuStreamDestroy, 4000)                             \
  X(cuStreamSynchronize, 2000)                         \
  X(cuStreamQuery, 2000)                               \
  X(cuStreamWaitEvent, 3020)                           \
  X(cuStreamBeginCapture, 10010)                       \
  X(cuStreamEndCapture, 10000)                         \
  X(cuStreamIsCapturing, 10000)                        \
  X(cuGraphInstantiateWithFlags, 11040)                \
  X(cuGraphLaunch, 10000)                              \
  X(cuGraphGetNodes, 10000)                            \
  X(cuGraphDestroy, 10000)                             \
  X(cuGraphExecDestroy, 10000)                         \
  X(cuEventCreate, 2000)                               \
  X(cuEventRecord, 2000)                               \
  X(cuEventSynchronize, 2000)                          \
  X(cuEventQuery, 2000)                                \
  X(cuEventElapsedTime, 12080)                         \
  X(cuEventDestroy, 4000)

namespace ktune::harness {

/// Function table of the driver; one member per function, named like it.
struct DriverApi {
#define KTUNE_DETAIL_DRIVER_MEMBER(name, version) PFN_##name##_v##version name = nullptr;
  KTUNE_DRIVER_FUNCS(KTUNE_DETAIL_DRIVER_MEMBER)
#undef KTUNE_DETAIL_DRIVER_MEMBER

  std::string library;     ///< the libcuda that was opened
  int driver_version = 0;  ///< cuDriverGetVersion, e.g. 13000
};

/// The driver, loaded once (thread-safe) and initialised with cuInit(0).
/// Throws Error(kNoDevice) with a clear message when libcuda cannot be opened, an entry point is
/// missing (driver too old) or cuInit fails (the message includes the CUDA error name, e.g.
/// CUDA_ERROR_NO_DEVICE or CUDA_ERROR_STUB_LIBRARY). A failure is remembered and rethrown.
const DriverApi& driver();

/// The driver's function table when libcuda could be opened and resolved, cuInit not required
/// (used to name error codes); nullptr otherwise. Never throws.
const DriverApi* driver_table_or_null() noexcept;

}  // namespace ktune::harness
