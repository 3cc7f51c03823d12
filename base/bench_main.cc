// main() for every strata benchmark program: prints the exact command line and the
// date before Google Benchmark's table, so a pasted result says how it was made.
#include <cstdio>
#include <ctime>
#include <string>

#include "benchmark/benchmark.h"
#include "glog/logging.h"

int main(int argc, char** argv) {
  // Informational logs would interleave with the table; warnings and errors still show.
  FLAGS_minloglevel = google::GLOG_WARNING;
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  std::printf("command: %s\ndate: %s\n", command.c_str(), date);
  std::fflush(stdout);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
