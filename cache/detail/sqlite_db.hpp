#pragma once
/// Thin RAII layer over the SQLite C API, used only inside cache/: a Database connection, a
/// prepared Statement, a Transaction guard that rolls back unless committed, and one check that
/// turns any SQLite result code into a ktune::Error carrying the code's name (e.g. "SQLITE_BUSY"),
/// the call or SQL text, and file:line. Values always travel as bound parameters.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "ktune/dtype.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace ktune::cache::detail {

/// "SQLITE_BUSY", "SQLITE_NOTADB", ... for a (possibly extended) result code.
std::string_view sqlite_code_name(int code);

/// Throws ktune::Error for any `rc` other than SQLITE_OK/ROW/DONE. `db` may be null.
/// Kind: kBadInput for SQLITE_NOTADB and SQLITE_CORRUPT (the file is not a sound database),
/// kRuntime otherwise.
void sqlite_check(int rc, sqlite3* db, std::string_view call, const char* file, int line);

#define KTUNE_SQLITE_CHECK(rc, db, call) \
  ::ktune::cache::detail::sqlite_check((rc), (db), (call), __FILE__, __LINE__)

class Database;

/// One prepared statement. Bind indexes start at 1, column indexes at 0.
class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& bind(int index, int64_t value);
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, std::optional<double> value);
  Statement& bind(int index, std::optional<int64_t> value);
  /// A dtype is stored as its name (to_string): the one place the cache turns one into text.
  Statement& bind(int index, DType dtype) { return bind(index, std::string_view(to_string(dtype))); }
  Statement& bind_blob(int index, std::string_view bytes);
  Statement& bind_null(int index);

  /// Advances: true when a row is ready, false when done. Throws on any error.
  bool step();
  /// Steps to completion (for statements that return no rows).
  void run();
  /// Resets the statement and clears its bindings; never throws.
  void reset() noexcept;

  int64_t int64(int col) const;
  double real(int col) const;
  std::string text(int col) const;
  std::string blob(int col) const;
  /// Text view valid until the next step/reset.
  std::string_view text_view(int col) const;
  bool is_null(int col) const;
  std::optional<double> opt_real(int col) const;
  std::optional<int64_t> opt_int64(int col) const;
  /// The dtype a column names; throws ktune::Error(kBadInput) naming a name this build does not know.
  DType dtype(int col) const;

  const std::string& sql() const { return sql_; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

/// A statement from the connection's cache; resets itself when the lease ends so that no read
/// transaction stays open (an open one would pin an old WAL snapshot).
class StatementLease {
 public:
  explicit StatementLease(Statement& s) : s_(&s) {}
  StatementLease(const StatementLease&) = delete;
  StatementLease& operator=(const StatementLease&) = delete;
  ~StatementLease() { s_->reset(); }
  Statement* operator->() const { return s_; }
  Statement& operator*() const { return *s_; }

 private:
  Statement* s_;
};

/// One connection. Not thread-safe by itself; ConfigCache serializes access.
class Database {
 public:
  /// kReadOnlyImmutable: read-only, and SQLite is told that nothing can change the file (no locks,
  /// no -shm). Only for a WAL database in a folder nobody can write, where a plain read-only open
  /// fails for want of the -shm file.
  enum class Open { kReadOnly, kReadOnlyImmutable, kReadWrite, kReadWriteCreate };

  Database(const std::filesystem::path& path, Open mode);
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  ~Database();

  sqlite3* handle() const { return db_; }
  /// Runs SQL without parameters (DDL, PRAGMA, BEGIN ...); may hold several statements.
  void exec(std::string_view sql);
  /// A cached prepared statement for `sql` (prepared on first use).
  StatementLease cached(std::string_view sql);
  /// Value of a PRAGMA that returns one integer.
  int64_t pragma_int(std::string_view pragma);
  int64_t last_insert_rowid() const;
  /// True when SQLite opened the file read-only (a read-write open falls back to that silently
  /// when the file is write-protected).
  bool read_only() const;
  int changes() const;

 private:
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

/// BEGIN IMMEDIATE (takes the write lock at once, so a busy writer waits for the busy timeout
/// instead of failing on a lock upgrade); rolls back on destruction unless commit() was called.
class Transaction {
 public:
  explicit Transaction(Database& db);
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  void commit();

 private:
  Database& db_;
  bool done_ = false;
};

/// A read transaction (BEGIN DEFERRED): every query inside sees one snapshot. Ends on destruction.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(Database& db);
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;
  ~ReadSnapshot();

 private:
  Database& db_;
};

}  // namespace ktune::cache::detail
