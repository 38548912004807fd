#include "cli/run_plan.hpp"

#include <sys/utsname.h>

#include <algorithm>

#include <fmt/format.h>

#include "engine/uring_memlock.hpp"
#include "report/document.hpp"

namespace ioprobe::cli {

namespace {

// The mean bytes per sample the dataset holds, 0 when its sizes are not all known.
double dataset_mean_sample_bytes(const PreparedData& data, uint64_t samples) {
  if (samples == 0) return 0;
  if (data.layout.records_in_files())
    return static_cast<double>(data.layout.total_bytes()) / static_cast<double>(samples);
  size_t known = 0;
  const uint64_t total = data.index.total_known_bytes(&known);
  if (known != data.index.size() || total == 0) return 0;
  return static_cast<double>(total) / static_cast<double>(samples);
}

}  // namespace

std::string plan_model(const RunConfig& c) { return c.spec.model.empty() ? "resnet50" : c.spec.model; }

double plan_step_time_s(const RunConfig& c, const Demand& d) {
  return c.user_step_time_s > 0 ? c.user_step_time_s : c.loader.batch_size / d.samples_per_s_per_gpu;
}

RunPlan prepare_run(const RunConfig& c, const PrepareOptions& o) {
  RunPlan p;
  p.config = c;
  p.model = plan_model(c);
  // The GPU side first, so that a typo costs no dataset generation.
  p.demand = resolve_demand(c, p.model);
  const LoaderConfig widest = o.max_workers ? with_num_workers(c.loader, o.max_workers) : c.loader;
  check_open_files_limit(widest);

  p.data = prepare_dataset(c);
  if (p.data.interrupted) {
    p.interrupted = true;
    return p;
  }
  p.data.warnings.insert(p.data.warnings.end(), c.notes.begin(), c.notes.end());  // which option set the step time
  p.targets = probe_data_targets(p.data);
  for (const TargetShare& g : p.targets)
    for (const auto& w : g.info.warnings) p.data.warnings.push_back(w);

  LoaderConfig& l = p.loader;
  l = c.loader;
  p.topo = discover();
  l.placement = resolve_local(c.numa, p.target().device_numa_node, p.topo, &p.numa_reason);
  p.cache_detail = resolve_cache_and_engine(c, p.data, p.targets, l, p.engine_reason, p.data.warnings);
  // io_uring rings count against RLIMIT_MEMLOCK on most kernels: decided before any worker starts,
  // sized for the widest run of the command (tune: its largest point).
  utsname u{};
  const std::string kernel = uname(&u) == 0 ? u.release : "";
  apply_memlock_plan(c.engine_request,
                     loader_memlock_need(static_cast<uint64_t>(widest.ranks) * widest.num_workers, kernel),
                     read_memlock_limit(), l.engine, p.engine_reason, p.data.warnings);
  l.step_time_s = plan_step_time_s(c, p.demand);

  if (c.spec.kind == DatasetKind::kToken && p.demand.rate_family != "user" && p.model == "llama3.1-8b" &&
      c.spec.seq_len != 2048)
    p.data.warnings.push_back(fmt::format("the catalog's {} rate is tokens/s converted at 2,048 tokens per sample; "
                                          "with --seq-len {} give --gpu-samples-per-s (tokens/s / {})",
                                          p.model, c.spec.seq_len, c.spec.seq_len));
  const bool records = p.data.layout.records_in_files();
  p.samples_per_epoch = records ? p.data.layout.total_records() : p.data.index.size();
  // Over the whole job's ranks (every process runs --gpus of them).
  const LoaderConfig job = with_ranks(l, l.ranks * std::max<uint32_t>(1, o.processes));
  // drop_last with fewer samples per rank than one batch delivers nothing, epoch after epoch.
  check_drop_last_batches(job, p.samples_per_epoch, records ? "records" : "samples");
  const bool shards = p.data.layout.kind() == DatasetKind::kSharded;
  p.rank_units = shards ? p.data.layout.files() : p.samples_per_epoch;
  p.rank_unit = shards ? "shards" : "samples";
  if (o.check_rank_shares)
    if (std::string w = check_rank_shares(l, o.processes, p.rank_units, p.rank_unit, p.samples_per_epoch); !w.empty())
      p.data.warnings.push_back(std::move(w));
  p.sizes = sample_sizes(p.data.index);
  if (p.sizes.sampled && !p.sizes.exact)
    p.dataset_bytes_basis = fmt::format("estimated from the sizes of {} of the {} files", p.sizes.sampled,
                                        p.sizes.files);
  p.dataset_sample_bytes = c.sample_bytes > 0 ? c.sample_bytes : dataset_mean_sample_bytes(p.data, p.samples_per_epoch);
  if (p.dataset_sample_bytes == 0 && p.data.from_list) {
    // A file list's sizes are not in its index, but probe_data_targets stat'ed every listed file.
    uint64_t files = 0, bytes = 0;
    for (const TargetShare& g : p.targets) {
      files += g.files;
      bytes += g.bytes;
    }
    if (files && bytes) p.dataset_sample_bytes = static_cast<double>(bytes) / static_cast<double>(files);
  }
  // A --data walk: the stat'ed sample's mean, one sample per file.
  if (p.dataset_sample_bytes == 0 && !records && p.sizes.sampled && p.sizes.sampled_bytes)
    p.dataset_sample_bytes = static_cast<double>(p.sizes.sampled_bytes) / static_cast<double>(p.sizes.sampled);
  return p;
}

DatasetSection plan_dataset_section(const RunPlan& plan) {
  DatasetSection ds = plan.data.dataset;
  ds.bytes = plan.sizes.total_bytes();
  if (!plan.dataset_bytes_basis.empty()) ds.bytes_basis = plan.dataset_bytes_basis;
  return ds;
}

TargetSection plan_target_section(const RunPlan& plan, const LoaderConfig& l) {
  TargetSection t = target_section(plan.target());
  t.reading = TargetReadSetting{.cache = name(plan.config.cache),
                                .direct = l.direct,
                                .cache_detail = plan.cache_detail,
                                .engine = l.engine,
                                .engine_reason = plan.engine_reason};
  return t;
}

}  // namespace ioprobe::cli
