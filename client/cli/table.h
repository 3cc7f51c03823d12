// Table: aligned text columns for people (the CLI's default output), and the human-readable
// numbers that go in them.
//
//   KEY                               PAGES  BYTES     TIERS
//   3f0c...                               4  2.0 MiB   dram
//
// Columns are separated by two spaces; text columns are left-aligned, numeric ones
// right-aligned; the last column carries no trailing blanks. Widths count bytes (every
// value the CLI prints is ASCII). A row with fewer cells than columns is padded with "";
// extra cells are a bug (DCHECK).
//
// Plain value; not thread-safe (one writer). Formatting functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace strata::cli {

enum class Align { kLeft, kRight };

struct Column {
  std::string header;
  Align align = Align::kLeft;
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }

  // Header line and one line per row, each ending in '\n'.
  std::string Render() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// "key: value" lines with the keys padded to one width (stat, status):
//   key          3f0c...
//   pages        4
std::string RenderKeyValues(const std::vector<std::pair<std::string, std::string>>& rows);

// Bytes for people, IEC units, three significant digits: "0 B", "1023 B", "1.00 KiB",
// "64.0 MiB", "1.50 GiB", up to "EiB" (base::FormatBytes, kThreeDigits: columns line up).
std::string FormatBytes(uint64_t bytes);

// A count with thousands separators: 1234567 -> "1,234,567".
std::string FormatCount(uint64_t count);

// A duration for people, largest units first, at most two: "850ms", "12s", "3m05s",
// "2h14m", "3d04h".
std::string FormatDurationShort(absl::Duration duration);

// Local time "2026-11-29 13:37:44" ("-" for InfinitePast / the epoch, meaning unset).
std::string FormatLocalTime(absl::Time time);

// A percentage of part in whole with one decimal: "37.5%"; "-" when whole is 0.
std::string FormatPercent(uint64_t part, uint64_t whole);

}  // namespace strata::cli
