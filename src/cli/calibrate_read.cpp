#include "cli/calibrate_read.hpp"

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "dataset/file_index.hpp"
#include "loader/config.hpp"
#include "loader/loader_run.hpp"

namespace ioprobe::cli {

namespace {

// Passes per engine: a pass over 4,096 files takes 0.1-0.2 s; three give the figure its spread.
constexpr int kOwnReadPasses = 3;

// One pass of ioprobe's own read of the files with `engine`: one worker, buffered (the page
// cache's copies, as the Dataset read them), no CPU cost of its own, a seed per pass.
LoaderConfig own_read_config(EngineKind engine, uint32_t batch_size, int pass) {
  LoaderConfig l;
  l.num_workers = 1;
  l.batch_size = std::max<uint32_t>(1, batch_size);
  l.engine = engine;
  l.direct = false;
  l.seed = static_cast<uint64_t>(pass);
  return l;
}

}  // namespace

std::vector<std::string> read_driver_paths(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw Error(fmt::format("cannot read the calibration driver's file list {}", escape_bytes(file)), kExitFailure);
  const std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> paths;
  for (size_t pos = 0; pos < all.size();) {
    const size_t nul = std::min(all.find('\0', pos), all.size());
    if (nul > pos) paths.push_back(all.substr(pos, nul - pos));
    pos = nul + 1;
  }
  if (paths.empty())
    throw Error(fmt::format("the calibration driver's file list {} names no file", escape_bytes(file)), kExitFailure);
  return paths;
}

void measure_own_read(const std::vector<std::string>& paths, uint32_t batch_size, Calibration& cal,
                      std::vector<std::string>& notes) {
  FileIndex index;  // no root: the driver's paths as given (absolute)
  for (const std::string& p : paths) index.add(p, FileIndex::kUnknownSize);
  struct Engine {
    EngineKind kind;
    CalFigure* out;
  };
  for (const Engine& e :
       {Engine{EngineKind::kIoUring, &cal.own_read_io_uring_us}, Engine{EngineKind::kPsync, &cal.own_read_psync_us}}) {
    std::vector<double> per_file_us;
    try {
      for (int pass = 0; pass < kOwnReadPasses && !interrupted(); ++pass) {
        const LoaderResult r = run_loader(index, own_read_config(e.kind, batch_size, pass));
        if (r.partial) break;
        if (r.errors || r.samples == 0) {
          notes.push_back(fmt::format("ioprobe's own read with {}: {} of {} files failed; not measured",
                                      to_string(e.kind), r.errors, paths.size()));
          per_file_us.clear();
          break;
        }
        per_file_us.push_back((r.cpu_user_s + r.cpu_sys_s) * 1e6 / static_cast<double>(r.samples));
      }
    } catch (const std::exception& ex) {
      notes.push_back(fmt::format("ioprobe's own read with {} was not measured: {}", to_string(e.kind), ex.what()));
      per_file_us.clear();
    }
    if (per_file_us.empty()) continue;
    double sum = 0;
    for (double x : per_file_us) sum += x;
    *e.out = {sum / static_cast<double>(per_file_us.size()), *std::min_element(per_file_us.begin(), per_file_us.end()),
              *std::max_element(per_file_us.begin(), per_file_us.end())};
    cal.own_read_measured = true;
  }
}

}  // namespace ioprobe::cli
