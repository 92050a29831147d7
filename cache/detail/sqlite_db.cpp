#include "cache/detail/sqlite_db.hpp"

#include <sqlite3.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/dtype.hpp"
#include "ktune/error.hpp"

namespace ktune::cache::detail {

std::string_view sqlite_code_name(int code) {
  // Names are stringized from SQLite's own constants, never typed by hand.
#define KTUNE_SQLITE_NAME(c) \
  case c:                    \
    return #c;
  switch (code) {
    KTUNE_SQLITE_NAME(SQLITE_OK)
    KTUNE_SQLITE_NAME(SQLITE_ERROR)
    KTUNE_SQLITE_NAME(SQLITE_INTERNAL)
    KTUNE_SQLITE_NAME(SQLITE_PERM)
    KTUNE_SQLITE_NAME(SQLITE_ABORT)
    KTUNE_SQLITE_NAME(SQLITE_BUSY)
    KTUNE_SQLITE_NAME(SQLITE_LOCKED)
    KTUNE_SQLITE_NAME(SQLITE_NOMEM)
    KTUNE_SQLITE_NAME(SQLITE_READONLY)
    KTUNE_SQLITE_NAME(SQLITE_INTERRUPT)
    KTUNE_SQLITE_NAME(SQLITE_IOERR)
    KTUNE_SQLITE_NAME(SQLITE_CORRUPT)
    KTUNE_SQLITE_NAME(SQLITE_NOTFOUND)
    KTUNE_SQLITE_NAME(SQLITE_FULL)
    KTUNE_SQLITE_NAME(SQLITE_CANTOPEN)
    KTUNE_SQLITE_NAME(SQLITE_PROTOCOL)
    KTUNE_SQLITE_NAME(SQLITE_EMPTY)
    KTUNE_SQLITE_NAME(SQLITE_SCHEMA)
    KTUNE_SQLITE_NAME(SQLITE_TOOBIG)
    KTUNE_SQLITE_NAME(SQLITE_CONSTRAINT)
    KTUNE_SQLITE_NAME(SQLITE_MISMATCH)
    KTUNE_SQLITE_NAME(SQLITE_MISUSE)
    KTUNE_SQLITE_NAME(SQLITE_NOLFS)
    KTUNE_SQLITE_NAME(SQLITE_AUTH)
    KTUNE_SQLITE_NAME(SQLITE_FORMAT)
    KTUNE_SQLITE_NAME(SQLITE_RANGE)
    KTUNE_SQLITE_NAME(SQLITE_NOTADB)
    KTUNE_SQLITE_NAME(SQLITE_NOTICE)
    KTUNE_SQLITE_NAME(SQLITE_WARNING)
    KTUNE_SQLITE_NAME(SQLITE_ROW)
    KTUNE_SQLITE_NAME(SQLITE_DONE)
    default:
      break;
  }
#undef KTUNE_SQLITE_NAME
  if ((code & 0xff) != code) return sqlite_code_name(code & 0xff);  // extended code: its primary
  return "SQLITE_UNKNOWN";
}

void sqlite_check(int rc, sqlite3* db, std::string_view call, const char* file, int line) {
  if (rc == SQLITE_OK || rc == SQLITE_ROW || rc == SQLITE_DONE) return;
  const int primary = rc & 0xff;
  const ErrorKind kind =
      (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) ? ErrorKind::kBadInput : ErrorKind::kRuntime;
  // errmsg is only meaningful when the connection's last error is this one.
  const char* msg = (db != nullptr && (sqlite3_extended_errcode(db) & 0xff) == primary) ? sqlite3_errmsg(db)
                                                                                        : sqlite3_errstr(rc);
  std::string where = fmt::format("{}:{}", file, line);
  // Which database, and what the faults a user meets most likely mean (tests/hardening/db_faults_test.cpp).
  const char* path = db != nullptr ? sqlite3_db_filename(db, "main") : nullptr;
  const std::string database = path != nullptr && *path != '\0' ? fmt::format(" (database {})", path) : "";
  std::string hint;
  if (primary == SQLITE_FULL || rc == SQLITE_IOERR_WRITE || rc == SQLITE_IOERR_FSYNC ||
      rc == SQLITE_IOERR_TRUNCATE) {
    hint =
        "; writing failed: is the disk full or the file over a size limit? The transaction was not committed";
  } else if (primary == SQLITE_BUSY) {
    hint = "; another process held the database's lock longer than the busy timeout";
  } else if (primary == SQLITE_READONLY) {
    hint = "; the database cannot be written here";
  }
  throw Error(kind,
              fmt::format("SQLite: {} ({}, extended code {}) in: {}{}{}", msg, sqlite_code_name(rc), rc, call,
                          database, hint),
              std::string(sqlite_code_name(rc)), std::move(where));
}

// ---------------------------------------------------------------- Statement

Statement::Statement(Database& db, std::string_view sql) : db_(db.handle()), sql_(sql) {
  const int rc = sqlite3_prepare_v3(db_, sql_.data(), static_cast<int>(sql_.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
  KTUNE_SQLITE_CHECK(rc, db_, "sqlite3_prepare_v3: " + sql_);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, int64_t value) {
  KTUNE_SQLITE_CHECK(sqlite3_bind_int64(stmt_, index, value), db_, "sqlite3_bind_int64: " + sql_);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  KTUNE_SQLITE_CHECK(sqlite3_bind_double(stmt_, index, value), db_, "sqlite3_bind_double: " + sql_);
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  // A default-constructed view has no data pointer, which SQLite would bind as NULL, not ''.
  const char* data = text.data() != nullptr ? text.data() : "";
  KTUNE_SQLITE_CHECK(sqlite3_bind_text64(stmt_, index, data, text.size(), SQLITE_TRANSIENT, SQLITE_UTF8), db_,
                     "sqlite3_bind_text64: " + sql_);
  return *this;
}

Statement& Statement::bind(int index, std::optional<double> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, std::optional<int64_t> value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind_blob(int index, std::string_view bytes) {
  KTUNE_SQLITE_CHECK(sqlite3_bind_blob64(stmt_, index, bytes.data(), bytes.size(), SQLITE_TRANSIENT), db_,
                     "sqlite3_bind_blob64: " + sql_);
  return *this;
}

Statement& Statement::bind_null(int index) {
  KTUNE_SQLITE_CHECK(sqlite3_bind_null(stmt_, index), db_, "sqlite3_bind_null: " + sql_);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);
  KTUNE_SQLITE_CHECK(rc, db_, "sqlite3_step: " + sql_);
  return false;
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() noexcept {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string_view Statement::text_view(int col) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

std::string Statement::text(int col) const { return std::string(text_view(col)); }

DType Statement::dtype(int col) const {
  const std::string_view name = text_view(col);
  if (const auto dtype = find_dtype(name)) return *dtype;
  throw Error(ErrorKind::kBadInput,
              fmt::format("the database holds dtype '{}', which this build does not know "
                          "(known: {})",
                          name, dtype_names(kDTypes)));
}

std::string Statement::blob(int col) const {
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
  if (p == nullptr) return {};
  return {p, static_cast<size_t>(sqlite3_column_bytes(stmt_, col))};
}

bool Statement::is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }

std::optional<double> Statement::opt_real(int col) const {
  if (is_null(col)) return std::nullopt;
  return real(col);
}

std::optional<int64_t> Statement::opt_int64(int col) const {
  if (is_null(col)) return std::nullopt;
  return int64(col);
}

// ---------------------------------------------------------------- Database

namespace {

/// `file:` URI of a path with `?immutable=1`; '%', '?' and '#' are percent-encoded (RFC 3986).
std::string immutable_uri(const std::filesystem::path& path) {
  std::string uri = "file:";
  for (const char c : std::filesystem::absolute(path).string()) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

Database::Database(const std::filesystem::path& path, Open mode) {
  // Memory statistics put one process-wide mutex on every SQLite allocation, which the lookup
  // threads of `ktune serve` would queue on; ktune never reads them. Only possible before SQLite
  // starts (a host program that started it already keeps its setting: the call then fails harmlessly).
  static const int no_memstatus = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)no_memstatus;
  int flags = SQLITE_OPEN_NOMUTEX;  // ConfigCache serializes every call itself
  std::string name = path.string();
  switch (mode) {
    case Open::kReadOnly:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Open::kReadOnlyImmutable:
      flags |= SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
      name = immutable_uri(path);
      break;
    case Open::kReadWrite:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case Open::kReadWriteCreate:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(ErrorKind::kRuntime,
                fmt::format("cannot open database {}: {} ({})", path.string(), msg, sqlite_code_name(rc)),
                std::string(sqlite_code_name(rc)), fmt::format("{}:{}", __FILE__, __LINE__));
  }
  sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() {
  cache_.clear();  // finalize statements before closing
  const int rc = sqlite3_close_v2(db_);
  if (rc != SQLITE_OK) {
    std::fprintf(stderr, "ktune: closing database failed: %s\n", sqlite3_errstr(rc));
  }
}

void Database::exec(std::string_view sql) {
  const std::string text(sql);
  char* err = nullptr;
  const int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  KTUNE_SQLITE_CHECK(rc, db_, "sqlite3_exec: " + text);
}

StatementLease Database::cached(std::string_view sql) {
  auto it = cache_.find(std::string(sql));
  if (it == cache_.end()) {
    auto stmt = std::make_unique<Statement>(*this, sql);
    it = cache_.emplace(std::string(sql), std::move(stmt)).first;
  }
  return StatementLease(*it->second);
}

int64_t Database::pragma_int(std::string_view pragma) {
  Statement s(*this, fmt::format("PRAGMA {}", pragma));
  if (!s.step()) return 0;
  return s.int64(0);
}

int64_t Database::last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }
bool Database::read_only() const { return sqlite3_db_readonly(db_, "main") == 1; }

// ---------------------------------------------------------------- Transaction

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
  if (done_) return;
  char* err = nullptr;
  const int rc = sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, &err);
  if (rc != SQLITE_OK && sqlite3_get_autocommit(db_.handle()) == 0) {
    std::fprintf(stderr, "ktune: rollback failed: %s\n", err != nullptr ? err : sqlite3_errstr(rc));
  }
  sqlite3_free(err);
}

void Transaction::commit() {
  db_.exec("COMMIT");
  done_ = true;
}

// ---------------------------------------------------------------- ReadSnapshot

ReadSnapshot::ReadSnapshot(Database& db) : db_(db) { db_.exec("BEGIN DEFERRED"); }

ReadSnapshot::~ReadSnapshot() {
  // Nothing was written, so ending with ROLLBACK loses nothing.
  const int rc = sqlite3_exec(db_.handle(), "ROLLBACK", nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK && sqlite3_get_autocommit(db_.handle()) == 0) {
    std::fprintf(stderr, "ktune: ending a read transaction failed: %s\n", sqlite3_errstr(rc));
  }
}

}  // namespace ktune::cache::detail
