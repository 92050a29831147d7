#pragma once
/// KernelSpec: what the host needs to know to compile, launch, verify and count one kernel template.
///
/// A template (`kernel_templates/<source>.cu`) is compiled by NVRTC with the config as C++ template
/// arguments (D3, a name expression such as `ktune_gemm_tiled<128,128,32,2,2,3,1,__nv_bfloat16,true>`).
/// A KernelSpec turns (problem, config) into plain data that any consumer can act on without knowing
/// the kernel: the source and name expressions to compile (CompileSpec), the tensors to allocate and
/// the launches to make with their argument lists (LaunchPlan), the work done (WorkCounts), and the
/// reference that verifies it: a simple GPU kernel (ReferenceSpec, f32 accumulation) and a CPU float64
/// one for small shapes. The candidate runner, the tuner and the dispatch runtime all consume these
/// structs; nothing here touches CUDA.
///
/// Tensors are bound by name: a ReferenceSpec's inputs carry the same names as the LaunchPlan's, so the
/// same buffers feed both; ReferenceSpec::compare pairs each candidate output with the reference output
/// it must match.

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/buffer_fill.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"
#include "core/int_type.hpp"

namespace ktune::kernel_templates {

/// One problem instance: named dimensions in the kernel's canonical order, the dtype, and the
/// kernel's layout/mode text ("nt" or "nn" for gemm; "" where a kernel has none).
struct Problem {
  std::vector<std::pair<std::string, int64_t>> dims;
  DType dtype = DType::kF32;
  std::string layout;

  /// Value of a dimension; throws ktune::Error(kBadInput) when absent.
  int64_t dim(std::string_view name) const;
  /// `m=16,n=4096,k=4096`.
  std::string shape_text() const;
};

struct Dim3 {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
  bool operator==(const Dim3&) const = default;
};

/// Grid, block and dynamic shared memory of one launch. A launch with more than 48 KiB of dynamic
/// shared memory needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES set on the function first.
struct LaunchDims {
  Dim3 grid;
  Dim3 block;
  uint32_t dynamic_smem_bytes = 0;
};

enum class TensorRole {
  kInput,      ///< filled before a run as its TensorSpec::fill says (never all zeros)
  kOutput,     ///< poisoned before a run, compared after it
  kWorkspace,  ///< scratch; needs no initial value (every kernel writes before it reads)
};

/// A device buffer a plan needs.
struct TensorSpec {
  std::string name;  ///< "a", "b", "c", "workspace", "c_ref", ...
  TensorRole role = TensorRole::kInput;
  DType dtype = DType::kF32;
  int64_t elements = 0;
  BufferFill fill;  ///< kInput: how its values are made (random magnitudes in [0.25, 1) by default)
  /// Set: the tensor holds integers of this type (a user kernel's index tensor) and `dtype` is unused.
  std::optional<IntType> integer;

  int64_t bytes() const {
    return elements * static_cast<int64_t>(integer ? size_of(*integer) : size_of(dtype));
  }
};

/// One kernel argument: a tensor's device pointer (by the tensor's name), a null pointer, a scalar,
/// a tensor's row stride, or a tensor's TMA tensor map (128 bytes by value, harness/tensor_map.hpp:
/// the tensor as a row-major [rows, cols] matrix read in box_rows x box_cols boxes, 128-byte
/// swizzle).
///
/// A row stride (kRowStride, an i32 of elements) is what lets a kernel read or write a strided view
/// (rows further apart than their length). A spec writes the contiguous stride (the row's length)
/// and the tensor's shape as a tensor map's {rows, cols}: the tuner measures contiguous tensors.
/// The dispatch runtime passes the caller's stride in its place, and encodes the caller's stride
/// into the tensor maps (`integer` of a kTensorMap, 0 meaning contiguous);
/// LaunchPlan::set_row_stride does the same to a whole plan.
struct ArgSpec {
  enum class Kind { kTensor, kNullPointer, kI32, kI64, kF32, kTensorMap, kRowStride };
  Kind kind = Kind::kI32;
  std::string tensor;   ///< a LaunchPlan tensor's name when kind is kTensor, kTensorMap or kRowStride
  int64_t integer = 0;  ///< kI32 / kI64 value; kRowStride: the stride; kTensorMap: its row stride (0: cols)
  float real = 0;       ///< kF32 value
  std::array<int64_t, 4> map{};  ///< kTensorMap: {rows, cols, box_rows, box_cols}; kRowStride: {rows, cols}

  static ArgSpec of_tensor(std::string name) { return {Kind::kTensor, std::move(name), 0, 0.0f}; }
  /// A pointer argument the kernel does not use for this config (e.g. the workspace at SPLIT_K 1).
  static ArgSpec null_pointer() { return {Kind::kNullPointer, {}, 0, 0.0f}; }
  static ArgSpec i32(int32_t v) { return {Kind::kI32, {}, v, 0.0f}; }
  static ArgSpec i64(int64_t v) { return {Kind::kI64, {}, v, 0.0f}; }
  static ArgSpec f32(float v) { return {Kind::kF32, {}, 0, v}; }
  static ArgSpec tensor_map(std::string name, int64_t rows, int64_t cols, int64_t box_rows,
                            int64_t box_cols) {
    ArgSpec a{Kind::kTensorMap, std::move(name), 0, 0.0f};
    a.map = {rows, cols, box_rows, box_cols};
    return a;
  }
  /// The row stride of tensor `name`, a rows x cols matrix, written contiguous (cols).
  static ArgSpec row_stride(std::string name, int64_t rows, int64_t cols) {
    ArgSpec a{Kind::kRowStride, std::move(name), cols, 0.0f};
    a.map = {rows, cols, 0, 0};
    return a;
  }
};

/// One kernel launch: which compiled function (one of CompileSpec::name_expressions), its geometry
/// and its arguments in order.
struct KernelLaunch {
  std::string name_expression;
  LaunchDims dims;
  std::vector<ArgSpec> args;
};

/// Everything NVRTC needs besides the target arch. The source (and the headers it includes) come from
/// SourceLibrary (kernel_templates/embedded_sources.hpp) by name.
struct CompileSpec {
  std::string source_name;                    ///< e.g. "gemm_tiled.cu"
  std::vector<std::string> name_expressions;  ///< every function the launches use
  std::vector<std::string> options;           ///< e.g. "--std=c++17"; "-arch=..." is added by the compiler
  /// Set: the function was compiled ahead of time (a Triton config's cubin, docs/byo.md): this file
  /// is the compile result, `name_expressions` its entry names, and nothing is compiled.
  std::filesystem::path prebuilt_cubin;
};

/// The buffers to allocate and the launches to make, in order, on one stream.
struct LaunchPlan {
  std::vector<TensorSpec> tensors;
  std::vector<KernelLaunch> launches;

  /// Index of the tensor named `name`; throws ktune::Error(kNotFound).
  int tensor_index(std::string_view name) const;

  /// Makes tensor `name` (rows x cols, as its stride and map arguments say) a strided view: every
  /// kRowStride argument of it and every tensor map of it take `stride` elements, and the tensor
  /// holds rows x `stride` elements. Throws ktune::Error(kBadInput) when no argument carries the
  /// tensor's row stride, or `stride` is shorter than the row.
  void set_row_stride(std::string_view name, int64_t stride);
};

/// The GPU reference of a problem: compile, run (its input tensors carry the candidate's names and
/// must be bound to the same buffers), then compare each pair (candidate output, reference output).
struct ReferenceSpec {
  CompileSpec compile;
  LaunchPlan plan;
  std::vector<std::pair<std::string, std::string>> compare;  ///< {"c", "c_ref"}
  /// Candidate output -> relative L2 bound replacing its dtype's (a user kernel's per-output
  /// tolerance, docs/byo.md); an output not listed is judged by its dtype's.
  std::map<std::string, double, std::less<>> rel_tolerance;
  /// Candidate output -> absolute bound on max_i |out_i - ref_i| (docs/byo.md). Alone it is the
  /// output's whole criterion; beside a relative bound, meeting either passes. An integer output
  /// not listed is compared exactly (bound 0).
  std::map<std::string, double, std::less<>> abs_tolerance;
};

/// Work of one problem, for the roofline: floating-point operations and the minimum DRAM traffic
/// (every input read once, every output written once).
struct WorkCounts {
  double flops = 0;
  double min_bytes = 0;
};

/// An alignment a config's fast path assumes (D8). `required` false: the kernel checks at run time
/// and falls back to a slower but correct path when unmet; true: dispatch must refuse to launch.
struct AlignmentRule {
  std::string tensor;
  int64_t bytes = 0;
  bool required = false;
  std::string note;
};

/// Host tensors of float64 values by name (CPU references).
using HostTensors = std::map<std::string, std::vector<double>, std::less<>>;

/// One kernel template's host side. Implementations are stateless and thread-safe.
class KernelSpec {
 public:
  virtual ~KernelSpec() = default;

  /// Family (the cache's kernel name), e.g. "gemm".
  virtual std::string_view kernel() const = 0;
  /// Template within the family, e.g. "tiled"; equals Config::variant.
  virtual std::string_view variant() const = 0;
  /// Dimension names in canonical order, e.g. {"m","n","k"}.
  virtual std::vector<std::string> dims() const = 0;
  /// The dtypes this template serves. The kernel catalog lists the union over a family's templates.
  virtual std::vector<DType> dtypes() const = 0;
  /// The layouts (modes) this template serves, the kernel's default first where it serves it; {""} for a
  /// kernel without layouts. rejection() refuses any other (it may also accept "" for the default).
  virtual std::vector<std::string> layouts() const = 0;
  /// Tunable parameter names, e.g. {"BLOCK_M", ...}; a config must give each.
  virtual std::vector<std::string> param_names() const = 0;
  /// The embedded source file of this template, e.g. "gemm_tiled.cu".
  virtual std::string_view source_name() const = 0;

  /// Why this config cannot serve this problem (a parameter missing or out of its rules, a dtype or
  /// layout the template lacks, a shape outside its range), or nullopt when it can. The tuner stores a
  /// rejected config as `skipped` with this reason.
  virtual std::optional<std::string> rejection(const Problem& problem, const Config& config) const = 0;

  /// Why the tuner leaves this config out of this problem's candidates: rejection(), or a config
  /// that can serve the problem but that its key does not tune (a prebuilt description's
  /// `[[prune]]`). Only the tuner's space asks; a stored winner, a reference or a config named on
  /// the command line is judged by rejection() alone.
  virtual std::optional<std::string> tuning_rejection(const Problem& problem, const Config& config) const {
    return rejection(problem, config);
  }

  /// Why this template cannot run on `arch` ("sm_80", "sm_90a", ...; the target of the compile), or
  /// nullopt when it can. rejection() sees no device, so callers that know the target ask here
  /// before compiling: the tuner stores such a config as `skipped` with this reason, `ktune bench`
  /// refuses it (exit 2). The default accepts every arch the toolkit compiles for.
  virtual std::optional<std::string> arch_rejection(std::string_view arch) const {
    (void)arch;
    return std::nullopt;
  }

  /// Canonical config name, e.g. `gemm.bf16.nt.128x128x32.w2x2.s3.sk1`. Needs no valid problem dims.
  virtual std::string canonical_name(const Problem& problem, const Config& config) const = 0;

  /// What to compile. Depends on dtype, layout and config only where the template does, so one cubin
  /// serves many shapes. Throws ktune::Error(kBadInput) with the rejection when rejected.
  virtual CompileSpec compile_spec(const Problem& problem, const Config& config) const = 0;

  /// Buffers and launches. Throws ktune::Error(kBadInput) with the rejection when rejected.
  virtual LaunchPlan launch_plan(const Problem& problem, const Config& config) const = 0;

  /// FLOPs and minimum bytes of the problem (config-independent).
  virtual WorkCounts work(const Problem& problem) const = 0;

  /// Alignments the config's fast paths assume.
  virtual std::vector<AlignmentRule> alignment(const Problem& problem, const Config& config) const = 0;

  /// The GPU reference (f32 accumulation) for the problem.
  virtual ReferenceSpec reference(const Problem& problem) const = 0;

  /// Whether reference() exists. False only for a user kernel described with `verify = false`
  /// (D4's one exception): its results are stored and shown as unverified.
  virtual bool verifies() const { return true; }

  /// The CPU float64 reference: from input tensors by name (values already rounded to the dtype) to
  /// output tensors by the candidate's output names. Meant for small shapes.
  virtual HostTensors cpu_reference(const Problem& problem, const HostTensors& inputs) const = 0;

  /// A config that serves every problem the template supports (dispatch's fallback, the
  /// `--baseline default`).
  virtual Config default_config(const Problem& problem) const = 0;
};

/// Kernel arguments packed for cuLaunchKernel's `kernelParams`: one slot per argument (8 bytes used,
/// 128 for a tensor map, encoded here from the tensor's address).
class PackedArgs {
 public:
  /// `tensor_ptrs[i]` is the device address of `plan.tensors[i]`. Throws ktune::Error(kBadInput) when
  /// the sizes differ, an argument names a tensor the plan lacks, or a tensor map cannot be encoded
  /// (e.g. a tensor that is not 16-byte aligned).
  PackedArgs(const LaunchPlan& plan, const KernelLaunch& launch, std::span<const uint64_t> tensor_ptrs);
  PackedArgs(const PackedArgs&) = delete;
  PackedArgs& operator=(const PackedArgs&) = delete;

  /// The `void**` cuLaunchKernel takes; valid while this object lives.
  void** data() { return pointers_.data(); }
  std::size_t size() const { return pointers_.size(); }

 private:
  struct alignas(64) Slot {
    uint64_t words[16];
  };
  std::vector<Slot> slots_;
  std::vector<void*> pointers_;
};

}  // namespace ktune::kernel_templates
