// Looks a key up through the installed C ABI and prints the answer with the runtime library's
// version; constructs a ktune::Runtime when a GPU is present (links the C++ API).
//   consumer DB GPU SHAPE
#include <cstdio>

#include "ktune/ktune.h"
#include "ktune/ktune.hpp"
#include "ktune/ktune_runtime.h"
#include "ktune/version.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: consumer DB GPU SHAPE\n");
    return 2;
  }
  ktune_db* db = nullptr;
  if (ktune_open(argv[1], &db) != KTUNE_OK) {
    std::fprintf(stderr, "%s\n", ktune_last_error());
    return 1;
  }
  char* json = nullptr;
  const int rc = ktune_lookup(db, argv[2], "gemm", argv[3], "bf16", "nt", 0, &json);
  if (rc != KTUNE_OK) {
    std::fprintf(stderr, "%s\n", ktune_last_error());
    ktune_close(db);
    return rc;
  }
  std::printf("%s\nruntime library %s (header %s)\n", json, ktune_runtime_version(), KTUNE_VERSION_STRING);
  ktune_free_string(json);
  ktune_close(db);
  // The C++ runtime links too: without a GPU it says so through ktune::Error.
  try {
    ktune::Runtime rt;
    std::printf("gpu %s\n", rt.gpu_name().c_str());
  } catch (const ktune::Error& e) {
    std::printf("no runtime here: %s\n", e.what());
  }
  return 0;
}
