#include "cache/detail/lookup_statements.hpp"

#include "cache/detail/sqlite_db.hpp"

namespace ktune::cache::detail {

void prepare_lookup_statements(Database& db) {
  for (const std::string_view sql : kExactLookupStatements) (void)db.cached(sql);
}

}  // namespace ktune::cache::detail
