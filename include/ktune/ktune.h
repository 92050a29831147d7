#ifndef KTUNE_KTUNE_H
#define KTUNE_KTUNE_H
/*
 * ktune's C ABI: look up the best tuned config for (GPU, kernel, shape, dtype, layout) in a ktune
 * database from any language. Plain C89, no C++ in this header; link with -lktune.
 *
 *   ktune_db* db = NULL;
 *   char* json = NULL;
 *   if (ktune_open(NULL, &db) != KTUNE_OK) { fprintf(stderr, "%s\n", ktune_last_error()); ... }
 *   rc = ktune_lookup(db, "NVIDIA H200", "gemm", "m=16,n=4096,k=4096", "bf16", "nt", 1, &json);
 *   if (rc == KTUNE_OK) { ... use json ...; ktune_free_string(json); }
 *   ktune_close(db);
 *
 * Every function catches every failure inside the library: none lets an exception or a signal
 * of its own escape. A failure returns a KTUNE_ERR_* code and sets the calling thread's last
 * error (ktune_last_error). A ktune_db may be used by one thread at a time; open one per thread
 * for concurrent lookups (the database allows any number of readers).
 */

#if defined(__GNUC__) || defined(__clang__)
#define KTUNE_API __attribute__((visibility("default")))
#else
#define KTUNE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Return codes; they match the exit codes of the `ktune` command line. */
#define KTUNE_OK 0
#define KTUNE_ERR_RUNTIME 1 /* the database could not be read, out of memory, ... */
#define KTUNE_ERR_BAD_INPUT \
  2 /* a NULL argument, an unknown kernel or dtype, a malformed shape, not a ktune database */
#define KTUNE_ERR_NO_DEVICE 3 /* no GPU or driver where one is needed (the dispatch ABI) */
#define KTUNE_ERR_NOT_FOUND 4 /* no database at the path, or no tuned config for the key */

/** An open ktune database (read-only). */
typedef struct ktune_db ktune_db;

/**
 * Opens the database at `path` read-only and stores the handle in *out (NULL on failure).
 * A NULL path resolves as the command line does: $KTUNE_DB, else
 * $XDG_CACHE_HOME/ktune/ktune.db, else ~/.cache/ktune/ktune.db.
 * Returns KTUNE_OK, KTUNE_ERR_NOT_FOUND (no file there), KTUNE_ERR_BAD_INPUT (out is NULL,
 * or the file is not a ktune database or has a newer schema) or KTUNE_ERR_RUNTIME.
 */
KTUNE_API int ktune_open(const char* path, ktune_db** out);

/**
 * Looks up the best config for (gpu, kernel, shape, dtype, layout).
 *   gpu            the GPU model name as `ktune devices` prints it ("NVIDIA H200"); NULL means
 *                  the database's only GPU (KTUNE_ERR_BAD_INPUT when it holds several)
 *   kernel         "gemm", "rmsnorm", ... (`ktune query --help` lists them)
 *   shape          "m=16,n=4096,k=4096"; any order of dimensions; every dimension of the kernel
 *   dtype          "f32", "f16", "bf16", "fp8e4m3"
 *   layout         the kernel's layout or mode, part of the key: "nt" or "nn" for gemm (optionally
 *                  followed by "+bias" and/or "+silu"), "" or "residual" for rmsnorm, "neox" or
 *                  "gptj" for rmsnorm_rope, "", "causal" or "padding" for softmax, "fused" or
 *                  "split" for swiglu, "" for kernels without layouts; NULL means the kernel's
 *                  default layout ("nt" for gemm, "neox" for rmsnorm_rope, "fused" for swiglu,
 *                  "" otherwise). A layout the kernel does not accept is KTUNE_ERR_BAD_INPUT.
 *   allow_fallback non-zero: when the shape was not tuned, answer with the nearest tuned shape
 *                  of the same kernel, dtype, layout and GPU (the JSON says "fallback":true)
 *   json_out       receives a JSON object (free it with ktune_free_string), NULL on failure:
 *                  {"gpu","kernel","source_hash","shape","tuned_shape","dtype","layout","config_name",
 *                   "config":{...},"median_us",...,"fallback":true|false}
 * Returns KTUNE_OK, KTUNE_ERR_NOT_FOUND (nothing tuned for the key), KTUNE_ERR_BAD_INPUT or
 * KTUNE_ERR_RUNTIME.
 */
KTUNE_API int ktune_lookup(ktune_db* db, const char* gpu, const char* kernel, const char* shape,
                           const char* dtype, const char* layout, int allow_fallback, char** json_out);

/** Frees a string returned by ktune_lookup; NULL is allowed. */
KTUNE_API void ktune_free_string(char* s);

/** Closes a database opened by ktune_open; NULL is allowed. */
KTUNE_API void ktune_close(ktune_db* db);

/**
 * The calling thread's last error message ("" when none). Every other ktune call clears it
 * first, so read it right after the call that failed.
 */
KTUNE_API const char* ktune_last_error(void);

/** The library's version, e.g. "0.1.0". */
KTUNE_API const char* ktune_version(void);

#ifdef __cplusplus
}
#endif

#endif /* KTUNE_KTUNE_H */
