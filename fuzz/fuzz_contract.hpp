#pragma once
/// The contract every parser of untrusted text keeps, checked by each fuzz target: it returns a value
/// or throws ktune::Error of kind kBadInput (the worker protocol's framing errors: kRuntime with
/// api_code KTUNE_PROTOCOL_ERROR, as measure/worker_protocol.hpp documents). Anything else — another
/// exception, another kind — prints what was thrown and aborts, which libFuzzer (and the corpus
/// replay) reports as a finding; crashes and out-of-bounds reads are the sanitizers' to catch.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>
#include <typeinfo>

#include "ktune/error.hpp"

namespace ktune::fuzz {

[[noreturn]] inline void contract_broken(std::string_view target, std::string_view what,
                                         std::string_view text) {
  std::fprintf(stderr, "%.*s: contract broken: %.*s: %.*s\n", static_cast<int>(target.size()), target.data(),
               static_cast<int>(what.size()), what.data(), static_cast<int>(text.size()), text.data());
  std::abort();
}

/// Runs `parse`; returns normally when it returned or threw ktune::Error(kBadInput), or an error
/// `accept_also` accepts; aborts otherwise.
template <typename Parse, typename Accept>
void expect_contract(std::string_view target, Parse&& parse, Accept&& accept_also) {
  try {
    parse();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kBadInput || accept_also(e)) return;
    contract_broken(target, "ktune::Error of a kind other than kBadInput", e.what());
  } catch (const std::exception& e) {
    contract_broken(target, typeid(e).name(), e.what());
  } catch (...) {
    contract_broken(target, "a non-std exception", "");
  }
}

template <typename Parse>
void expect_contract(std::string_view target, Parse&& parse) {
  expect_contract(target, parse, [](const Error&) { return false; });
}

/// Aborts with `what` unless `ok` (a property of a value the parser returned, e.g. a round trip).
inline void require(std::string_view target, bool ok, std::string_view what) {
  if (!ok) contract_broken(target, "property violated", what);
}

}  // namespace ktune::fuzz
