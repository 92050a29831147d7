#include "kernel_templates/embedded_sources.hpp"
#include "kernel_templates/kernel_catalog.hpp"
#include "kernel_templates/spec_registry.hpp"
#include "kernel_templates/user_kernel/user_kernels.hpp"

namespace ktune::kernel_templates {

std::string template_source_hash(std::string_view kernel) {
  const auto files = kernel_source_files(kernel);
  if (files.empty()) return {};
  if (find_user_kernel(kernel) != nullptr) return SourceLibrary::from_environment().hash(files);
  static const SourceLibrary kBuiltin = SourceLibrary::builtin();
  return kBuiltin.hash(files);
}

std::map<std::string, std::string> current_template_hashes() {
  std::map<std::string, std::string> out;
  for (const auto& k : kernel_catalog()) {
    auto hash = template_source_hash(k.name);
    if (!hash.empty()) out.emplace(k.name, std::move(hash));
  }
  return out;
}

}  // namespace ktune::kernel_templates
