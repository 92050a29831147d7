#pragma once
/// The `--kernel-dir DIR` option of tune, bench, query and report: loads the user kernels of DIR
/// (each NAME.cu beside its NAME.toml, docs/byo.md) as it is parsed, so that `--kernel NAME` then
/// names one of them exactly as it names a built-in kernel. May be given more than once.

namespace CLI {
class App;
}

namespace ktune::cli {

/// Adds `--kernel-dir DIR` to `cmd`.
void add_kernel_dir_option(CLI::App& cmd);

}  // namespace ktune::cli
