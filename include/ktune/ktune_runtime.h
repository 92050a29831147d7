#ifndef KTUNE_KTUNE_RUNTIME_H
#define KTUNE_KTUNE_RUNTIME_H
/*
 * ktune's C dispatch ABI: launch the kernels `ktune tune` found best for this GPU, from any
 * language (Python's ctypes, Rust, Go, C). Plain C, no CUDA headers; link with -lktune_runtime.
 *
 *   ktune_runtime_options o;
 *   ktune_runtime* rt = NULL;
 *   ktune_runtime_options_init(&o);                 // $KTUNE_DB, device 0, nearest tuned shape
 *   if (ktune_runtime_create(&o, &rt) != KTUNE_OK) { puts(ktune_runtime_last_error()); ... }
 *   ktune_gemm_args g;
 *   ktune_gemm_args_init(&g);                       // bf16, B as [n,k] ("nt"), contiguous
 *   g.a = a; g.b = w; g.c = c; g.m = 16; g.n = 4096; g.k = 4096;
 *   ktune_runtime_prepare_gemm(rt, &g, NULL);       // before graph capture (optional otherwise)
 *   ktune_runtime_gemm(rt, &g, stream);             // a cudaStream_t or CUstream; NULL: default
 *   ktune_runtime_destroy(rt);
 *
 * Every operator has an argument struct (fill it with its _init function first, then set the
 * fields: new fields get defaults there), a prepare function (the look-up, module load and
 * workspace of the call's key; pointers are not read) and a launch function (asynchronous on the
 * stream). The semantics are those of ktune::Runtime (include/ktune/ktune.hpp), field by field.
 *
 * Errors: every function returns KTUNE_OK or a KTUNE_ERR_* code (the codes of ktune.h) and never
 * throws, aborts or exits; a bad argument (a NULL pointer the call reads, a dimension outside
 * [1, 2^31-1], a misaligned pointer, an unknown enum value, a problem no template serves) is
 * KTUNE_ERR_BAD_INPUT before anything is launched. The message of the calling thread's last
 * failure is ktune_runtime_last_error().
 *
 * Threads: one runtime may be used by any number of threads at once, on any streams, for prepare
 * and launch alike; each thread must have no current CUDA context or the device's primary context
 * (what the CUDA runtime API uses). A launch uses the runtime's own workspace for its key unless
 * the args name one, so two streams that run one split-K / split-KV key concurrently must each
 * pass their own workspace (at least ktune_plan_info.workspace_bytes). ktune_runtime_destroy must
 * not overlap any other call on the same runtime, and the runtime must outlive every launch and
 * every CUDA graph that replays its launches.
 */

#include <stddef.h>
#include <stdint.h>

#include "ktune/ktune.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The runtime: a database (read-only) and a device. */
typedef struct ktune_runtime ktune_runtime;

/** Element types (ktune::DType). */
#define KTUNE_DTYPE_F32 0
#define KTUNE_DTYPE_F16 1
#define KTUNE_DTYPE_BF16 2
#define KTUNE_DTYPE_FP8E4M3 3

/** What a shape that was never tuned gets (ktune::MissPolicy). */
#define KTUNE_MISS_NEAREST 0 /* the nearest tuned shape's config when it serves, else the default */
#define KTUNE_MISS_DEFAULT 1 /* the kernel's default config */
#define KTUNE_MISS_ERROR 2   /* KTUNE_ERR_NOT_FOUND, naming the `ktune tune` command that fills it */

/** gemm's B layout and epilogue. */
#define KTUNE_LAYOUT_NT 0 /* B [n,k] row-major (the nn.Linear weight) */
#define KTUNE_LAYOUT_NN 1 /* B [k,n] row-major */
#define KTUNE_EPILOGUE_NONE 0
#define KTUNE_EPILOGUE_BIAS 1      /* + bias[n] */
#define KTUNE_EPILOGUE_SILU 2      /* silu(x) */
#define KTUNE_EPILOGUE_BIAS_SILU 3 /* silu(x + bias[n]) */

/** softmax masks, rotary styles, fp8 scalings. */
#define KTUNE_MASK_NONE 0
#define KTUNE_MASK_CAUSAL 1
#define KTUNE_MASK_PADDING 2
#define KTUNE_ROPE_NEOX 0
#define KTUNE_ROPE_GPTJ 1
#define KTUNE_FP8_PER_TENSOR 0
#define KTUNE_FP8_ROWCOL 1

/** Where a plan's config came from. */
#define KTUNE_PLAN_TUNED 0
#define KTUNE_PLAN_NEAREST 1
#define KTUNE_PLAN_DEFAULT 2

typedef struct ktune_runtime_options {
  const char* db_path; /* NULL: $KTUNE_DB, else $XDG_CACHE_HOME/ktune/ktune.db, ~/.cache/... */
  int device;          /* CUDA device ordinal */
  int on_miss;         /* KTUNE_MISS_* */
  int compile_on_miss; /* non-zero: compile (NVRTC) a config missing from the compile cache */
} ktune_runtime_options;

/** How a key is served (ktune::PlanInfo); the strings are cut to fit (NUL-terminated). */
typedef struct ktune_plan_info {
  int source; /* KTUNE_PLAN_* */
  char config_name[160];
  char tuned_shape[96]; /* "" for the default config */
  double tuned_median_us;
  size_t launches;
  size_t workspace_bytes;
} ktune_plan_info;

typedef struct ktune_gemm_args {
  const void* a;
  const void* b;
  void* c;
  const void* bias;
  int64_t m, n, k;
  int64_t lda, ldb, ldc; /* row strides in elements; 0: contiguous; strided views (>= the row) too */
  int dtype;             /* KTUNE_DTYPE_F32, _F16, _BF16 */
  int layout;            /* KTUNE_LAYOUT_* */
  int epilogue;          /* KTUNE_EPILOGUE_* */
  void* workspace;       /* NULL: the runtime's own */
  size_t workspace_bytes;
} ktune_gemm_args;

typedef struct ktune_rmsnorm_args {
  const void* x;
  const void* residual; /* non-NULL: the fused residual add (residual_out required) */
  const void* w;
  void* y;
  void* residual_out;
  int64_t rows, hidden;
  float eps;
  int dtype;
} ktune_rmsnorm_args;

typedef struct ktune_rmsnorm_rope_args {
  const void* q;
  const void* k;
  const void* q_weight;
  const void* k_weight;
  const float* cos_sin;
  const int32_t* positions;
  void* q_out;
  void* k_out;
  int64_t tokens, heads_q, heads_kv, head_dim, max_pos;
  float eps;
  int style; /* KTUNE_ROPE_* */
  int dtype;
} ktune_rmsnorm_rope_args;

/* rope_append (ktune::RopeAppendArgs): q_weight and k_weight both set for the RMSNorm form;
 * block_table set for the paged cache; rot_dim 0 means head_dim. */
typedef struct ktune_rope_append_args {
  const void* q;
  const void* k;
  const void* v;
  const void* q_weight;
  const void* k_weight;
  const float* cos_sin;
  const int32_t* positions;
  const int32_t* block_table;
  void* q_out;
  void* k_cache;
  void* v_cache;
  int64_t tokens, heads_q, heads_kv, head_dim, rot_dim;
  int64_t seq_tokens, cache_rows, max_blocks, num_blocks, max_pos;
  float eps;
  int style; /* KTUNE_ROPE_* */
  int dtype;
} ktune_rope_append_args;

typedef struct ktune_softmax_args {
  const void* x;
  void* y;
  const int32_t* lengths; /* KTUNE_MASK_PADDING only */
  int64_t rows, cols;
  float scale;
  int mask; /* KTUNE_MASK_* */
  int dtype;
  void* workspace; /* split rows */
  size_t workspace_bytes;
} ktune_softmax_args;

typedef struct ktune_swiglu_args {
  const void* x; /* fused [m, 2i]; NULL: the split form (gate, up) */
  const void* gate;
  const void* up;
  void* out;
  int64_t m, i;
  int dtype;
} ktune_swiglu_args;

typedef struct ktune_decode_attention_args {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  const int32_t* context_lens;                              /* NULL: every sequence attends [0, seq) */
  int64_t batch, heads_q, heads_kv, seq, seq_max, head_dim; /* seq_max 0: seq */
  float scale;                                              /* 0: 1/sqrt(head_dim) */
  int dtype;
  void* workspace;
  size_t workspace_bytes;
  const int32_t* block_table; /* non-NULL: the paged cache (ktune::DecodeAttentionArgs) */
  int64_t block_size, max_blocks, num_blocks;
} ktune_decode_attention_args;

typedef struct ktune_fp8_gemm_args {
  const void* a;
  const void* b;
  const float* a_scale;
  const float* b_scale;
  void* c;
  int64_t m, n, k;
  int scaling; /* KTUNE_FP8_* */
  void* workspace;
  size_t workspace_bytes;
} ktune_fp8_gemm_args;

/** Defaults: every pointer NULL, every dimension 0, bf16, eps 1e-6, scale 1 (softmax) or 0
 * (attention: 1/sqrt(head_dim)), "nt", no epilogue, no mask, NeoX, per-tensor scales. */
KTUNE_API void ktune_runtime_options_init(ktune_runtime_options* options);
KTUNE_API void ktune_gemm_args_init(ktune_gemm_args* args);
KTUNE_API void ktune_rmsnorm_args_init(ktune_rmsnorm_args* args);
KTUNE_API void ktune_rmsnorm_rope_args_init(ktune_rmsnorm_rope_args* args);
/** rope_append: seq_tokens 1 (a token a sequence), eps 1e-6, NeoX, bf16. */
KTUNE_API void ktune_rope_append_args_init(ktune_rope_append_args* args);
KTUNE_API void ktune_softmax_args_init(ktune_softmax_args* args);
KTUNE_API void ktune_swiglu_args_init(ktune_swiglu_args* args);
KTUNE_API void ktune_decode_attention_args_init(ktune_decode_attention_args* args);
KTUNE_API void ktune_fp8_gemm_args_init(ktune_fp8_gemm_args* args);

/**
 * Opens the database (read-only; a missing file is not an error: every key is then a miss) and
 * the device's primary context. options NULL: the defaults. Returns KTUNE_OK,
 * KTUNE_ERR_BAD_INPUT (out NULL, a bad option, a file that is not a ktune database),
 * KTUNE_ERR_NO_DEVICE (no driver or GPU) or KTUNE_ERR_RUNTIME.
 */
KTUNE_API int ktune_runtime_create(const ktune_runtime_options* options, ktune_runtime** out);
/**
 * Records from now on every key prepared from a nearest tuned shape or a default config into the
 * file `path` (appended, one `KERNEL SHAPE DTYPE [LAYOUT]` line a key once a process, several
 * processes may share it), for `ktune tune --shapes FILE`; NULL or "" stops recording. Without
 * this call, $KTUNE_RECORD_MISSES (read by ktune_runtime_create) names the file. Returns KTUNE_OK,
 * or KTUNE_ERR_BAD_INPUT (rt NULL, a file that cannot be opened for appending).
 */
KTUNE_API int ktune_runtime_record_misses(ktune_runtime* rt, const char* path);
/** Frees the runtime's modules and workspaces; NULL is allowed. */
KTUNE_API void ktune_runtime_destroy(ktune_runtime* rt);

/* Prepare: info may be NULL. Launch: stream NULL is the legacy default stream. */
KTUNE_API int ktune_runtime_prepare_gemm(ktune_runtime* rt, const ktune_gemm_args* args,
                                         ktune_plan_info* info);
KTUNE_API int ktune_runtime_gemm(ktune_runtime* rt, const ktune_gemm_args* args, void* stream);
KTUNE_API int ktune_runtime_prepare_rmsnorm(ktune_runtime* rt, const ktune_rmsnorm_args* args,
                                            ktune_plan_info* info);
KTUNE_API int ktune_runtime_rmsnorm(ktune_runtime* rt, const ktune_rmsnorm_args* args, void* stream);
KTUNE_API int ktune_runtime_prepare_rmsnorm_rope(ktune_runtime* rt, const ktune_rmsnorm_rope_args* args,
                                                 ktune_plan_info* info);
KTUNE_API int ktune_runtime_rmsnorm_rope(ktune_runtime* rt, const ktune_rmsnorm_rope_args* args,
                                         void* stream);
KTUNE_API int ktune_runtime_prepare_rope_append(ktune_runtime* rt, const ktune_rope_append_args* args,
                                                ktune_plan_info* info);
KTUNE_API int ktune_runtime_rope_append(ktune_runtime* rt, const ktune_rope_append_args* args, void* stream);
KTUNE_API int ktune_runtime_prepare_softmax(ktune_runtime* rt, const ktune_softmax_args* args,
                                            ktune_plan_info* info);
KTUNE_API int ktune_runtime_softmax(ktune_runtime* rt, const ktune_softmax_args* args, void* stream);
KTUNE_API int ktune_runtime_prepare_swiglu(ktune_runtime* rt, const ktune_swiglu_args* args,
                                           ktune_plan_info* info);
KTUNE_API int ktune_runtime_swiglu(ktune_runtime* rt, const ktune_swiglu_args* args, void* stream);
KTUNE_API int ktune_runtime_prepare_decode_attention(ktune_runtime* rt,
                                                     const ktune_decode_attention_args* args,
                                                     ktune_plan_info* info);
KTUNE_API int ktune_runtime_decode_attention(ktune_runtime* rt, const ktune_decode_attention_args* args,
                                             void* stream);
KTUNE_API int ktune_runtime_prepare_fp8_gemm(ktune_runtime* rt, const ktune_fp8_gemm_args* args,
                                             ktune_plan_info* info);
KTUNE_API int ktune_runtime_fp8_gemm(ktune_runtime* rt, const ktune_fp8_gemm_args* args, void* stream);

/**
 * A user kernel (docs/byo.md) loaded from $KTUNE_KERNEL_DIR (':'-separated folders, read by
 * ktune_runtime_create), by name: `shape` as "rows=4096,cols=4096" (every dimension of the kernel,
 * any order), `dtype` as "bf16". ktune_runtime_launch's `buffers` are the device pointers of its
 * input and output arguments in its description's order, `count` of them; its scalars come from the
 * description. ktune_runtime_prepare_kernel fills `info` (may be NULL) and `*verified` (may be
 * NULL): 0 when the config was never checked against a reference (the description says
 * verify = false). Return KTUNE_OK, KTUNE_ERR_NOT_FOUND (no such kernel loaded), KTUNE_ERR_BAD_INPUT
 * (a bad shape, dtype, buffer count or a NULL buffer) or KTUNE_ERR_RUNTIME.
 */
KTUNE_API int ktune_runtime_prepare_kernel(ktune_runtime* rt, const char* kernel, const char* shape,
                                           const char* dtype, ktune_plan_info* info, int* verified);
KTUNE_API int ktune_runtime_launch(ktune_runtime* rt, const char* kernel, const char* shape,
                                   const char* dtype, void* const* buffers, size_t count, void* stream);

/** The GPU model the runtime answers for ("NVIDIA H200"); "" for a NULL runtime. */
KTUNE_API const char* ktune_runtime_gpu_name(const ktune_runtime* rt);
/** Tuned keys loaded for this GPU, and plans prepared so far (0 for a NULL runtime). */
KTUNE_API size_t ktune_runtime_tuned_keys(const ktune_runtime* rt);
KTUNE_API size_t ktune_runtime_prepared_plans(const ktune_runtime* rt);

/** The calling thread's last error of this library ("" when none); each call clears it first. */
KTUNE_API const char* ktune_runtime_last_error(void);
/** The library's version, e.g. "0.2.0". */
KTUNE_API const char* ktune_runtime_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KTUNE_KTUNE_RUNTIME_H */
