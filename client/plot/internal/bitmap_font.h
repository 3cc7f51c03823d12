// A 5x7 bitmap font for ASCII 32-126, drawn by Canvas (canvas.h).
//
// Each glyph is 5 columns of 7 bits, column-major, bit 0 the top row; a glyph
// cell is 6x8 pixels (one blank column and row apart). Bytes outside 32-126 map
// to '?'. Pure data; thread-safe.
#pragma once

#include <array>
#include <cstdint>

namespace strata::plot::internal {

inline constexpr int kGlyphWidth = 5;
inline constexpr int kGlyphHeight = 7;
inline constexpr int kCellWidth = 6;
inline constexpr int kCellHeight = 8;

// The 5 column bytes of `c`'s glyph.
const std::array<uint8_t, kGlyphWidth>& Glyph(char c);

}  // namespace strata::plot::internal
