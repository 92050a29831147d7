#pragma once
/// A user kernel folder's description: `NAME.cu` holds a templated `__global__` function (its
/// template parameters are the tunables, followed by the element type), and `NAME.toml` says, with
/// no C++, what ktune needs to compile, launch, verify and count it (format: docs/byo.md). This file
/// holds the description as plain data and its reader; UserKernelSpec (user_kernel_spec.hpp) turns
/// it into a KernelSpec.
///
/// A description may instead name cubins compiled ahead of time, one per (config, dtype), in a
/// `[prebuilt]` table (a Triton kernel's configs, which `ktune.triton` compiles and describes): its
/// candidates are then those cubins, loaded, verified and timed like any other, and NAME.cu is
/// needed only for a reference kernel.
///
/// Every expression (a buffer's element count, a scalar's value, a launch's grid, block and shared
/// memory, the work model) is a config-space expression (core/expression_evaluator.hpp) over the
/// problem dimensions, the template parameters and `elem_bytes`. Every error the reader finds is a
/// ktune::Error(kBadInput) "FILE:LINE: field: message".

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/buffer_fill.hpp"
#include "core/config.hpp"
#include "core/dtype.hpp"
#include "core/int_type.hpp"

namespace ktune::kernel_templates {

/// An expression as written, with where it was written (for messages).
struct UserExpression {
  std::string text;
  std::string field;  ///< e.g. "arg 'out'.elements", "launch 1.grid[0]"
  uint32_t line = 0;
};

/// How an input buffer is filled before a run (`fill = {...}` of an [[arg]]; core/buffer_fill.hpp
/// has the meaning of each kind). Its numbers are expressions of the dimensions only, so the
/// reference and every candidate see the same inputs; UserKernelSpec evaluates them for a problem.
/// Inputs are never all zeros (D4).
struct UserFill {
  BufferFill::Kind kind = BufferFill::Kind::kRandom;
  double scale = 1.0;                                 ///< kRandom
  std::optional<UserExpression> min, max;             ///< kRange
  std::vector<double> pattern;                        ///< kPattern
  std::optional<UserExpression> start, step, modulo;  ///< kSequence (start 0 and step 1 by default)
  uint32_t line = 0;                                  ///< where `fill` is written (0: not written, random)
};

/// An output's bounds (`tolerance = { y = 1e-2 }` or `{ y = { rel = 1e-2, abs = 1e-3 } }`).
struct UserTolerance {
  std::optional<double> rel;  ///< relative L2 bound replacing the dtype's
  std::optional<double> abs;  ///< bound on max |out - ref|; alone, the whole criterion
};

/// One kernel argument, in the kernel's parameter order.
struct UserArg {
  enum class Kind { kInput, kOutput, kWorkspace, kScalar };
  Kind kind = Kind::kInput;
  std::string name;
  uint32_t line = 0;
  /// Buffers: the element type; nullopt means the problem's dtype ("dtype" in the file).
  std::optional<DType> dtype;
  /// Buffers of integers ("i32", "i64", "u8": index tensors); `dtype` is then unused.
  std::optional<IntType> integer;
  UserExpression elements;  ///< buffers: element count
  UserFill fill;            ///< inputs
  /// Scalars: "i32", "i64" or "f32", and the value.
  std::string scalar_type;
  UserExpression value;

  bool is_buffer() const { return kind != Kind::kScalar; }
};

/// One launch of the candidate's sequence.
struct UserLaunch {
  std::string function;                  ///< a `__global__` template of NAME.cu (the tuned one by default)
  std::vector<UserExpression> grid;      ///< 1 to 3 expressions
  std::vector<UserExpression> block;     ///< 1 to 3 expressions
  std::optional<UserExpression> shared;  ///< dynamic shared memory bytes
  std::vector<std::string> args;         ///< argument names in order; empty: every argument
  uint32_t line = 0;
};

/// How candidates are verified.
struct UserReference {
  enum class Kind {
    kKernel,  ///< a `__global__` template over the element type in NAME.cu, at its own geometry
    kConfig,  ///< a config of the tuned template itself, trusted as the reference
    kNone,    ///< `verify = false`: every result is stored and shown unverified (D4)
    kData,    ///< saved per key: the inputs and the outputs a reference computed from them (a torch function)
  };
  Kind kind = Kind::kKernel;
  UserLaunch launch;  ///< kKernel: the reference kernel's launch (function, grid, block, shared)
  Config config;      ///< kConfig
  /// kData: the folder (beside NAME.toml) whose DTYPE/SHAPE/ARG.bin files hold each input buffer
  /// and each output's expected values (f32 for a floating-point output), raw and little-endian.
  std::filesystem::path data;
  std::string producer;  ///< kData: what computed the outputs (part of the kernel's hash, as NAME.toml is)
  /// Output name -> its bounds. An integer output not listed is compared exactly.
  std::map<std::string, UserTolerance> tolerance;
  uint32_t line = 0;
};

/// Bytes and flops of one problem, for GB/s and TFLOP/s.
struct UserWork {
  std::optional<UserExpression> bytes;
  std::optional<UserExpression> flops;
};

/// One tunable template parameter, in template-argument order.
struct UserParam {
  std::string name;
  std::vector<int64_t> values;
  uint32_t line = 0;
};

/// One cubin compiled ahead of time: the candidate of one config and dtype (`[[prebuilt.cubin]]`).
/// Its launch takes the description's arguments (but those in `ones`) and then one pointer per
/// `scratch` entry: null for 0 bytes, else a device buffer of that many bytes per program (Triton
/// 3.6 appends a global and a profile scratch pointer). A compiler that specializes on argument
/// values (Triton's JIT: an integer equal to 1 becomes a constant, one divisible by 16 is known to
/// be) has one cubin per specialization: the first whose `ones` all equal 1 and whose `aligned`
/// are all multiples of 16 for a problem serves it.
struct UserCubin {
  Config config;  ///< the tuned parameters it was compiled for
  DType dtype = DType::kF32;
  std::filesystem::path file;  ///< NAME.cubins/FILE, as read
  std::string entry;           ///< the kernel's entry (symbol) in the cubin
  uint32_t threads = 0;        ///< threads per block (a Triton config's 32 * num_warps)
  uint32_t shared_bytes = 0;   ///< dynamic shared memory a launch passes
  std::vector<uint64_t> scratch;
  std::vector<std::string> ones;     ///< integer scalar args compiled as the constant 1 (not passed)
  std::vector<std::string> aligned;  ///< integer scalar args compiled as multiples of 16
  std::string name;  ///< the config's name as its compiler tells it (carries the compiler's version)
  /// Listed before it exists: its compiler (ktune.triton's tune) is still making it while `ktune
  /// tune` measures the configs that are ready. Its file, entry, shared memory and scratch are
  /// known once the index lists it whole (UserKernelSpec::compile_spec waits for that).
  bool pending = false;
  /// Not empty: its compile failed, and this says why (the candidate is a compile error).
  std::string failed;
  uint32_t line = 0;
};

/// The configs one key keeps (`[[prune]]` of a cubin index): a compiler's per-key pruning, such
/// as a Triton kernel's `prune_configs_by`, written out for one dtype and shape. The other configs
/// are no candidates of that key; a key without an entry tunes every config.
struct UserPrune {
  DType dtype = DType::kF32;
  std::vector<std::pair<std::string, int64_t>> shape;  ///< every dim, in the description's order
  std::vector<Config> keep;                            ///< at least one
  uint32_t line = 0;
};

/// Cubins compiled ahead of time instead of NAME.cu's template (`[prebuilt]`).
struct UserPrebuilt {
  std::string arch;      ///< the one architecture the cubins run on, e.g. "sm_90"
  std::string producer;  ///< what made them, e.g. "triton 3.6.0" (part of the kernel's hash)
  std::vector<UserCubin> cubins;
  /// From the cubin index only; at most one per (dtype, shape). Not part of the kernel's hash.
  std::vector<UserPrune> prunes;
  uint32_t line = 0;

  /// The first cubin of (config, dtype) whose specialization `value_of` (an integer scalar arg's
  /// value for the problem) meets, or null; without `value_of`, the first of (config, dtype).
  const UserCubin* find(const Config& config, DType dtype,
                        const std::function<int64_t(const std::string&)>& value_of = {}) const;
};

/// The whole description of one user kernel.
struct UserKernelDescription {
  std::string name;  ///< NAME: the kernel's name in the cache, the CLI and the runtime
  std::filesystem::path cu_path;
  std::filesystem::path toml_path;
  std::string cu_text;
  std::string toml_text;
  std::string description;
  std::vector<std::string> dims;
  std::vector<DType> dtypes;
  std::string function;           ///< the tuned `__global__` template ([[template]] name)
  std::vector<UserParam> params;  ///< template-argument order
  std::vector<Config> seeds;
  std::vector<UserArg> args;
  std::vector<UserLaunch> launches;
  UserReference reference;
  UserWork work;
  /// Set: the candidates are these cubins; cu_text may be empty (no NAME.cu) unless the reference
  /// is a kernel of it.
  std::optional<UserPrebuilt> prebuilt;

  /// Index of argument `name`, or -1.
  int arg_index(std::string_view arg_name) const;
};

/// The folder of a prebuilt description's cubins: `folder`/NAME.cubins.
std::filesystem::path cubin_folder(const std::filesystem::path& folder, const std::string& name);

/// Reads `folder`/NAME.toml and `folder`/NAME.cu (absent: a prebuilt description) and checks everything that
/// can be checked without a shape: TOML syntax, unknown fields, unknown symbols in expressions, argument and
/// launch references, and that the `__global__` templates exist in NAME.cu with as many template parameters
/// as declared; for a prebuilt description, that every cubin file exists. Throws
/// ktune::Error(kBadInput) "FILE:LINE: field: message".
UserKernelDescription read_user_kernel(const std::filesystem::path& folder, const std::string& name);

/// The cubins and prunes `d`'s cubin index lists now (a description read by read_user_kernel whose
/// `[prebuilt]` table lists none): what a cubin that was pending when `d` was read has become.
/// Throws ktune::Error(kBadInput) as read_user_kernel does.
UserPrebuilt reread_cubin_index(const UserKernelDescription& d);

/// The same from texts (tests); the paths stand for the files in messages (a prebuilt
/// description's cubin files are looked for beside `toml_path`, in NAME.cubins/).
UserKernelDescription parse_user_kernel(const std::string& name, const std::string& toml_text,
                                        const std::filesystem::path& toml_path, const std::string& cu_text,
                                        const std::filesystem::path& cu_path);

}  // namespace ktune::kernel_templates
