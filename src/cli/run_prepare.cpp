#include "cli/run_prepare.hpp"

#include <cerrno>

#include <sys/resource.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "dataset/generator.hpp"
#include "dataset/walker.hpp"
#include "engine/engine_choice.hpp"
#include "ingest/catalog.hpp"

namespace ioprobe::cli {

PreparedData prepare_dataset(const RunConfig& c) {
  PreparedData p;
  const DatasetSpec& s = c.spec;
  if (!c.data_dir.empty() || !c.file_list.empty()) {
    WalkResult w = c.data_dir.empty() ? read_path_list(c.file_list) : walk_tree(c.data_dir, c.follow_symlinks);
    if (w.index.empty())
      throw UsageError(fmt::format("--data '{}' holds no regular files to read", escape_bytes(c.data_dir)));
    for (const auto& msg : w.warnings) p.warnings.push_back(msg);
    p.target_path = c.data_dir.empty() ? "." : c.data_dir;
    p.dataset = {{"preset", "none"},
                 {"root", escape_bytes(c.data_dir.empty() ? c.file_list : c.data_dir)},
                 {"files", w.index.size()},
                 {"kind", "files"},
                 {"records_per_file", 1},
                 {"action", c.data_dir.empty() ? "file list" : "walked"},
                 {"enumerate_s", w.enumerate_s},
                 {"skipped", w.skipped},
                 {"duplicates", w.duplicates}};
    p.index = std::move(w.index);
    return p;
  }
  GenerateOptions g;
  g.threads = 2;
  g.progress = !c.quiet;
  g.create_parents = c.dir_is_default;
  g.regenerate = c.regenerate;
  DatasetOutcome d = ensure_dataset(c.dir, s, g);
  p.interrupted = d.interrupted;
  p.target_path = c.dir;
  p.dataset = {{"preset", s.preset},
               {"description", s.description},
               {"model", s.model},
               {"root", escape_bytes(c.dir)},
               {"files", s.files},
               {"dirs", s.dirs},
               {"full_files", s.full_files},
               {"size_dist", size_dist_name(s.dist)},
               {"size_mean_bytes", s.size_mean},
               {"size_stdev_bytes", s.size_stdev},
               {"seed", s.seed},
               {"action", d.action},
               {"generate_s", d.generate_s},
               {"enumerate_s", 0.0},
               {"kind", dataset_kind_name(s.kind)},
               {"records_per_file", s.records_per_file}};
  if (s.kind != DatasetKind::kFiles) {
    // size_* describe one record; the files' sizes follow from the records.
    p.dataset["records"] = s.files * s.records_per_file;
    p.dataset["dirs"] = 1;
  }
  if (s.kind == DatasetKind::kToken) {
    p.dataset["seq_len"] = s.seq_len;
    p.dataset["token_bytes"] = s.token_bytes;
  }
  p.index = std::move(d.index);
  p.layout = std::move(d.layout);
  p.lock = std::move(d.lock);
  return p;
}

Demand resolve_demand(const RunConfig& c, const std::string& model) {
  Demand d;
  d.gpus = c.loader.ranks;
  d.au_target = c.au_target;
  d.model = model;
  if (c.user_samples_per_s > 0 || c.user_step_time_s > 0) {
    d.accelerator = "custom";
    d.accelerator_name = c.gpu == "h100" ? "custom GPU" : c.gpu;
    d.rate_family = "user";
    d.samples_per_s_per_gpu = c.user_samples_per_s > 0 ? c.user_samples_per_s : c.loader.batch_size / c.user_step_time_s;
    d.source = c.user_samples_per_s > 0 ? "--gpu-samples-per-s" : fmt::format("--step-time {} s per batch of {}", c.user_step_time_s, c.loader.batch_size);
    return d;
  }
  std::vector<CatalogRow> rows = load_catalog(workloads_dir() + "/accelerators.json");
  const CatalogRow& row = find_row(rows, c.gpu, model);
  d.accelerator = row.accelerator;
  d.accelerator_name = row.name;
  const std::optional<IngestRate>* rate = c.rate_family == "training" ? &row.training : &row.emulation;
  d.rate_family = c.rate_family;
  if (!*rate) {
    rate = c.rate_family == "training" ? &row.emulation : &row.training;
    d.rate_family = c.rate_family == "training" ? "emulation" : "training";
  }
  d.samples_per_s_per_gpu = (*rate)->samples_per_s;
  d.source = (*rate)->source;
  return d;
}

// Decides O_DIRECT vs buffered (probed on the dataset's first file) and the engine; returns the
// cache detail text.
std::string resolve_cache_and_engine(const RunConfig& c, const FileIndex& index, const TargetInfo& target,
                                     LoaderConfig& l, std::string& engine_reason, std::vector<std::string>& warnings) {
  std::string detail;
  if (c.cache == "warm") {
    l.direct = false;
    l.measure_residency = true;
    detail = "buffered reads through the page cache (warm)";
  } else {
    std::string probe_path = index.root().empty() ? index.path(0) : index.root() + "/" + index.path(0);
    int r = c.direct == "off" ? -EPERM : probe_o_direct(probe_path);
    if (r != 0 && c.direct == "on")
      throw UsageError(fmt::format("--direct on: O_DIRECT not supported on '{}' ({}: {}); rerun with --direct auto or "
                                   "--direct off for buffered reads with page eviction",
                                   escape_bytes(probe_path), target.fs_type, errno_text(-r)));
    if (c.direct == "off") {
      l.direct = false;
      l.evict_before_epoch = true;
      l.drop_caches = c.drop_caches;
      l.measure_residency = true;
      detail = fmt::format("buffered (--direct off); pages evicted with posix_fadvise(DONTNEED){} before each epoch",
                           c.drop_caches ? " and drop_caches" : "");
    } else if (r == 0) {
      l.direct = true;
      detail = target.memory_backed ? "O_DIRECT accepted, but tmpfs keeps the data in RAM: not a device measurement"
                                    : "O_DIRECT: reads bypass the page cache";
    } else {
      l.direct = false;
      l.evict_before_epoch = true;
      l.drop_caches = c.drop_caches;
      l.measure_residency = true;
      detail = fmt::format("buffered (O_DIRECT refused on {}: {}); pages evicted with posix_fadvise(DONTNEED){} before "
                           "each epoch",
                           target.fs_type, errno_name(-r), c.drop_caches ? " and drop_caches" : "");
      warnings.push_back(fmt::format("O_DIRECT refused on '{}' ({}, {}); cold reads use page eviction instead",
                                     escape_bytes(probe_path), target.fs_type, errno_text(-r)));
    }
  }
  EngineChoice ec = choose_engine(c.engine_request, target, !l.direct);
  l.engine = ec.engine;
  engine_reason = ec.reason;
  if (!ec.warning.empty()) warnings.push_back(ec.warning);
  return detail;
}

void check_open_files_limit(const LoaderConfig& l) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return;
  uint64_t need = static_cast<uint64_t>(l.ranks) * l.num_workers * 2 + 32;  // a file + a ring per worker
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need)
    throw Error(fmt::format("too many workers for the open-files limit: need about {} descriptors, RLIMIT_NOFILE is "
                            "{}; raise it (ulimit -n {}) or use fewer --workers/--gpus",
                            need, rl.rlim_cur, need),
                kExitFailure);
}

}  // namespace ioprobe::cli
