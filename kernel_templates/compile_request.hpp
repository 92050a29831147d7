#pragma once
/// From a KernelSpec's CompileSpec to the harness's NVRTC request: the source text and every `.cuh`
/// header come from a SourceLibrary (built-in, or overlaid by a user folder); the toolkit's include
/// folder (cuda_include_dir(): cuda_fp16.h, cuda_bf16.h) is passed as `-I`. A prebuilt spec's
/// request carries its cubin's bytes instead.

#include <string>

#include "harness/nvrtc_compiler.hpp"
#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_spec.hpp"

namespace ktune::kernel_templates {

/// The request for compiling `spec` for `arch` (e.g. "sm_90"). Throws ktune::Error(kNotFound) when
/// the library lacks the source, kNoDevice when the CUDA headers cannot be found, kBadInput when a
/// prebuilt cubin cannot be read.
harness::CompileRequest make_compile_request(const CompileSpec& spec, const SourceLibrary& sources,
                                             const std::string& arch);

}  // namespace ktune::kernel_templates
