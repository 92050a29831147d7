#include "headless_chromium.hpp"

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

namespace ktune::reports::testing {
namespace {

/// Seconds before a hung chromium is killed (it loads a local page in ~2 s on 2 cores).
constexpr int kChromiumTimeoutS = 120;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::optional<std::filesystem::path> find_chromium() {
  if (const char* env = std::getenv("KTUNE_CHROMIUM"); env != nullptr && *env != '\0') return env;
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::stringstream dirs(path);
  for (std::string dir; std::getline(dirs, dir, ':');) {
    for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
      const std::filesystem::path candidate = std::filesystem::path(dir) / name;
      std::error_code ec;
      if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
    }
  }
  return std::nullopt;
}

BrowserResult run_headless(const std::filesystem::path& chromium, const std::string& url,
                           const std::filesystem::path& work_dir, int budget_ms) {
  const std::filesystem::path dom = work_dir / "dom.html";
  const std::filesystem::path log = work_dir / "chromium.log";
  const std::vector<std::string> args = {"--headless",
                                         "--no-sandbox",
                                         "--disable-gpu",
                                         "--disable-quic",
                                         "--no-first-run",
                                         "--disable-background-networking",
                                         "--disable-component-update",
                                         "--disable-sync",
                                         "--disable-default-apps",
                                         "--disable-extensions",
                                         "--no-default-browser-check",
                                         "--host-resolver-rules=MAP * ~NOTFOUND",
                                         "--user-data-dir=" + (work_dir / "profile").string(),
                                         "--enable-logging=stderr",
                                         "--v=0",
                                         "--window-size=1280,2400",
                                         "--virtual-time-budget=" + std::to_string(budget_ms),
                                         "--dump-dom",
                                         url};
  std::string command = "timeout " + std::to_string(kChromiumTimeoutS) + " " + shell_quote(chromium.string());
  for (const std::string& a : args) command += " " + shell_quote(a);
  command += " > " + shell_quote(dom.string()) + " 2> " + shell_quote(log.string()) + " < /dev/null";
  const int status = std::system(command.c_str());
  BrowserResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.dom = read_file(dom);
  result.log = read_file(log);
  return result;
}

std::string console_output(const std::string& log) {
  std::string lines_out;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(":CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos)
      lines_out += line + "\n";
  }
  return lines_out;
}

std::string element_text(const std::string& dom, const std::string& id) {
  const size_t at = dom.find("id=\"" + id + "\"");
  if (at == std::string::npos) return {};
  const size_t start = dom.find('>', at);
  const size_t end = dom.find('<', start);
  if (start == std::string::npos || end == std::string::npos) return {};
  std::string text = dom.substr(start + 1, end - start - 1);
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '&') {
      out += text[i];
      continue;
    }
    const size_t semi = text.find(';', i);
    const std::string entity = text.substr(i, semi - i + 1);
    if (entity == "&amp;") {
      out += '&';
    } else if (entity == "&lt;") {
      out += '<';
    } else if (entity == "&gt;") {
      out += '>';
    } else if (entity == "&quot;") {
      out += '"';
    } else if (entity == "&nbsp;") {
      out += "\xC2\xA0";
    } else {
      out += entity;
    }
    i = semi;
  }
  return out;
}

}  // namespace ktune::reports::testing
