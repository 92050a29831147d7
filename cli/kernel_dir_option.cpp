#include "cli/kernel_dir_option.hpp"

#include <CLI/CLI.hpp>

#include "kernel_templates/user_kernel/user_kernels.hpp"

namespace ktune::cli {

void add_kernel_dir_option(CLI::App& cmd) {
  cmd.add_option_function<std::vector<std::string>>(
         "--kernel-dir",
         [](const std::vector<std::string>& dirs) {
           for (const auto& dir : dirs) kernel_templates::load_kernel_folder(dir);
         },
         "A folder of your own kernels: each NAME.cu (a templated __global__ function) beside its "
         "NAME.toml (dimensions, parameters, arguments, launch, reference; docs/byo.md). --kernel NAME "
         "then names one of them, e.g. --kernel-dir examples/byo/transpose --kernel transpose")
      ->type_name("DIR");
}

}  // namespace ktune::cli
