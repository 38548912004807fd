#include "capacity/capacity_across.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/interrupt.hpp"
#include "core/message.hpp"
#include "loader/loader_run.hpp"
#include "tune/sweep.hpp"

namespace ioprobe {

namespace {

// A window with three batches per rank gives every rank two intervals between completions.
RepeatSample sample_of(const LoaderResult& r, const LoaderConfig& c, uint32_t ranks, int cpus) {
  if (ranks == 0 || r.ranks.empty()) return {};
  return repeat_sample(r, with_ranks(c, ranks), cpus, uint64_t{3} * ranks * c.batch_size);
}

}  // namespace

RepeatAcross repeat_across(const cluster::PointMerge& m, const LoaderConfig& c) {
  RepeatAcross a;
  a.cluster = sample_of(m.merged, c, m.gpus, m.cpus_allowed);
  for (const auto& h : m.hosts) a.hosts.push_back(sample_of(h.result, c, h.gpu_ranks, h.cpus_allowed));
  return a;
}

CapacityPoint summarize_across(uint32_t gpus, const std::vector<cluster::PointMerge>& merges,
                               const std::vector<RepeatAcross>& repeats) {
  std::vector<CapacityHostRow> rows;
  if (!merges.empty())
    for (size_t h = 0; h < merges.front().hosts.size(); ++h) {
      const cluster::PointHost& ph = merges.front().hosts[h];
      std::vector<RepeatSample> runs;
      for (const auto& r : repeats)
        if (h < r.hosts.size()) runs.push_back(r.hosts[h]);
      const CapacityPoint hp = summarize_repeats(ph.gpu_ranks, runs);
      CapacityHostRow row;
      row.hostname = ph.hostname;
      row.host_index = ph.host_index;
      row.mpi_ranks = ph.mpi_ranks;
      row.gpus = ph.gpu_ranks;
      row.cpus_allowed = ph.cpus_allowed;
      row.au = hp.au;
      row.au_min = ph.gpu_ranks ? hp.au_min : 0;
      row.samples_per_s = hp.samples_per_s;
      row.bytes_per_s = hp.bytes_per_s;
      row.delivered_bytes = hp.delivered_bytes;
      row.cpu_fraction = hp.cpu_fraction;
      row.consumer_lag = hp.consumer_lag;
      const std::vector<std::string> why = client_notes(hp.cpu_fraction, hp.consumer_lag, hp.worker_runq_share);
      row.client_bound = !why.empty();
      for (const auto& w : why) row.note += (row.note.empty() ? "" : "; ") + w;
      rows.push_back(std::move(row));
    }
  std::vector<RepeatSample> job;
  for (const auto& r : repeats) job.push_back(r.cluster);
  return summarize_repeats(gpus, job, &rows);
}

std::optional<CapacityPoint> measure_point_across(const FileIndex& index, const LoaderConfig& base, uint32_t gpus,
                                                  const PointRunOptions& o, const Topology& topo,
                                                  const RecordLayout* layout, const PointAcross& across,
                                                  const cluster::PointPart& me) {
  const double run_s = point_run_s(o.point_s, base.step_time_s);
  const double need_s = o.repeats * (run_s + kRunOverheadS);
  // Rank 0's clock alone decides the budget; a signal on any process stops every one.
  int stop = interrupted() ? 2 : 0;
  if (!stop && across.rank == 0 && o.deadline_ns && now_ns() + static_cast<int64_t>(need_s * 1e9) > o.deadline_ns)
    stop = 1;
  if (across.agree_stop(stop)) return std::nullopt;
  const std::vector<uint32_t> split = cluster::split_gpus(gpus, across.host_of_rank);
  const std::vector<uint32_t> first = cluster::first_gpu_ranks(split);
  const auto r = static_cast<size_t>(across.rank);
  std::vector<cluster::PointMerge> merges;
  std::vector<RepeatAcross> repeats;
  for (uint32_t rep = 0; rep < o.repeats; ++rep) {
    cluster::PointPart part = me;
    part.point_gpus = gpus;
    part.gpu_ranks = split[r];
    const LoaderConfig c = repeat_config(base, split[r], gpus, first[r], run_s, rep);
    if (o.before_repeat) o.before_repeat(gpus, rep);
    std::string error;
    if (split[r] == 0) {
      // No accelerator here at this point: meet the others' start and answer their steps.
      across.sync->start();
      across.sync->finish(StopKind::kNone);
    } else {
      try {
        part.result = run_loader(index, c, nullptr, &topo, layout, across.sync);
        const LoaderResult& lr = part.result;
        if (lr.stopped_on_errors || (lr.samples == 0 && lr.errors > 0))
          error = fmt::format("{} of the {} GPU ranks here: reads failed ({}; first: {}); the capacity search stops, "
                              "as its rates would measure the failure",
                              split[r], gpus, to_string(lr.stop),
                              lr.error_samples.empty() ? "?" : error_line(lr.error_samples.front()));
      } catch (const Error& e) {
        error = e.what();
      } catch (const std::exception& e) {
        error = e.what();
      }
    }
    // Said here at once: when this process failed before the start barrier, the others end the
    // job by the watchdog and this line is what names the reason.
    if (!error.empty()) message(fmt::format("rank {} on host {}: {}", me.rank, me.hostname, error));
    std::optional<cluster::PointMerge> m = across.gather(error, part);
    if (across.agree_stop(interrupted() || part.result.partial ? 2 : 0)) return std::nullopt;
    if (m) {
      repeats.push_back(repeat_across(*m, c));
      merges.push_back(std::move(*m));
    }
  }
  CapacityPoint p;
  if (across.rank == 0) {
    p = summarize_across(gpus, merges, repeats);
    const std::string longer = lengthened_note(run_s, o.point_s, base.step_time_s);
    if (!longer.empty()) p.note += (p.note.empty() ? "" : "; ") + longer;
  }
  return across.share(p);
}

}  // namespace ioprobe
