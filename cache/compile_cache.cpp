#include "cache/config_cache.hpp"
#include "cache/detail/impl.hpp"
#include "ktune/error.hpp"

namespace ktune::cache {

using detail::StatementLease;

std::optional<CompiledArtifact> ConfigCache::find_compiled(std::string_view key) const {
  std::lock_guard lock(impl_->mu);
  std::optional<CompiledArtifact> out;
  {
    StatementLease s = impl_->db.cached(
        "SELECT key, cubin, log, lowered_names_json, resources_json, compile_ms, kernel_name, source_hash"
        " FROM compile_cache WHERE key = ?1");
    s->bind(1, key);
    if (!s->step()) return std::nullopt;
    out = CompiledArtifact{s->text(0), s->blob(1), s->text(2), s->text(3),
                           s->text(4), s->real(5), s->text(6), s->text(7)};
  }
  if (impl_->mode == Mode::kReadWrite) {
    // last_used_at lets a size-bounded prune drop the coldest entries first. Refreshed at most once
    // an hour per entry, so a hit rarely costs a write; best effort: a busy database must not turn
    // a hit into a failure.
    try {
      StatementLease u = impl_->db.cached(
          "UPDATE compile_cache SET last_used_at = ?2 WHERE key = ?1"
          " AND last_used_at < strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-1 hour')");
      u->bind(1, key).bind(2, detail::now_iso());
      u->run();
    } catch (const Error&) {
    }
  }
  return out;
}

void ConfigCache::store_compiled(const CompiledArtifact& artifact) {
  impl_->require_writable("store_compiled");
  if (artifact.key.empty()) throw Error(ErrorKind::kBadInput, "compile cache key is empty");
  detail::require_json_object(artifact.lowered_names_json, "CompiledArtifact::lowered_names_json");
  detail::require_json_object(artifact.resources_json, "CompiledArtifact::resources_json");
  std::lock_guard lock(impl_->mu);
  detail::Transaction tx(impl_->db);
  StatementLease s = impl_->db.cached(
      "INSERT OR REPLACE INTO compile_cache (key, cubin, log, lowered_names_json, resources_json, compile_ms,"
      " kernel_name, source_hash, created_at, last_used_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9)");
  s->bind(1, artifact.key)
      .bind_blob(2, artifact.cubin)
      .bind(3, artifact.log)
      .bind(4, artifact.lowered_names_json);
  s->bind(5, artifact.resources_json).bind(6, artifact.compile_ms).bind(7, artifact.kernel_name);
  s->bind(8, artifact.source_hash).bind(9, detail::now_iso());
  s->run();
  tx.commit();
}

}  // namespace ktune::cache
