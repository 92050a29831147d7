#pragma once
/// The gemm layouts cuBLASLt serves, as ktune writes them: "nt" (B as [N,K]), "nn" (B as [K,N]) and
/// their "+bias" forms (C += bias[n], cuBLASLt's bias epilogue). cuBLASLt has no SiLU epilogue, so
/// the "+silu" forms are the templates' alone. Header-only: the worker protocol's data types use it
/// without CUDA.

#include <string_view>

namespace ktune::harness {

/// Whether cuBLASLt serves a gemm of this layout.
inline bool is_library_gemm_layout(std::string_view layout) {
  return layout == "nt" || layout == "nn" || layout == "nt+bias" || layout == "nn+bias";
}

/// Whether such a layout reads B as [N,K] ("nt", "nt+bias").
inline bool library_layout_nt(std::string_view layout) { return layout.starts_with("nt"); }

/// Whether such a layout has the bias epilogue ("nt+bias", "nn+bias").
inline bool library_layout_bias(std::string_view layout) { return layout.ends_with("+bias"); }

}  // namespace ktune::harness
