#include "client/cli/table.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"

#include "strata/base/byte_size.h"

namespace strata::cli {

void Table::AddRow(std::vector<std::string> cells) {
  DCHECK_LE(cells.size(), columns_.size());
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> widths(columns_.size());
  for (size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = columns_[c].header.size();
    for (const auto& row : rows_) widths[c] = std::max(widths[c], row[c].size());
  }
  auto render_line = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < columns_.size(); ++c) {
      const bool last = c + 1 == columns_.size();
      const std::string pad(widths[c] - cells[c].size(), ' ');
      if (c > 0) line += "  ";
      if (columns_[c].align == Align::kRight) {
        absl::StrAppend(&line, pad, cells[c]);
      } else {
        absl::StrAppend(&line, cells[c], last ? "" : pad);
      }
    }
    // A right-aligned last column never ends in blanks; a left-aligned one is unpadded.
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  std::vector<std::string> header;
  for (const Column& column : columns_) header.push_back(column.header);
  std::string text = render_line(header);
  for (const auto& row : rows_) text += render_line(row);
  return text;
}

std::string RenderKeyValues(const std::vector<std::pair<std::string, std::string>>& rows) {
  size_t width = 0;
  for (const auto& [key, value] : rows) width = std::max(width, key.size());
  std::string text;
  for (const auto& [key, value] : rows) {
    std::string line = absl::StrCat(key, std::string(width - key.size() + 2, ' '), value);
    line.erase(line.find_last_not_of(' ') + 1);
    absl::StrAppend(&text, line, "\n");
  }
  return text;
}

std::string FormatBytes(uint64_t bytes) {
  return base::FormatBytes(static_cast<double>(bytes), base::ByteStyle::kThreeDigits);
}

std::string FormatCount(uint64_t count) {
  std::string digits = absl::StrCat(count);
  std::string text;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) text += ',';
    text += digits[i];
  }
  return text;
}

std::string FormatDurationShort(absl::Duration duration) {
  if (duration < absl::ZeroDuration()) return "-" + FormatDurationShort(-duration);
  const int64_t ms = absl::ToInt64Milliseconds(duration);
  if (ms < 1000) return absl::StrCat(ms, "ms");
  const int64_t s = ms / 1000;
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  if (s < 86400) return absl::StrFormat("%dh%02dm", s / 3600, (s % 3600) / 60);
  return absl::StrFormat("%dd%02dh", s / 86400, (s % 86400) / 3600);
}

std::string FormatLocalTime(absl::Time time) {
  if (time == absl::InfinitePast() || time == absl::UnixEpoch()) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S", time, absl::LocalTimeZone());
}

std::string FormatPercent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "-";
  return absl::StrFormat("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace strata::cli
