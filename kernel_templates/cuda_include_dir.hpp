#pragma once
/// Where NVRTC finds the toolkit's cuda_fp16.h and cuda_bf16.h, which NVRTC does not build in
/// (seen with NVRTC 13.0: "could not open source file cuda_bf16.h" without an include path). The
/// kernel templates include them; make_compile_request passes the folder as `-I`.

#include <filesystem>
#include <string>
#include <vector>

namespace ktune::kernel_templates {

/// The folders searched, in order: $KTUNE_CUDA_INCLUDE, $CUDA_HOME/include, $CUDA_PATH/include, the
/// include folder next to the libnvrtc that is loaded (when it loads), the toolkit ktune was built
/// with, /usr/local/cuda/include.
std::vector<std::filesystem::path> cuda_include_candidates();

/// The first candidate holding cuda_fp16.h and cuda_bf16.h (found once, then remembered). Throws
/// ktune::Error(kNoDevice) listing the folders tried, with the hint to set KTUNE_CUDA_INCLUDE.
const std::filesystem::path& cuda_include_dir();

}  // namespace ktune::kernel_templates
