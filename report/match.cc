#include "strata/report/match.h"

#include <algorithm>

namespace strata::report {

uint32_t MatchResult::ReadablePages() const {
  uint32_t pages = 0;
  for (const Segment& segment : segments) {
    if (segment.tier == Tier::kText || segment.seq_page_begin != pages) break;
    pages += segment.page_count;
  }
  return std::min(pages, matched_pages);
}

std::vector<Segment> MatchResult::TextSegments() const {
  std::vector<Segment> text;
  for (const Segment& segment : segments) {
    if (segment.tier == Tier::kText) text.push_back(segment);
  }
  return text;
}

}  // namespace strata::report
