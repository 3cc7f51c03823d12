#include "client/cli/argument_parser.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include "client/cli/exit_codes.h"
#include "strata/base/byte_size.h"

namespace strata::cli {
namespace {

const FlagSpec* FindLong(const CommandSpec& spec, const std::string& name) {
  for (const FlagSpec& flag : spec.flags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

const FlagSpec* FindShort(const CommandSpec& spec, char name) {
  for (const FlagSpec& flag : spec.flags) {
    if (flag.short_name != '\0' && flag.short_name == name) return &flag;
  }
  return nullptr;
}

std::string Display(const FlagSpec& flag) { return "--" + flag.name; }

// "FILE" or "N" after a value flag in the help text.
std::string FlagSyntax(const FlagSpec& flag) {
  std::string text = flag.short_name != '\0'
                         ? absl::StrCat("-", std::string(1, flag.short_name), ", --", flag.name)
                         : absl::StrCat("    --", flag.name);
  if (flag.takes_value) {
    absl::StrAppend(&text, " ", flag.value_name.empty() ? "VALUE" : flag.value_name);
  }
  return text;
}

// Greedy word wrap of one paragraph to `width` columns, the first line starting at column
// `start` (after text the caller already wrote), continuation lines with `indent` blanks.
// A word longer than the width stays whole.
std::string Wrap(const std::string& text, size_t width, size_t indent, size_t start = 0) {
  std::string out;
  size_t column = start;
  bool line_empty = true;
  size_t i = 0;
  while (i < text.size()) {
    const size_t end = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    if (!line_empty && column + 1 + word.size() > width) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
      line_empty = true;
    }
    if (!line_empty) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_empty = false;
  }
  return out;
}

constexpr size_t kHelpWidth = 96;

}  // namespace

std::optional<std::string> ParsedArgs::Value(const std::string& flag) const {
  auto it = values_.find(flag);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string ParsedArgs::ValueOr(const std::string& flag, const std::string& fallback) const {
  auto it = values_.find(flag);
  return it == values_.end() ? fallback : it->second;
}

bool ParsedArgs::Bool(const std::string& flag) const {
  auto it = values_.find(flag);
  return it != values_.end() && it->second == "true";
}

std::string ParsedArgs::Positional(size_t i) const {
  return i < positionals_.size() ? positionals_[i] : std::string();
}

absl::StatusOr<ParsedArgs> ParseArguments(const CommandSpec& spec,
                                          absl::Span<const std::string> args) {
  ParsedArgs parsed;
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_ended || arg.size() < 2 || arg[0] != '-') {
      parsed.positionals_.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    if (arg == "--help" || arg == "-h") {
      parsed.help_ = true;
      return parsed;
    }
    const FlagSpec* flag = nullptr;
    std::optional<std::string> inline_value;
    if (arg[1] == '-') {
      const size_t eq = arg.find('=');
      const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      if (eq != std::string::npos) inline_value = arg.substr(eq + 1);
      flag = FindLong(spec, name);
      if (flag == nullptr) return UsageError(absl::StrCat("unknown flag --", name));
    } else {
      if (arg.size() != 2) {
        return UsageError(absl::StrCat("unknown flag ", arg, " (short flags take one letter)"));
      }
      flag = FindShort(spec, arg[1]);
      if (flag == nullptr) return UsageError(absl::StrCat("unknown flag ", arg));
    }
    if (parsed.values_.count(flag->name) != 0) {
      return UsageError(absl::StrCat(Display(*flag), " given twice"));
    }
    std::string value;
    if (flag->takes_value) {
      if (inline_value.has_value()) {
        value = *inline_value;
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return UsageError(absl::StrCat(Display(*flag), " needs a value (",
                                       flag->value_name.empty() ? "VALUE" : flag->value_name, ")"));
      }
    } else if (!inline_value.has_value() || *inline_value == "true") {
      value = "true";
    } else if (*inline_value == "false") {
      value = "false";
    } else {
      return UsageError(absl::StrCat(Display(*flag), " takes no value (or =true / =false), got \"",
                                     *inline_value, "\""));
    }
    parsed.values_.emplace(flag->name, std::move(value));
  }

  for (const FlagSpec& flag : spec.flags) {
    if (flag.required && parsed.values_.count(flag.name) == 0) {
      return UsageError(absl::StrCat("missing required flag ", Display(flag)));
    }
  }
  size_t required = 0;
  for (const PositionalSpec& positional : spec.positionals) {
    if (positional.required) ++required;
  }
  if (parsed.positionals_.size() < required) {
    return UsageError(
        absl::StrCat("missing argument ", spec.positionals[parsed.positionals_.size()].name));
  }
  if (parsed.positionals_.size() > spec.positionals.size()) {
    return UsageError(
        absl::StrCat("unexpected argument \"", parsed.positionals_[spec.positionals.size()], "\""));
  }
  return parsed;
}

std::string FormatHelp(const CommandSpec& spec, const std::string& program) {
  std::string usage = absl::StrCat("usage: ", program);
  if (program != spec.name) absl::StrAppend(&usage, " ", spec.name);
  for (const FlagSpec& flag : spec.flags) {
    if (!flag.required) continue;
    absl::StrAppend(&usage, " --", flag.name, " ",
                    flag.value_name.empty() ? "VALUE" : flag.value_name);
  }
  if (std::any_of(spec.flags.begin(), spec.flags.end(),
                  [](const FlagSpec& f) { return !f.required; })) {
    absl::StrAppend(&usage, " [flags]");
  }
  for (const PositionalSpec& positional : spec.positionals) {
    absl::StrAppend(&usage, " ", positional.required ? "" : "[", positional.name,
                    positional.required ? "" : "]");
  }
  std::string text = absl::StrCat(Wrap(usage, kHelpWidth, 8), "\n\n", spec.summary, "\n");
  if (!spec.details.empty()) absl::StrAppend(&text, "\n", Wrap(spec.details, kHelpWidth, 0), "\n");

  size_t width = 0;
  for (const PositionalSpec& p : spec.positionals) width = std::max(width, p.name.size());
  for (const FlagSpec& f : spec.flags) width = std::max(width, FlagSyntax(f).size());
  width = std::max(width, std::string("-h, --help").size());
  auto line = [&](const std::string& left, const std::string& right) {
    const std::string start = absl::StrCat("  ", left, std::string(width - left.size() + 2, ' '));
    // Wrap the help column; continuation lines line up under its start.
    return absl::StrCat(start, Wrap(right, kHelpWidth, start.size(), start.size()), "\n");
  };
  if (!spec.positionals.empty()) {
    absl::StrAppend(&text, "\narguments:\n");
    for (const PositionalSpec& p : spec.positionals) absl::StrAppend(&text, line(p.name, p.help));
  }
  absl::StrAppend(&text, "\nflags:\n");
  for (const FlagSpec& f : spec.flags) {
    absl::StrAppend(&text, line(FlagSyntax(f), f.required ? f.help + " (required)" : f.help));
  }
  absl::StrAppend(&text, line("-h, --help", "show this help and exit"));
  return text;
}

absl::StatusOr<uint64_t> ParseUintValue(const std::string& flag, const std::string& value,
                                        uint64_t max) {
  uint64_t parsed = 0;
  const bool digits_only = !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
  if (!digits_only || !absl::SimpleAtoi(value, &parsed) || parsed > max) {
    return UsageError(absl::StrCat(flag, ": \"", value, "\" is not an integer in 0..", max));
  }
  return parsed;
}

absl::StatusOr<absl::Duration> ParsePositiveDuration(const std::string& flag,
                                                     const std::string& value) {
  absl::Duration duration;
  double seconds = 0;
  if (absl::ParseDuration(value, &duration)) {
    // Abseil syntax ("5s", "1m30s"); a bare "0" parses too and is refused below.
  } else if (absl::SimpleAtod(value, &seconds) && std::isfinite(seconds)) {
    duration = absl::Seconds(seconds);
  } else {
    return UsageError(absl::StrCat(flag, ": \"", value,
                                   "\" is not a duration (e.g. 500ms, 5s, 1m30s, or seconds)"));
  }
  if (duration <= absl::ZeroDuration() || duration == absl::InfiniteDuration()) {
    return UsageError(absl::StrCat(flag, ": \"", value, "\" must be a positive, finite duration"));
  }
  return duration;
}

absl::StatusOr<uint64_t> ParseByteSize(const std::string& flag, const std::string& value) {
  absl::StatusOr<uint64_t> bytes = base::ParseBytes(value);
  if (bytes.ok()) return *bytes;
  return UsageError(
      absl::StrCat(flag, ": \"", value, "\" is not a byte size (e.g. 4096, 64MiB, 1GiB, 10GB)"));
}

}  // namespace strata::cli
