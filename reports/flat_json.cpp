#include "reports/flat_json.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace ktune::reports {
namespace {

using nlohmann::json;

/// Collects the scalar members of a flat object; stops (returns false) at the first nested value
/// so that the caller can take the slow path.
class FlatObjectSax final : public nlohmann::json_sax<json> {
 public:
  explicit FlatObjectSax(std::vector<NamedValue>& out) : out_(out) {}

  bool null() override { return scalar("null"); }
  bool boolean(bool value) override { return scalar(value ? "true" : "false"); }
  bool number_integer(number_integer_t value) override { return scalar(std::to_string(value)); }
  bool number_unsigned(number_unsigned_t value) override { return scalar(std::to_string(value)); }
  bool number_float(number_float_t, const string_t& text) override { return scalar(text); }
  bool string(string_t& value) override { return scalar(value); }
  bool binary(binary_t&) override { return nest(); }
  bool start_object(std::size_t) override {
    if (depth_++ == 0) {
      object_ = true;
      return true;
    }
    return nest();
  }
  bool key(string_t& name) override {
    key_ = name;
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) override { return nest(); }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

  bool object() const { return object_; }
  bool nested() const { return nested_; }

 private:
  bool scalar(const std::string& text) {
    if (depth_ != 1) return false;  // a bare scalar is not an object
    out_.emplace_back(key_, text);
    return true;
  }
  bool nest() {
    nested_ = depth_ >= 1;
    return false;
  }

  std::vector<NamedValue>& out_;
  std::string key_;
  int depth_ = 0;
  bool object_ = false;
  bool nested_ = false;
};

void sort_unique(std::vector<NamedValue>& out) {
  // Duplicate names: the last one wins, as in a JSON tree.
  std::stable_sort(out.begin(), out.end(),
                   [](const NamedValue& a, const NamedValue& b) { return a.first < b.first; });
  std::vector<NamedValue> unique;
  unique.reserve(out.size());
  for (NamedValue& v : out) {
    if (!unique.empty() && unique.back().first == v.first) {
      unique.back() = std::move(v);
    } else {
      unique.push_back(std::move(v));
    }
  }
  out = std::move(unique);
}

}  // namespace

bool flatten_json_object(std::string_view text, std::vector<NamedValue>& out) {
  out.clear();
  if (text == "{}") return true;
  FlatObjectSax sax(out);
  if (json::sax_parse(text, &sax) && sax.object()) {
    sort_unique(out);
    return true;
  }
  out.clear();
  if (!sax.nested()) return false;
  const json tree = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!tree.is_object()) return false;
  for (const auto& [name, value] : tree.items()) {  // sorted by name already
    out.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return true;
}

bool is_json_object(std::string_view text) {
  if (text == "{}") return true;
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && text[first] == '{' && json::accept(text);
}

}  // namespace ktune::reports
