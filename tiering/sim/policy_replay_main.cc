// strata-policy-replay: replays request traces through the real eviction policies of
// strata::tiering and prints, per trace, hit rates against capacity for LRU, the chosen
// policies and Belady's leaf-first optimum, and how much of the LRU-to-Belady gap each
// policy closes. tiering/sim/README.md explains the model and the figures.
//
//   strata-policy-replay [--trace=PATH] [--synthetic] [--policies=lru,branch-lru,gdsf]
//                        [--capacities=1,2,5,10,20,40,60,80] [--session_hints=session]
//                        [--block_bytes=1048576] [agentic generator flags]
//
// --trace        a Mooncake-format JSONL trace (tiering/sim/mooncake_trace.h);
//                --drop_partial_last_block leaves each request's partial last block out.
// --synthetic    the seeded agentic trace (tiering/sim/agentic_trace.h); its options are
//                flags of the same names: --seed --sessions --session_interarrival_s
//                --system_prompts --system_prompt_blocks_min --system_prompt_blocks_max
//                --system_prompt_zipf --turns_median --turns_sigma --turns_max
//                --append_blocks_mean --think_s --idle_probability --idle_s
//                --branch_probability --compact_blocks --summary_blocks --block_tokens
// With neither, both run: the Mooncake trace at the built-in path (if present) and the
// synthetic trace. --capacities are percentages of each trace's working set (distinct
// blocks). --session_hints: what BlobTraits::session_hint carries: session (the synthetic
// trace's session ids; Mooncake has none), root (a request's first block, as the node
// engine passes it today) or none.
// Output: the command line and the date, then per trace a table of block hit rates and,
// where some blocks are partial, one of token-weighted hit rates.
// Exit status: 0 done, 1 a trace or replay failed (message printed), 2 bad usage.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

#include "strata/tiering/sim/agentic_trace.h"
#include "strata/tiering/sim/mooncake_trace.h"
#include "strata/tiering/sim/replay_sweep.h"

#ifndef STRATA_DEFAULT_MOONCAKE_TRACE
#define STRATA_DEFAULT_MOONCAKE_TRACE ""
#endif

namespace strata::tiering::sim {
namespace {

struct ToolOptions {
  std::string trace_path;
  MooncakeTraceOptions mooncake;
  bool synthetic = false;
  SweepOptions sweep;
  AgenticTraceOptions agentic;
};

void Usage(std::FILE* out) {
  std::fprintf(out,
               "usage: strata-policy-replay [--trace=PATH [--drop_partial_last_block]]\n"
               "         [--synthetic] [--policies=a,b]\n"
               "         [--capacities=P1,P2,...] [--session_hints=session|root|none]\n"
               "         [--block_bytes=N] [agentic generator flags, see the source]\n");
}

template <typename T>
bool ParseNumber(std::string_view text, T* value) {
  const absl::string_view token(text.data(), text.size());
  if constexpr (std::is_floating_point_v<T>) {
    return absl::SimpleAtod(token, value);
  } else {
    return absl::SimpleAtoi(token, value);
  }
}

// Parses one "--name=value" flag of the generator; false if the name is not one of them.
bool ParseAgenticFlag(std::string_view name, std::string_view value, AgenticTraceOptions* o,
                      bool* ok) {
  struct U32 {
    const char* name;
    uint32_t* field;
  };
  struct F64 {
    const char* name;
    double* field;
  };
  for (const U32& f :
       {U32{"sessions", &o->sessions}, U32{"system_prompts", &o->system_prompts},
        U32{"system_prompt_blocks_min", &o->system_prompt_blocks_min},
        U32{"system_prompt_blocks_max", &o->system_prompt_blocks_max},
        U32{"turns_max", &o->turns_max}, U32{"compact_blocks", &o->compact_blocks},
        U32{"summary_blocks", &o->summary_blocks}, U32{"block_tokens", &o->block_tokens}}) {
    if (name == f.name) {
      *ok = ParseNumber(value, f.field);
      return true;
    }
  }
  for (const F64& f :
       {F64{"session_interarrival_s", &o->session_interarrival_s},
        F64{"system_prompt_zipf", &o->system_prompt_zipf}, F64{"turns_median", &o->turns_median},
        F64{"turns_sigma", &o->turns_sigma}, F64{"append_blocks_mean", &o->append_blocks_mean},
        F64{"think_s", &o->think_s}, F64{"idle_probability", &o->idle_probability},
        F64{"idle_s", &o->idle_s}, F64{"branch_probability", &o->branch_probability}}) {
    if (name == f.name) {
      *ok = ParseNumber(value, f.field);
      return true;
    }
  }
  if (name == "seed") {
    *ok = ParseNumber(value, &o->seed);
    return true;
  }
  return false;
}

// Returns 0 when parsed, 2 (after printing why) on bad usage, -1 for --help.
int ParseFlags(int argc, char** argv, ToolOptions* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--help" || arg == "-h") return -1;
    if (arg == "--synthetic") {
      options->synthetic = true;
      continue;
    }
    if (arg == "--drop_partial_last_block") {
      options->mooncake.drop_partial_last_block = true;
      continue;
    }
    const size_t eq = arg.find('=');
    if (arg.substr(0, 2) != "--" || eq == std::string_view::npos) {
      std::fprintf(stderr, "bad argument %s\n", argv[i]);
      return 2;
    }
    const std::string_view name = arg.substr(2, eq - 2);
    const std::string_view value = arg.substr(eq + 1);
    bool ok = true;
    if (name == "trace") {
      options->trace_path = std::string(value);
    } else if (name == "policies") {
      options->sweep.policies =
          absl::StrSplit(absl::string_view(value.data(), value.size()), ',', absl::SkipEmpty());
    } else if (name == "capacities") {
      options->sweep.capacities.clear();
      for (absl::string_view part :
           absl::StrSplit(absl::string_view(value.data(), value.size()), ',', absl::SkipEmpty())) {
        double percent = 0;
        ok = ok && absl::SimpleAtod(part, &percent);
        options->sweep.capacities.push_back(percent / 100);
      }
    } else if (name == "session_hints") {
      if (value == "session") {
        options->sweep.session_hints = SessionHints::kSession;
      } else if (value == "root") {
        options->sweep.session_hints = SessionHints::kRoot;
      } else if (value == "none") {
        options->sweep.session_hints = SessionHints::kNone;
      } else {
        ok = false;
      }
    } else if (name == "block_bytes") {
      ok = ParseNumber(value, &options->sweep.block_bytes) && options->sweep.block_bytes > 0;
    } else if (!ParseAgenticFlag(name, value, &options->agentic, &ok)) {
      std::fprintf(stderr, "unknown flag --%.*s\n", static_cast<int>(name.size()), name.data());
      return 2;
    }
    if (!ok) {
      std::fprintf(stderr, "bad value in %s\n", argv[i]);
      return 2;
    }
  }
  if (options->trace_path.empty() && !options->synthetic) {
    options->trace_path = STRATA_DEFAULT_MOONCAKE_TRACE;
    options->synthetic = true;
    if (!std::ifstream(options->trace_path).good()) {
      std::printf("(no Mooncake trace at \"%s\"; pass --trace=PATH)\n",
                  options->trace_path.c_str());
      options->trace_path.clear();
    }
  }
  return 0;
}

absl::Status RunOne(const ReplayTrace& trace, const SweepOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<SweepTable> table = RunSweep(trace, options);
  if (!table.ok()) return table.status();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // Token weights differ from block weights only where some last block is partial.
  const bool partial =
      table->summary.token_reads != table->summary.block_reads * uint64_t{trace.block_tokens};
  std::printf("\n%s%s(%.1f s)\n", FormatSweep(*table, /*tokens=*/false).c_str(),
              partial ? FormatSweep(*table, /*tokens=*/true).c_str() : "", seconds);
  std::fflush(stdout);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  ToolOptions options;
  options.sweep.policies = {"lru", "branch-lru", "gdsf"};
  options.sweep.block_bytes = uint64_t{1} << 20;
  const int parsed = ParseFlags(argc, argv, &options);
  if (parsed != 0) {
    Usage(parsed == -1 ? stdout : stderr);
    return parsed == -1 ? 0 : 2;
  }
  std::string command;
  for (int i = 0; i < argc; ++i) absl::StrAppend(&command, i ? " " : "", argv[i]);
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S %Z", std::localtime(&now));
  std::printf("command: %s\ndate: %s\n", command.c_str(), date);
  std::fflush(stdout);

  if (!options.trace_path.empty()) {
    absl::StatusOr<ReplayTrace> trace = LoadMooncakeTrace(options.trace_path, options.mooncake);
    absl::Status status = trace.ok() ? RunOne(*trace, options.sweep) : trace.status();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
  }
  if (options.synthetic) {
    absl::StatusOr<ReplayTrace> trace = GenerateAgenticTrace(options.agentic);
    absl::Status status = trace.ok() ? RunOne(*trace, options.sweep) : trace.status();
    if (!status.ok()) {
      std::fprintf(stderr, "%s\n", status.ToString().c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace strata::tiering::sim

int main(int argc, char** argv) { return strata::tiering::sim::Main(argc, argv); }
