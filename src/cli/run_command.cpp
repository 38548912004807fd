// `ioprobe run` (default), `ioprobe gen` and `ioprobe report`: the flow of DESIGN.md:
// RunConfig -> probe -> dataset -> loader run -> ingest analysis -> report.
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/run_config.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/generator.hpp"
#include "dataset/walker.hpp"
#include "ingest/catalog.hpp"
#include "report/document.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"
#include "engine/engine_choice.hpp"
#include "topology/numa.hpp"

namespace ioprobe::cli {

namespace {

struct PreparedData {
  FileIndex index;
  nlohmann::json dataset;
  std::vector<std::string> warnings;
  std::string target_path;
  bool interrupted = false;
};

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
                 {"action", c.data_dir.empty() ? "file list" : "walked"},
                 {"enumerate_s", w.enumerate_s},
                 {"skipped", w.skipped}};
    p.index = std::move(w.index);
    return p;
  }
  GenerateOptions g;
  g.threads = 2;
  g.progress = !c.quiet;
  g.create_parents = c.dir_is_default;
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
               {"enumerate_s", 0.0}};
  p.index = std::move(d.index);
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

// Prints "reading: N samples, X MB/s" once a second on stderr while the run goes on.
class ProgressLine {
 public:
  ProgressLine(bool enabled, uint64_t total, LoaderProgress& p) : enabled_(enabled), total_(total), p_(p) {
    if (enabled_) thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> g(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
    fmt::print(stderr, "\r{:80}\r", "");
  }

 private:
  void loop() {
    const int64_t start = now_ns();
    std::unique_lock<std::mutex> lk(mu_);
    while (!cv_.wait_for(lk, std::chrono::seconds(1), [this] { return done_; })) {
      double s = static_cast<double>(now_ns() - start) / 1e9;
      uint64_t n = p_.samples.load();
      fmt::print(stderr, "\rreading: {}/{} samples, {:.0f} samples/s, {}   ", format_count(n), format_count(total_), n / s,
                 format_rate(static_cast<double>(p_.bytes.load()) / s));
    }
  }
  bool enabled_;
  uint64_t total_;
  LoaderProgress& p_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

}  // namespace

int cmd_run(const CommandContext& ctx) {
  RunConfig c;
  if (!build_run_config(ctx, false, c)) return kExitOk;
  HostInfo host = probe_host();
  nlohmann::json doc = document_header("run", ctx.argv, host);
  // Validate the GPU side before any dataset is generated, so a typo costs nothing.
  const std::string model = c.spec.model.empty() ? "resnet50" : c.spec.model;
  Demand demand = resolve_demand(c, model);

  check_open_files_limit(c.loader);  // preflight: before any dataset is generated
  PreparedData data = prepare_dataset(c);
  if (data.interrupted) {
    fmt::print(stderr, "ioprobe: interrupted during dataset generation; '{}' is marked incomplete and will be "
                       "regenerated by the next run\n", escape_bytes(c.dir));
    return interrupt_exit_code();
  }
  TargetInfo target = probe_target(data.target_path, /*allow_temp_file=*/false);
  for (const auto& w : target.warnings) data.warnings.push_back(w);
  LoaderConfig l = c.loader;
  Topology topo = discover();
  std::string numa_why;
  l.placement = resolve_local(parse_placement(c.numa), target.device_numa_node, topo, &numa_why);
  std::string engine_reason;
  std::string cache_detail = resolve_cache_and_engine(c, data.index, target, l, engine_reason, data.warnings);
  l.step_time_s = c.user_step_time_s > 0 ? c.user_step_time_s : l.batch_size / demand.samples_per_s_per_gpu;
  if (static_cast<uint64_t>(l.ranks) * l.num_workers > static_cast<uint64_t>(host.cpus_allowed))
    data.warnings.push_back(fmt::format("{} worker threads share {} allowed CPUs: fine while workers wait on I/O, "
                                        "oversubscribed if they decode", l.ranks * l.num_workers, host.cpus_allowed));
  if (c.cache == "warm" || !l.direct) {
    uint64_t budget = host.memory_bytes;
    if (host.cgroup_memory_limit_bytes && host.cgroup_memory_limit_bytes < budget) budget = host.cgroup_memory_limit_bytes;
    uint64_t known = data.index.total_known_bytes();
    if (known && known < budget)
      data.warnings.push_back(fmt::format("buffered run and the dataset ({}) fits in the page cache budget ({}): "
                                          "later epochs measure memory, not storage", format_bytes(known), format_bytes(budget)));
  }

  if (!c.quiet)
    fmt::print(stderr, "ioprobe: reading {} files from {} ({} {}), {} rank(s) x {} workers\n", format_count(data.index.size()),
               escape_bytes(data.target_path), target.fs_type, l.direct ? "O_DIRECT" : "buffered", l.ranks, l.num_workers);
  LoaderProgress progress;
  LoaderResult lr;
  {
    ProgressLine line(!c.quiet, data.index.size() * l.epochs, progress);
    lr = run_loader(data.index, l, &progress, &topo);
  }

  AnalysisInputs ai;
  ai.cpus_allowed = host.cpus_allowed;
  ai.num_workers_total = l.ranks * l.num_workers;
  ai.cpu_per_sample_us = l.cpu_per_sample_us;
  ai.sample_bytes = c.sample_bytes > 0 ? c.sample_bytes : (lr.samples ? static_cast<double>(lr.bytes) / lr.samples : 0);
  ai.buffered_warm = !l.direct && !l.evict_before_epoch;
  IngestResult ing = analyze_ingest(lr, demand, ai);

  nlohmann::json tj = target_json(target);
  tj["cache"] = c.cache;
  tj["direct"] = l.direct;
  tj["cache_detail"] = cache_detail;
  tj["engine"] = l.engine;
  tj["engine_reason"] = engine_reason;
  tj["numa"] = l.placement.text();
  tj["numa_reason"] = numa_why;
  tj["epoch_resident_fraction"] = lr.epoch_resident_fraction;
  tj["residency_method"] = lr.residency_method;
  doc["target"] = tj;
  nlohmann::json ds = data.dataset;
  ds["bytes"] = data.index.total_known_bytes() ? data.index.total_known_bytes() : (lr.epochs_completed ? lr.bytes / lr.epochs_completed : lr.bytes);
  doc["dataset"] = ds;
  doc["loader"] = {{"num_workers", l.num_workers}, {"batch_size", l.batch_size},   {"prefetch_factor", l.prefetch_factor},
                   {"shuffle", l.shuffle},         {"drop_last", l.drop_last},     {"epochs", l.epochs},
                   {"duration_s", l.duration_s},   {"cpu_per_sample_us", l.cpu_per_sample_us},
                   {"gpus", l.ranks},              {"engine", l.engine},           {"direct", l.direct},
                   {"step_time_s", l.step_time_s}, {"seed", l.seed},
                   {"max_outstanding_batches", lr.ranks.empty() ? 0 : lr.ranks.front().max_outstanding}};
  doc["results"] = loader_results_json(lr);
  doc["ingest"] = ingest_json(ing, ai.sample_bytes);
  doc["partial"] = lr.partial;
  for (const auto& w : data.warnings) doc["warnings"].push_back(w);
  for (const auto& n : lr.cache_notes) doc["warnings"].push_back(n);
  if (lr.errors) doc["warnings"].push_back(fmt::format("{} files could not be read; see results.error_samples", lr.errors));

  std::cout << render_run_text(doc) << std::flush;
  if (!c.json_path.empty()) {
    write_json_file(c.json_path, doc);
    fmt::print(stderr, "ioprobe: wrote {}\n", escape_bytes(c.json_path));
  }
  if (lr.partial) return interrupt_exit_code();
  if (lr.samples == 0 && lr.errors > 0) return kExitFailure;
  return kExitOk;
}

int cmd_gen(const CommandContext& ctx) {
  RunConfig c;
  if (!build_run_config(ctx, true, c)) return kExitOk;
  PreparedData data = prepare_dataset(c);
  if (data.interrupted) {
    fmt::print(stderr, "ioprobe gen: interrupted; '{}' is marked incomplete and will be regenerated by the next run\n",
               escape_bytes(c.dir));
    return interrupt_exit_code();
  }
  uint64_t bytes = data.index.total_known_bytes();
  double s = data.dataset.value("generate_s", 0.0);
  fmt::print("{}: {} {} files, {} in '{}'{}\n", c.spec.preset, data.dataset.value("action", ""), format_count(data.index.size()),
             format_bytes(bytes), escape_bytes(c.dir),
             s > 0 ? fmt::format(" in {} ({})", format_seconds(s), format_rate(bytes / s)) : "");
  return kExitOk;
}

int cmd_report(const CommandContext& ctx) {
  po::options_description desc("ioprobe report FILE.json: re-render a saved result document");
  desc.add_options()("help,h", "this help");
  std::vector<std::string> files, rest;
  for (const auto& a : ctx.args) (a.empty() || a[0] != '-' ? files : rest).push_back(a);
  po::variables_map vm = parse_command_line(rest, desc, "report");
  if (vm.count("help") || files.empty()) {
    std::cout << "usage: ioprobe report FILE.json\n" << desc;
    if (files.empty() && !vm.count("help")) throw UsageError("report: give a result document (FILE.json)");
    return kExitOk;
  }
  for (const auto& f : files) {
    nlohmann::json doc = read_json_file(f);
    std::string kind = doc.value("kind", "");
    try {
      if (kind == "run") std::cout << render_run_text(doc);
      else throw UsageError(fmt::format("'{}': rendering kind '{}' is not supported by this version", escape_bytes(f), kind));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("'{}' is missing fields of a '{}' document: {}", escape_bytes(f), kind, e.what()));
    }
  }
  return kExitOk;
}

}  // namespace ioprobe::cli
