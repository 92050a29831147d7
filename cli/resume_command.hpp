#pragma once
/// The command that resumes a stopped sweep: the command line as given, quoted for a POSIX shell,
/// with what came from the environment made explicit (`--db PATH` when the database was found
/// through $KTUNE_DB or the default path; the shard `--shard auto` resolved to), so it resumes the
/// same work from any shell. Committed measurements are answered from the database, so re-running
/// the same sweep is how it resumes (docs/design.md D7).

#include <string>
#include <vector>

namespace ktune::cli {

/// `text` as one POSIX shell word: unchanged when it holds only [A-Za-z0-9_@%+=:,./-], else in
/// single quotes (a ' inside becomes '\'').
std::string shell_quote(const std::string& text);

/// What to change in the command line to make it resumable.
struct ResumeEdits {
  std::string db;     ///< the database path used; appended as --db when the line has no --db
  std::string shard;  ///< "I/N": replaces the value of `--shard auto` ("" = leave it)
};

/// The command line `argv` (argv[0] first, kept as given) with `edits` applied, as one shell line
/// to run in the same working directory.
std::string resume_command(const std::vector<std::string>& argv, const ResumeEdits& edits);

}  // namespace ktune::cli
