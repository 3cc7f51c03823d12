#include "client/cli/json_output.h"

namespace strata::cli {

std::string DumpJson(const Json& value) {
  return value.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

}  // namespace strata::cli
