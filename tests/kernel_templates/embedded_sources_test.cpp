// Embedded template sources (D1), the user-folder overlay, the source hash, and the agreement of the
// gemm default space with the specs.
#include "kernel_templates/embedded_sources.hpp"

#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "kernel_templates/spec_registry.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {
namespace {

std::filesystem::path source_dir() {
  const char* dir = std::getenv("KTUNE_SOURCE_DIR");
  return dir != nullptr ? dir : KTUNE_TEST_SOURCE_DIR;
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The template files on disk by file name: every `.cu` and `.cuh` in kernel_templates/'s
/// operator folders (embedded by name alone, so two files may not share a name).
std::map<std::string, std::filesystem::path> template_paths_on_disk(std::string_view extension = "") {
  std::map<std::string, std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(source_dir() / "kernel_templates")) {
    const auto ext = e.path().extension().string();
    if (ext != ".cu" && ext != ".cuh") continue;
    if (!extension.empty() && ext != extension) continue;
    const bool fresh = out.emplace(e.path().filename().string(), e.path()).second;
    EXPECT_TRUE(fresh) << "two template files named " << e.path().filename();
  }
  return out;
}

std::vector<std::string> template_files_on_disk(std::string_view extension = "") {
  std::vector<std::string> out;
  for (const auto& [name, path] : template_paths_on_disk(extension)) out.push_back(name);
  return out;
}

TEST(EmbeddedSources, MatchTheFilesOnDisk) {
  const SourceLibrary lib = SourceLibrary::builtin();
  const auto on_disk = template_files_on_disk();
  for (const char* name : {"gemm_tiled.cu", "gemm_gemv.cu", "gemm_mma.cu", "gemm_reference.cu",
                           "ktune_device.cuh", "gemm_splitk_reduce.cuh"}) {
    EXPECT_NE(std::find(on_disk.begin(), on_disk.end(), name), on_disk.end()) << name;
  }
  EXPECT_EQ(lib.names(), on_disk);  // every template file is embedded, and nothing else
  for (const auto& name : on_disk) {
    ASSERT_TRUE(lib.contains(name)) << name;
    EXPECT_EQ(lib.text(name), read_file(template_paths_on_disk().at(name))) << name;
  }
  EXPECT_EQ(embedded_files().size(), lib.names().size());
  // NVRTC gets every .cuh, in name order.
  const auto headers = lib.headers();
  const auto cuh = template_files_on_disk(".cuh");
  ASSERT_EQ(headers.size(), cuh.size());
  ASSERT_GE(cuh.size(), 2u);  // at least ktune_device.cuh and gemm_splitk_reduce.cuh
  for (size_t i = 0; i < cuh.size(); ++i) {
    EXPECT_EQ(headers[i].first, cuh[i]);
    EXPECT_EQ(headers[i].second, lib.text(cuh[i]));
  }
  try {
    (void)lib.text("nope.cu");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotFound);
    EXPECT_NE(std::string(e.what()).find("gemm_tiled.cu"), std::string::npos);
  }
}

TEST(EmbeddedSources, FolderOverlaysAndChangesTheHash) {
  const auto dir = std::filesystem::temp_directory_path() / ("ktune_overlay_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "ktune_device.cuh") << "// user header\n";
    std::ofstream(dir / "my_kernel.cu") << "__global__ void k() {}\n";
    std::ofstream(dir / "notes.txt") << "ignored\n";
  }
  const SourceLibrary builtin = SourceLibrary::builtin();
  const SourceLibrary user = SourceLibrary::with_folder(dir);
  EXPECT_EQ(user.text("ktune_device.cuh"), "// user header\n");
  EXPECT_EQ(user.text("my_kernel.cu"), "__global__ void k() {}\n");
  EXPECT_FALSE(user.contains("notes.txt"));
  EXPECT_EQ(user.text("gemm_tiled.cu"), builtin.text("gemm_tiled.cu"));
  EXPECT_EQ(user.overlay_folder(), dir);

  const auto files = kernel_source_files("gemm");
  const std::string h = builtin.hash(files);
  EXPECT_EQ(h.size(), 16u);
  EXPECT_EQ(h, SourceLibrary::builtin().hash(files));
  EXPECT_NE(h, user.hash(files));  // a header the templates include changed
  EXPECT_EQ(template_source_hash("gemm"), h);
  EXPECT_EQ(template_source_hash("no_such_kernel"), "");
  std::filesystem::remove_all(dir);
  EXPECT_THROW(SourceLibrary::with_folder(dir), Error);
}

// The template source hash covers what a kernel's sources include, directly or through other
// headers, and nothing else: a new or changed header no source of the kernel includes leaves its
// results fresh.
TEST(SourceLibrary, HashCoversTheIncludedFilesOnly) {
  const auto dir = std::filesystem::temp_directory_path() / ("ktune_incl_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir / "top.cu")
        << "#include \"mid.cuh\"\n  #  include \"ktune_device.cuh\"\n#include <cuda_bf16.h>\n";
    std::ofstream(dir / "mid.cuh") << "#pragma once\n#include \"leaf.cuh\"\n#include \"not_here.cuh\"\n";
    std::ofstream(dir / "leaf.cuh") << "// leaf\n";
    std::ofstream(dir / "other.cuh") << "// included by nobody\n";
  }
  const SourceLibrary lib = SourceLibrary::with_folder(dir);
  const std::vector<std::string> top = {"top.cu"};
  EXPECT_EQ(lib.included_files(top), (std::vector<std::string>{"ktune_device.cuh", "leaf.cuh", "mid.cuh"}));
  const std::string before = lib.hash(top);
  std::ofstream(dir / "other.cuh") << "// changed\n";
  std::ofstream(dir / "new.cuh") << "// new\n";
  EXPECT_EQ(SourceLibrary::with_folder(dir).hash(top), before);
  std::ofstream(dir / "leaf.cuh") << "// leaf, changed\n";  // two includes away
  EXPECT_NE(SourceLibrary::with_folder(dir).hash(top), before);
  std::filesystem::remove_all(dir);

  // The built-in templates: the cluster GEMM includes the shared main loop and the cluster
  // primitives; the tiled GEMM includes neither, and no GEMM includes the softmax mask.
  const SourceLibrary builtin = SourceLibrary::builtin();
  const std::vector<std::string> cluster = {"gemm_mma_cluster.cu"};
  const auto inc = builtin.included_files(cluster);
  for (const char* h :
       {"gemm_mma_mainloop.cuh", "gemm_mma_primitives.cuh", "cluster.cuh", "ktune_device.cuh"})
    EXPECT_NE(std::find(inc.begin(), inc.end(), h), inc.end()) << h;
  const auto gemm = builtin.included_files(kernel_source_files("gemm"));
  EXPECT_EQ(std::find(gemm.begin(), gemm.end(), "softmax_mask.cuh"), gemm.end());
  const std::vector<std::string> tiled = {"gemm_tiled.cu"};
  const auto tiled_inc = builtin.included_files(tiled);
  EXPECT_EQ(std::find(tiled_inc.begin(), tiled_inc.end(), "cluster.cuh"), tiled_inc.end());
}

TEST(GemmSpace, NamesTheSpecsParameters) {
  const auto space_path = source_dir() / "configs" / "spaces" / "gemm.toml";
  if (!std::filesystem::exists(space_path)) GTEST_SKIP() << "no " << space_path;
  const toml::table space = toml::parse_file(space_path.string());
  const toml::array* templates = space["template"].as_array();
  ASSERT_NE(templates, nullptr);
  for (const auto& v : *templates) {
    const toml::table& t = *v.as_table();
    const KernelSpec& spec = find_spec("gemm", t["name"].value_or(std::string()));
    std::vector<std::string> names;
    for (const auto& [k, val] : *t["params"].as_table()) names.emplace_back(k.str());
    auto expected = spec.param_names();
    std::sort(names.begin(), names.end());
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(names, expected) << spec.variant();
  }
}

}  // namespace
}  // namespace ktune::kernel_templates
