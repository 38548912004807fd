#include "cli/run_prepare.hpp"

#include <cerrno>

#include <sys/resource.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "core/units.hpp"
#include "dataset/generator.hpp"
#include "dataset/jpeg_content.hpp"
#include "dataset/manifest.hpp"
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
    if (c.loader.decode_jpeg)
      if (const std::optional<NotJpeg> bad = find_non_jpeg(w.index))
        throw UsageError(fmt::format("--decode jpeg: '{}' in {} '{}' is not a JPEG file ({}); --decode jpeg decodes "
                                     "JPEG images only: leave it out for these files, or point --data at JPEG files",
                                     escape_bytes(bad->path), c.data_dir.empty() ? "--file-list" : "--data",
                                     escape_bytes(c.data_dir.empty() ? c.file_list : c.data_dir), bad->why));
    p.target_path = c.data_dir;  // a file list's filesystems are those of its files (probe_data_targets)
    p.from_list = c.data_dir.empty();
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
  g.reuse_only = c.dataset_reuse_only;
  DatasetOutcome d = ensure_dataset(c.dir, s, g);
  if (c.loader.decode_jpeg && d.content != ContentKind::kJpeg)
    throw UsageError(fmt::format("--decode jpeg: the dataset in '{}' holds {} files, not JPEG images (its manifest "
                                 "{} says so); generate JPEG content there with --content jpeg --regenerate, or "
                                 "choose another --dir",
                                 escape_bytes(c.dir), content_kind_name(d.content), kManifestName));
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
               {"records_per_file", s.records_per_file},
               {"content", content_kind_name(d.content)}};
  if (d.content == ContentKind::kJpeg && d.generate_s > 0) p.dataset["jpeg_padding_bytes"] = d.jpeg_padding_bytes;
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
  d.au_target = c.au_target_given ? c.au_target : load_au_floor(workloads_dir() + "/accelerators.json", model);
  d.model = model;
  if (c.user_samples_per_s > 0 || c.user_step_time_s > 0) {
    d.accelerator = "custom";
    // Not --gpu's name: its catalog rate is not what sets this demand (run_options' resolve_rate_source).
    d.accelerator_name = "custom GPU";
    d.rate_family = "user";
    d.samples_per_s_per_gpu = c.user_samples_per_s > 0 ? c.user_samples_per_s
                                                       : c.loader.batch_size / c.user_step_time_s;
    d.source = c.user_samples_per_s > 0
                   ? "--gpu-samples-per-s"
                   : fmt::format("--step-time {} s per batch of {}", c.user_step_time_s, c.loader.batch_size);
    return d;
  }
  std::vector<CatalogRow> rows = load_catalog(workloads_dir() + "/accelerators.json");
  const CatalogRow& row = find_row(rows, c.gpu, model);
  d.accelerator = row.accelerator;
  d.accelerator_name = row.name;
  const bool training = c.rate_family == RateFamily::kTraining;
  const std::optional<IngestRate>* rate = training ? &row.training : &row.emulation;
  d.rate_family = name(c.rate_family);
  if (!*rate) {
    rate = training ? &row.emulation : &row.training;
    d.rate_family = training ? "emulation" : "training";
  }
  d.samples_per_s_per_gpu = (*rate)->samples_per_s;
  d.source = (*rate)->source;
  return d;
}

std::vector<TargetShare> probe_data_targets(PreparedData& data) {
  if (!data.from_list) {
    TargetShare one;
    one.info = probe_target(data.target_path, /*allow_temp_file=*/false);
    one.files = data.index.size();
    one.bytes = data.index.total_known_bytes();
    return {std::move(one)};
  }
  FileTargets ft = probe_file_targets(data.index.size(), [&](size_t i) { return std::string(data.index.path(i)); });
  if (!ft.not_regular.empty()) {
    // Left out, not read: a FIFO's open blocks until a writer comes (a run hung on one, and a
    // signal could not end it) and a character device such as /dev/zero never ends. Missing
    // paths stay in the list and count as read errors.
    const std::string first = escape_bytes(data.index.path(ft.not_regular.front()));
    FileIndex kept(data.index.root());
    for (size_t i = 0, k = 0; i < data.index.size(); ++i) {
      if (k < ft.not_regular.size() && ft.not_regular[k] == i) {
        ++k;
        continue;
      }
      kept.add(data.index.path(i), data.index.file_size(i));
    }
    data.warnings.push_back(fmt::format("skipped {} of the {} listed paths: not regular files (first: '{}': {})",
                                        format_count(ft.not_regular.size()), format_count(data.index.size()), first,
                                        ft.first_not_regular_kind));
    if (kept.empty())
      throw UsageError(fmt::format("--file-list: none of its {} paths is a regular file (first: '{}': {}); list the "
                                   "files to read",
                                   format_count(data.index.size()), first, ft.first_not_regular_kind));
    data.index = std::move(kept);
    if (data.dataset.is_object()) data.dataset["files"] = data.index.size();
  }
  const FileIndex& index = data.index;
  if (ft.groups.empty())
    throw UsageError(fmt::format("--file-list: none of its {} paths is a regular file (first: '{}': {}); relative "
                                 "paths are relative to the working directory",
                                 format_count(index.size()), escape_bytes(ft.first_missing),
                                 errno_text(ft.first_missing_errno)));
  if (ft.missing)
    data.warnings.push_back(
        fmt::format("{} of the {} listed paths could not be found or read (first: '{}': {}); each counts "
                    "as a read error",
                    format_count(ft.missing), format_count(index.size()), escape_bytes(ft.first_missing),
                    errno_text(ft.first_missing_errno)));
  data.target_path = ft.groups.front().info.path;
  return std::move(ft.groups);
}

namespace {

// One filesystem's O_DIRECT answer: 0 accepted, a negative errno refused; `known` false when it
// could not be probed (no readable file on it).
struct DirectAnswer {
  const TargetShare* group;
  std::string file;
  int r = 0;
  bool known = true;
};

std::string group_label(const TargetShare& g) {
  return fmt::format("{} at {} ({} file{})", g.info.fs_type, escape_bytes(g.info.path), format_count(g.files),
                     g.files == 1 ? "" : "s");
}

}  // namespace

std::string resolve_cache_and_engine(const RunConfig& c, const PreparedData& data,
                                     const std::vector<TargetShare>& targets, LoaderConfig& l,
                                     std::string& engine_reason, std::vector<std::string>& warnings) {
  const TargetInfo& target = targets.front().info;  // the most bytes
  const bool several = targets.size() > 1;
  std::string detail;
  if (c.cache == CacheMode::kWarm) {
    l.direct = false;
    l.measure_residency = true;
    detail = "buffered reads through the page cache (warm)";
  } else {
    std::vector<DirectAnswer> answers;
    if (c.direct != DirectMode::kOff) {
      if (!data.from_list) {
        const FileIndex& index = data.index;
        std::string f = index.root().empty() ? index.path(0) : index.root() + "/" + index.path(0);
        answers.push_back({&targets.front(), f, probe_o_direct(f), true});
      } else {
        for (const TargetShare& g : targets)
          answers.push_back({&g, g.info.o_direct_probe_file, g.info.o_direct == 1 ? 0 : -g.info.o_direct_errno,
                             g.info.o_direct >= 0});
      }
    }
    const DirectAnswer* refused = nullptr;
    for (const DirectAnswer& a : answers)
      if (a.known && a.r != 0 && !refused) refused = &a;
    if (refused && c.direct == DirectMode::kOn)
      throw UsageError(fmt::format("--direct on: O_DIRECT not supported on '{}' ({}: {}); rerun with --direct auto or "
                                   "--direct off for buffered reads with page eviction",
                                   escape_bytes(refused->file), refused->group->info.fs_type, errno_text(-refused->r)));
    const char* drop = c.drop_caches ? " and drop_caches" : "";
    if (c.direct == DirectMode::kOff) {
      l.direct = false;
      l.evict_before_epoch = true;
      l.drop_caches = c.drop_caches;
      l.measure_residency = true;
      detail = fmt::format("buffered (--direct off); pages evicted with posix_fadvise(DONTNEED){} before each epoch",
                           drop);
    } else if (!refused) {
      l.direct = true;
      std::string ram;
      for (const TargetShare& g : targets)
        if (g.info.memory_backed) ram += (ram.empty() ? "" : ", ") + group_label(g);
      if (!several)
        detail = target.memory_backed ? "O_DIRECT accepted, but tmpfs keeps the data in RAM: not a device measurement"
                                      : "O_DIRECT: reads bypass the page cache";
      else
        detail = ram.empty() ? fmt::format("O_DIRECT: reads bypass the page cache (accepted on all {} filesystems)",
                                           targets.size())
                             : fmt::format("O_DIRECT accepted on all {} filesystems, but {} keeps its data in RAM: not "
                                           "a device measurement",
                                           targets.size(), ram);
    } else {
      l.direct = false;
      l.evict_before_epoch = true;
      l.drop_caches = c.drop_caches;
      l.measure_residency = true;
      const TargetInfo& rt = refused->group->info;
      detail = several ? fmt::format("buffered: {} refuses O_DIRECT ({}) and the loader takes one setting for the "
                                     "whole run; pages evicted with posix_fadvise(DONTNEED){} before each epoch",
                                     group_label(*refused->group), errno_name(-refused->r), drop)
                       : fmt::format("buffered (O_DIRECT refused on {}: {}); pages evicted with "
                                     "posix_fadvise(DONTNEED){} before each epoch",
                                     rt.fs_type, errno_name(-refused->r), drop);
      warnings.push_back(fmt::format("O_DIRECT refused on '{}' ({}, {}); cold reads use page eviction instead",
                                     escape_bytes(refused->file), rt.fs_type, errno_text(-refused->r)));
    }
  }
  const UringAvailability uring = probe_io_uring();
  EngineChoice ec = choose_engine(name(c.engine_request), target, !l.direct, uring);
  l.engine = ec.engine;
  engine_reason = ec.reason;
  if (!ec.warning.empty()) warnings.push_back(ec.warning);
  // The loader reads every file with one engine: say so where another filesystem would get another.
  for (size_t i = 1; i < targets.size(); ++i) {
    EngineChoice other = choose_engine(name(c.engine_request), targets[i].info, !l.direct, uring);
    if (other.engine != ec.engine)
      engine_reason += fmt::format("; chosen for {}, the most bytes: the loader takes one engine per run, so {} is "
                                   "read with it too ({} would pick {} there)",
                                   group_label(targets.front()), group_label(targets[i]), name(c.engine_request),
                                   other.engine);
  }
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
