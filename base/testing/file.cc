#include "strata/testing/file.h"

#include <fstream>
#include <sstream>

namespace strata::testing {

std::string ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace strata::testing
