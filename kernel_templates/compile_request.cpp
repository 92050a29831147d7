#include "kernel_templates/compile_request.hpp"

#include "kernel_templates/cuda_include_dir.hpp"

namespace ktune::kernel_templates {

harness::CompileRequest make_compile_request(const CompileSpec& spec, const SourceLibrary& sources,
                                             const std::string& arch) {
  harness::CompileRequest r;
  r.source = sources.text(spec.source_name);
  r.program_name = spec.source_name;
  r.name_expressions = spec.name_expressions;
  r.options = spec.options;
  r.options.push_back("-I" + cuda_include_dir().string());
  r.arch = arch;
  r.headers = sources.headers();
  return r;
}

}  // namespace ktune::kernel_templates
