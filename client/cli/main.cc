// strata: the admin CLI of a strata node. Everything is in RunCli (cli.h).
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "glog/logging.h"

#include "client/cli/cli.h"

int main(int argc, char** argv) {
  // The library's logs would mix with the output people and scripts read: keep only errors
  // unless the caller asked for more (GLOG_minloglevel). (UCX reads UCX_LOG_LEVEL when it is
  // loaded, before main: it cannot be defaulted from here.)
  if (std::getenv("GLOG_minloglevel") == nullptr) FLAGS_minloglevel = google::GLOG_ERROR;
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);

  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int code = strata::cli::RunCli(args, {std::cin, std::cout, std::cerr});
  std::cout.flush();
  return code;
}
