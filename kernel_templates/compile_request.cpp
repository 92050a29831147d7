#include "kernel_templates/compile_request.hpp"

#include <fstream>
#include <sstream>

#include "kernel_templates/cuda_include_dir.hpp"
#include "ktune/error.hpp"

namespace ktune::kernel_templates {

harness::CompileRequest make_compile_request(const CompileSpec& spec, const SourceLibrary& sources,
                                             const std::string& arch) {
  harness::CompileRequest r;
  if (!spec.prebuilt_cubin.empty()) {
    std::ifstream in(spec.prebuilt_cubin, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    if (!in || bytes.str().empty())
      throw Error(ErrorKind::kBadInput,
                  "cannot read the prebuilt cubin '" + spec.prebuilt_cubin.string() + "'");
    r.prebuilt_cubin = bytes.str();
    r.program_name = spec.source_name;
    r.name_expressions = spec.name_expressions;
    r.arch = arch;
    return r;
  }
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
