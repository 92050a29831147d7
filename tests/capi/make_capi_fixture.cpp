// Makes the database the C ABI test reads (C cannot call the C++ cache API), and writes what
// the C test must find in it as `key=value` lines.
//   make_capi_fixture DB_PATH EXPECTED_PATH

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "tests/cli/test_db_fixture.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: make_capi_fixture DB_PATH EXPECTED_PATH\n";
    return 2;
  }
  const std::filesystem::path db = argv[1];
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + suffix);
  const uint32_t seed = std::random_device{}();
  const auto fixture = ktune::testing::make_test_db(db, seed);
  const auto& exact = fixture.find("Test GPU Alpha", "gemm", "m=16,n=4096,k=4096", "bf16", "nt");
  const auto& nn = fixture.find("Test GPU Alpha", "gemm", "m=16,n=4096,k=4096", "bf16", "nn");

  std::ofstream out(argv[2]);
  out << "seed=" << seed << "\n"
      << "gpu=" << exact.gpu << "\n"
      << "exact_shape=" << exact.shape << "\n"
      << "reordered_shape=k=4096,n=4096,m=16\n"
      << "exact_config=" << exact.config_name << "\n"
      << "nn_config=" << nn.config_name
      << "\n"
      // |log2(24/16)| = 0.58 against |log2(512/24)| = 4.4: the nearest tuned shape is m=16.
      << "fallback_shape=m=24,n=4096,k=4096\n";
  std::cout << "made " << db << " (seed " << seed << ")\n";
  return out.good() ? 0 : 1;
}
