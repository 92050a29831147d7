/* The C ABI (include/ktune/ktune.h) proved from C: open, lookup found / fallback / not found /
 * bad input, close, last error. Reads the database and the expected answers that
 * make_capi_fixture wrote:  ktune_capi_c_test DB_PATH EXPECTED_PATH  (KTUNE_DB names DB_PATH too).
 * Prints one line a check and returns the number of failed checks (0 = all passed). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ktune/ktune.h"

static int g_failures = 0;

static void check(int ok, const char* what, const char* detail) {
  printf("%s: %s%s%s\n", ok ? "ok  " : "FAIL", what, detail != NULL && !ok ? " -- " : "",
         detail != NULL && !ok ? detail : "");
  if (!ok) ++g_failures;
}

static int contains(const char* text, const char* part) { return text != NULL && strstr(text, part) != NULL; }

/* Reads `key=value` from the expected file into buf; exits on a missing key. */
static void expected(const char* path, const char* key, char* buf, size_t size) {
  char line[512];
  size_t key_len = strlen(key);
  FILE* f = fopen(path, "r");
  if (f == NULL) {
    printf("FAIL: cannot open %s\n", path);
    exit(1);
  }
  while (fgets(line, sizeof line, f) != NULL) {
    if (strncmp(line, key, key_len) == 0 && line[key_len] == '=') {
      strncpy(buf, line + key_len + 1, size - 1);
      buf[size - 1] = '\0';
      buf[strcspn(buf, "\n")] = '\0';
      fclose(f);
      return;
    }
  }
  fclose(f);
  printf("FAIL: no %s in %s\n", key, path);
  exit(1);
}

/* `"key":"value"` as the compact JSON of the ABI writes it. */
static void json_pair(char* buf, size_t size, const char* key, const char* value) {
  sprintf(buf, "\"%s\":\"%.*s\"", key, (int)(size - strlen(key) - 8), value);
}

int main(int argc, char** argv) {
  char gpu[256], exact_shape[256], reordered[256], exact_config[256], nn_config[256], fallback_shape[256],
      seed[64];
  char want[600];
  ktune_db* db = NULL;
  ktune_db* db_env = NULL;
  char* json = NULL;
  int rc;

  if (argc != 3) {
    printf("usage: ktune_capi_c_test DB_PATH EXPECTED_PATH\n");
    return 2;
  }
  expected(argv[2], "seed", seed, sizeof seed);
  expected(argv[2], "gpu", gpu, sizeof gpu);
  expected(argv[2], "exact_shape", exact_shape, sizeof exact_shape);
  expected(argv[2], "reordered_shape", reordered, sizeof reordered);
  expected(argv[2], "exact_config", exact_config, sizeof exact_config);
  expected(argv[2], "nn_config", nn_config, sizeof nn_config);
  expected(argv[2], "fallback_shape", fallback_shape, sizeof fallback_shape);
  printf("fixture seed %s\n", seed);

  check(ktune_version() != NULL && strlen(ktune_version()) > 0, "ktune_version is not empty", NULL);

  /* Opening. */
  db = (ktune_db*)&rc; /* must be reset to NULL on failure */
  rc = ktune_open("/nonexistent-ktune-dir/none.db", &db);
  check(rc == KTUNE_ERR_NOT_FOUND, "open of a missing file returns KTUNE_ERR_NOT_FOUND", ktune_last_error());
  check(db == NULL, "a failed open leaves *out NULL", NULL);
  check(contains(ktune_last_error(), "no database at /nonexistent-ktune-dir/none.db"),
        "a failed open says where it looked", ktune_last_error());
  check(ktune_open(argv[1], NULL) == KTUNE_ERR_BAD_INPUT, "open with out == NULL returns KTUNE_ERR_BAD_INPUT",
        NULL);
  rc = ktune_open(argv[2], &db); /* a text file, not a database */
  check(rc == KTUNE_ERR_BAD_INPUT, "open of a file that is not a database returns KTUNE_ERR_BAD_INPUT",
        ktune_last_error());
  check(db == NULL && strlen(ktune_last_error()) > 0, "... with a message", ktune_last_error());

  rc = ktune_open(NULL, &db_env);
  check(rc == KTUNE_OK && db_env != NULL, "open(NULL) resolves $KTUNE_DB", ktune_last_error());
  ktune_close(db_env);

  rc = ktune_open(argv[1], &db);
  check(rc == KTUNE_OK && db != NULL, "open of the fixture database", ktune_last_error());
  if (db == NULL) return 1;

  /* Found. */
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "bf16", "nt", 1, &json);
  check(rc == KTUNE_OK, "lookup of a tuned key returns KTUNE_OK", ktune_last_error());
  check(strcmp(ktune_last_error(), "") == 0, "a successful call leaves no last error", ktune_last_error());
  json_pair(want, sizeof want, "config_name", exact_config);
  check(contains(json, want), "found: JSON names the winner", json);
  check(contains(json, "\"fallback\":false"), "found: JSON says fallback false", json);
  json_pair(want, sizeof want, "tuned_shape", exact_shape);
  check(contains(json, want), "found: tuned_shape is the shape asked", json);
  check(contains(json, "\"median_us\":"), "found: JSON has the median", json);
  ktune_free_string(json);

  rc = ktune_lookup(db, gpu, "gemm", reordered, "bf16", "nt", 0, &json);
  json_pair(want, sizeof want, "config_name", exact_config);
  check(rc == KTUNE_OK && contains(json, want), "dimensions in another order find the same winner", json);
  ktune_free_string(json);

  /* Layouts: each its own winner; NULL is the kernel's default layout (nt for gemm). */
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "bf16", "nn", 0, &json);
  json_pair(want, sizeof want, "config_name", nn_config);
  check(rc == KTUNE_OK && contains(json, want), "layout nn finds the nn winner", json);
  check(contains(json, "\"layout\":\"nn\""), "layout nn: JSON says layout nn", json);
  ktune_free_string(json);
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "bf16", NULL, 0, &json);
  json_pair(want, sizeof want, "config_name", exact_config);
  check(rc == KTUNE_OK && contains(json, want), "layout NULL finds the nt winner", json);
  check(contains(json, "\"layout\":\"nt\""), "layout NULL: JSON says layout nt", json);
  ktune_free_string(json);
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "bf16", "tn", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "'tn'"),
        "unknown layout: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());

  /* Fallback. */
  rc = ktune_lookup(db, gpu, "gemm", fallback_shape, "bf16", "nt", 1, &json);
  check(rc == KTUNE_OK, "lookup of an untuned shape with fallback returns KTUNE_OK", ktune_last_error());
  check(contains(json, "\"fallback\":true"), "fallback: JSON says fallback true", json);
  json_pair(want, sizeof want, "tuned_shape", exact_shape);
  check(contains(json, want), "fallback: tuned_shape is the nearest tuned shape", json);
  json_pair(want, sizeof want, "shape", fallback_shape);
  check(contains(json, want), "fallback: shape is the one asked", json);
  json_pair(want, sizeof want, "config_name", exact_config);
  check(contains(json, want), "fallback: the nearest shape's winner", json);
  ktune_free_string(json);

  /* Not found. */
  json = (char*)&rc; /* must be reset to NULL on failure */
  rc = ktune_lookup(db, gpu, "gemm", fallback_shape, "bf16", "nt", 0, &json);
  check(rc == KTUNE_ERR_NOT_FOUND, "untuned shape without fallback returns KTUNE_ERR_NOT_FOUND",
        ktune_last_error());
  check(json == NULL, "a failed lookup leaves *json_out NULL", NULL);
  check(contains(ktune_last_error(), "no tuned config"), "not found: a message", ktune_last_error());
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "f16", "nt", 1, &json);
  check(rc == KTUNE_ERR_NOT_FOUND, "untuned dtype returns KTUNE_ERR_NOT_FOUND", ktune_last_error());
  rc = ktune_lookup(db, "No Such GPU", "gemm", exact_shape, "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_NOT_FOUND, "unknown GPU returns KTUNE_ERR_NOT_FOUND", ktune_last_error());

  /* Bad input. */
  rc = ktune_lookup(db, gpu, "gemm", "m=-1,n=4096,k=4096", "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "'m=-1'"),
        "negative dimension: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());
  rc = ktune_lookup(db, gpu, "gemm", "m=16,n=4096", "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "'k'"),
        "missing dimension: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());
  rc = ktune_lookup(db, gpu, "gemm", "m=16,n=4096,k=2147483648", "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "2147483648"),
        "dimension past 2^31-1: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());
  rc = ktune_lookup(db, gpu, "gemx", exact_shape, "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "'gemx'"),
        "unknown kernel: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());
  rc = ktune_lookup(db, gpu, "gemm", exact_shape, "f64", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "'f64'"),
        "unsupported dtype: KTUNE_ERR_BAD_INPUT naming it", ktune_last_error());
  check(ktune_lookup(db, gpu, NULL, exact_shape, "bf16", "nt", 1, &json) == KTUNE_ERR_BAD_INPUT,
        "NULL kernel: KTUNE_ERR_BAD_INPUT", NULL);
  check(ktune_lookup(db, gpu, "gemm", NULL, "bf16", "nt", 1, &json) == KTUNE_ERR_BAD_INPUT,
        "NULL shape: KTUNE_ERR_BAD_INPUT", NULL);
  check(ktune_lookup(db, gpu, "gemm", exact_shape, NULL, "nt", 1, &json) == KTUNE_ERR_BAD_INPUT,
        "NULL dtype: KTUNE_ERR_BAD_INPUT", NULL);
  check(ktune_lookup(db, gpu, "gemm", exact_shape, "bf16", "nt", 1, NULL) == KTUNE_ERR_BAD_INPUT,
        "NULL json_out: KTUNE_ERR_BAD_INPUT", NULL);
  check(ktune_lookup(NULL, gpu, "gemm", exact_shape, "bf16", "nt", 1, &json) == KTUNE_ERR_BAD_INPUT,
        "NULL db: KTUNE_ERR_BAD_INPUT", NULL);
  rc = ktune_lookup(db, NULL, "gemm", exact_shape, "bf16", "nt", 1, &json);
  check(rc == KTUNE_ERR_BAD_INPUT && contains(ktune_last_error(), "several GPUs"),
        "NULL gpu with two GPUs in the database: KTUNE_ERR_BAD_INPUT", ktune_last_error());

  ktune_close(db);
  ktune_close(NULL);
  ktune_free_string(NULL);
  check(1, "close and free accept NULL", NULL);

  printf("%d check(s) failed\n", g_failures);
  return g_failures == 0 ? 0 : 1;
}
