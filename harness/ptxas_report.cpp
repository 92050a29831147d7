// Parser for the ptxas verbose report (-Xptxas=-v) that NVRTC appends to the program log, e.g.
//   ptxas info    : Compiling entry function '_Z5spillPfii' for 'sm_80'
//   ptxas info    : Function properties for _Z5spillPfii
//   ptxas         .     216 bytes stack frame, 248 bytes spill stores, 248 bytes spill loads
//   ptxas info    : Used 24 registers, used 0 barriers, 216 bytes cumulative stack size, 368 bytes cmem[0]
// Older toolkits print "N bytes lmem" / "N bytes smem" on the "Used" line; both forms are read.

#include <nlohmann/json.hpp>

#include <regex>
#include <sstream>

#include "harness/ptxas_report.hpp"
#include "ktune/error.hpp"

namespace ktune::harness {
namespace {

/// The number before `unit` on `line` ("248 bytes spill stores" -> 248), or -1 when absent.
int number_before(const std::string& line, const std::regex& pattern) {
  std::smatch m;
  if (std::regex_search(line, m, pattern)) return std::stoi(m[1].str());
  return -1;
}

}  // namespace

std::map<std::string, KernelResources> parse_ptxas_report(const std::string& log) {
  static const std::regex kEntry(R"(Compiling entry function '([^']+)')");
  static const std::regex kProperties(R"(Function properties for (\S+))");
  static const std::regex kUsed(R"(Used (\d+) registers)");
  static const std::regex kStack(R"((\d+) bytes stack frame)");
  static const std::regex kSpillStores(R"((\d+) bytes spill stores)");
  static const std::regex kSpillLoads(R"((\d+) bytes spill loads)");
  static const std::regex kSmem(R"((\d+) bytes smem)");
  static const std::regex kLmem(R"((\d+) bytes lmem)");
  static const std::regex kCmem(R"((\d+) bytes cmem\[0\])");

  std::map<std::string, KernelResources> entries;
  std::map<std::string, KernelResources> properties;  // stack/spills of every function, kernels or not
  std::string entry;                                  // the kernel the next "Used" line belongs to
  std::string described;                              // the function the next "stack frame" line belongs to
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("ptxas", 0) != 0) continue;
    std::smatch m;
    if (std::regex_search(line, m, kEntry)) {
      entry = m[1].str();
      entries[entry];
    } else if (std::regex_search(line, m, kProperties)) {
      described = m[1].str();
    } else if (int stack = number_before(line, kStack); stack >= 0 && !described.empty()) {
      KernelResources& p = properties[described];
      p.local_bytes = stack;
      p.spill_store_bytes = std::max(0, number_before(line, kSpillStores));
      p.spill_load_bytes = std::max(0, number_before(line, kSpillLoads));
    } else if (int regs = number_before(line, kUsed); regs >= 0 && !entry.empty()) {
      KernelResources& k = entries[entry];
      k.registers = regs;
      k.shared_bytes = std::max(0, number_before(line, kSmem));
      k.constant_bytes = std::max(0, number_before(line, kCmem));
      if (int lmem = number_before(line, kLmem); lmem >= 0) k.local_bytes = lmem;
    }
  }
  for (auto& [name, k] : entries) {
    if (auto it = properties.find(name); it != properties.end()) {
      k.local_bytes = std::max(k.local_bytes, it->second.local_bytes);
      k.spill_store_bytes = it->second.spill_store_bytes;
      k.spill_load_bytes = it->second.spill_load_bytes;
    }
  }
  return entries;
}

std::string resources_to_json(const std::map<std::string, KernelResources>& resources) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [name, k] : resources) {
    out[name] = {{"registers", k.registers},
                 {"shared_bytes", k.shared_bytes},
                 {"spill_store_bytes", k.spill_store_bytes},
                 {"spill_load_bytes", k.spill_load_bytes},
                 {"local_bytes", k.local_bytes},
                 {"constant_bytes", k.constant_bytes}};
  }
  return out.dump();
}

std::map<std::string, KernelResources> resources_from_json(const std::string& json) {
  std::map<std::string, KernelResources> out;
  try {
    const nlohmann::json in = nlohmann::json::parse(json);
    for (const auto& [name, v] : in.items()) {
      KernelResources k;
      k.registers = v.value("registers", 0);
      k.shared_bytes = v.value("shared_bytes", 0);
      k.spill_store_bytes = v.value("spill_store_bytes", 0);
      k.spill_load_bytes = v.value("spill_load_bytes", 0);
      k.local_bytes = v.value("local_bytes", 0);
      k.constant_bytes = v.value("constant_bytes", 0);
      out[name] = k;
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::kBadInput, std::string("kernel resources are not valid JSON: ") + e.what());
  }
  return out;
}

}  // namespace ktune::harness
