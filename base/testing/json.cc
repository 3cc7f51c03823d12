#include "strata/testing/json.h"

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace strata::testing {

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text) {
  // nlohmann keeps the last of two equal keys; the callback sees every key of every object.
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string duplicate;
  bool has_duplicate = false;
  const nlohmann::json::parser_callback_t track =
      [&](int /*depth*/, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (event == Event::object_start) {
          keys.emplace_back();
        } else if (event == Event::object_end) {
          keys.pop_back();
        } else if (event == Event::key && !keys.empty()) {
          const std::string& key = parsed.get_ref<const std::string&>();
          if (!keys.back().insert(key).second && !has_duplicate) {
            has_duplicate = true;
            duplicate = key;
          }
        }
        return true;
      };
  try {
    nlohmann::json value = nlohmann::json::parse(text, track);
    if (has_duplicate) {
      return absl::InvalidArgumentError(absl::StrCat("duplicate key \"", duplicate, "\""));
    }
    return value;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

std::optional<uint64_t> AsUint(const nlohmann::json& value) {
  if (!value.is_number_unsigned()) return std::nullopt;
  return value.get<uint64_t>();
}

std::string AsString(const nlohmann::json& value) {
  return value.is_string() ? value.get<std::string>() : std::string();
}

bool AsBool(const nlohmann::json& value) { return value.is_boolean() && value.get<bool>(); }

}  // namespace strata::testing
