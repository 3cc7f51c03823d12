// ArgumentParser: the small command-line parser every `strata` command shares.
//
// A CommandSpec declares a command's flags and positional arguments; ParseArguments checks
// argv against it and returns the values. Syntax accepted:
//
//   --name=value   --name value   -n value     a flag that takes a value
//   --name         --name=true    --name=false a boolean flag (no separate value)
//   --             ends the flags: everything after it is positional
//   -              a lone dash is a positional argument (conventionally stdin/stdout)
//   --help, -h     asks for help: parsing stops there, nothing else is checked
//
// Flags and positionals may be interleaved. Everything is checked: an unknown flag, a flag
// given twice, a value flag without its value, a value on a boolean flag that is not
// true/false, a missing required flag, and too few or too many positionals are errors.
//
// Errors: ParseArguments and the Parse* value helpers return INVALID_ARGUMENT marked as a
// usage error (exit_codes.h: the CLI exits 2) with a one-line, lowercase message naming the flag or
// argument ("unknown flag --lmit",
// "--limit: \"x\" is not an integer in 0..4294967295"). FormatHelp never fails.
// All functions are pure and thread-safe; the types are plain values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace strata::cli {

struct FlagSpec {
  std::string name;         // long name without dashes: "limit" is --limit
  char short_name = '\0';   // '\0': none; 'o' is -o
  bool takes_value = true;  // false: a boolean flag
  std::string value_name;   // in help: --limit N
  std::string help;         // one line
  bool required = false;
};

struct PositionalSpec {
  std::string name;  // in help and errors: KEY
  std::string help;
  bool required = true;  // optional positionals must come after the required ones
};

struct CommandSpec {
  std::string name;     // "ls"; the program name at top level
  std::string summary;  // one line, shown in the command list
  std::string details;  // more paragraphs for --help (may be empty)
  std::vector<FlagSpec> flags;
  std::vector<PositionalSpec> positionals;
};

// What ParseArguments found. Flag values are keyed by long name; a boolean flag given is
// stored as "true" or "false".
class ParsedArgs {
 public:
  bool help() const { return help_; }
  bool Has(const std::string& flag) const { return values_.count(flag) != 0; }
  // The flag's value, or nullopt when it was not given.
  std::optional<std::string> Value(const std::string& flag) const;
  // The flag's value, or `fallback` when it was not given.
  std::string ValueOr(const std::string& flag, const std::string& fallback) const;
  // A boolean flag: true when given bare or as =true.
  bool Bool(const std::string& flag) const;
  const std::vector<std::string>& positionals() const { return positionals_; }
  // The i-th positional, or "" when there are fewer.
  std::string Positional(size_t i) const;

 private:
  friend absl::StatusOr<ParsedArgs> ParseArguments(const CommandSpec& spec,
                                                   absl::Span<const std::string> args);
  bool help_ = false;
  std::map<std::string, std::string> values_;
  std::vector<std::string> positionals_;
};

// Parses `args` (without the program and command names) against `spec`.
absl::StatusOr<ParsedArgs> ParseArguments(const CommandSpec& spec,
                                          absl::Span<const std::string> args);

// Help text of a command: usage line, summary, details, positionals and flags in aligned
// columns. `program` prefixes the usage line ("strata").
std::string FormatHelp(const CommandSpec& spec, const std::string& program);

// Value helpers; `flag` names the flag in the message ("--limit").
// An unsigned decimal integer in [0, max].
absl::StatusOr<uint64_t> ParseUintValue(const std::string& flag, const std::string& value,
                                        uint64_t max = UINT64_MAX);
// A duration in Abseil syntax ("500ms", "5s", "1m30s") or a bare number of seconds ("2.5");
// must be > 0.
absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag,
                                                     const std::string& value);
// A byte count: an integer with an optional unit, case-insensitive: B, KiB MiB GiB TiB
// (powers of 1024), KB MB GB TB (powers of 1000); spaces allowed (base::ParseBytes).
// "64MiB", "1 GiB", "1000000".
absl::StatusOr<uint64_t> ParseByteSize(const std::string& flag, const std::string& value);

}  // namespace strata::cli
