// The CLI's --json output: each command builds an nlohmann::ordered_json value (members in
// the order they are added) and prints DumpJson(value), one compact line.
//
//   Json j;
//   j["key"] = info.key.ToHex();
//   j["pages"] = info.pages;                        // integers stay integers (uint64/int64)
//   j["tiers"] = Json::array({"dram"});
//   ctx.out() << DumpJson(j) << "\n";               // {"key":"3f0c...","pages":4,"tiers":["dram"]}
//
// DumpJson escapes `"` and `\` with a backslash and the control characters U+0000..U+001F
// as \b \f \n \r \t or \u00XX; other UTF-8 passes through, and bytes that are not
// well-formed UTF-8 (whatever a node sent) become U+FFFD, so the output is always valid
// UTF-8 and valid JSON. A double is written in its shortest round-trip form; NaN and the
// infinities as null. Scripts should read 64-bit hashes and checksums from the hex strings
// the CLI prints, not from numbers (JavaScript's doubles hold 53 bits).
// Pure function; thread-safe. No errors.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace strata::cli {

using Json = nlohmann::ordered_json;

std::string DumpJson(const Json& value);

}  // namespace strata::cli
