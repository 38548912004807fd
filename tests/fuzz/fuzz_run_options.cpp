// libFuzzer target: the option and INI parsing of `ioprobe run` / `gen`.
//
// Input layout: byte 0 picks the mode, the rest is the payload.
//   mode % 4 == 0: payload split on '\n' into command-line arguments for build_run_config (run)
//   mode % 4 == 1: the same for gen
//   mode % 4 == 2: payload written to a temporary .ini file, loaded with --dataset FILE
//   mode % 4 == 3: payload given to parse_size, parse_count and parse_duration
// Any UsageError is an expected answer to bad input; anything else escaping (another exception
// type, a crash, a sanitizer report, a hang) is a bug.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/run_config.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace {

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t nl = s.find('\n', pos);
    if (nl == std::string::npos) nl = s.size();
    out.push_back(s.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

void run_config(std::vector<std::string> args, bool for_gen) {
  ioprobe::cli::CommandContext ctx;
  ctx.argv = {"ioprobe"};
  ctx.args = std::move(args);
  for (const auto& a : ctx.args)
    if (a == "--help" || a == "-h" || a.rfind("--he", 0) == 0) return;  // prints the help text: not parsing
  ioprobe::cli::RunConfig c;
  try {
    ioprobe::cli::build_run_config(ctx, for_gen, c);
  } catch (const ioprobe::UsageError&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 4096) return 0;
  const int mode = data[0] % 4;
  std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (mode) {
    case 0:
    case 1:
      run_config(split_lines(payload), mode == 1);
      break;
    case 2: {
      static const std::string path = "/tmp/ioprobe-fuzz-" + std::to_string(getpid()) + ".ini";
      FILE* f = std::fopen(path.c_str(), "wb");
      if (!f) return 0;
      std::fwrite(payload.data(), 1, payload.size(), f);
      std::fclose(f);
      run_config({"--dataset", path}, false);
      unlink(path.c_str());
      break;
    }
    default:
      try {
        ioprobe::parse_size(payload, "--fuzz");
      } catch (const ioprobe::UsageError&) {
      }
      try {
        ioprobe::parse_count(payload, "--fuzz");
      } catch (const ioprobe::UsageError&) {
      }
      try {
        ioprobe::parse_duration(payload, "--fuzz");
      } catch (const ioprobe::UsageError&) {
      }
  }
  return 0;
}
