#include <cstdlib>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/checkpoint_cluster_json.hpp"
#include "report/checkpoint_document.hpp"
#include "report/checkpoint_readback.hpp"
#include "report/checkpoint_report.hpp"
#include "report/device_io_report.hpp"
#include "report/error_text.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

std::string rate(double v) { return format_rate(v); }
std::string bytes(uint64_t v) { return format_bytes(v); }

// Why a compressed save saved nothing, from what the document knows: random content is
// incompressible by construction; a negative (fast) zstd level trades ratio for speed and often
// saves nothing on any data; otherwise this data did not compress at this level (so
// zstd:-5 on training state is not blamed on "incompressible data").
std::string no_saving_cause(const std::string& compress, const std::string& content) {
  if (content == "random") return "the data is random bytes (--data random), incompressible by construction";
  const auto colon = compress.find(':');
  const int level = colon == std::string::npos ? 3 : std::atoi(compress.c_str() + colon + 1);
  if (level < 1)
    return fmt::format("{} is one of zstd's fast (negative) levels, which trade ratio for speed and may save nothing; "
                       "zstd:1 or higher compresses",
                       compress);
  return fmt::format("this data did not compress at {}", compress);
}
std::string secs(double v) { return fmt::format("{:.3f} s", v); }

}  // namespace

std::string render_checkpoint_text(const CheckpointDocument& doc) {
  if (doc.readback) return render_checkpoint_readback_text(doc);
  const CheckpointSection& c = doc.section;
  const CheckpointStateSection& st = c.state;
  const CheckpointConfigSection& cfg = c.config;
  const CheckpointSaveSection& sv = c.save;
  const TargetSection& tg = doc.target;
  const bool compressed = cfg.compress != "none";
  std::string o;
  if (doc.partial) o += fmt::format("*** INTERRUPTED after {:.1f} s: partial result ***\n", c.elapsed_s);
  const std::string where = doc.cluster  // across hosts: every process's ranks
                                ? fmt::format("on {} host(s), {} process(es),", doc.cluster->hosts,
                                              doc.cluster->mpi_ranks)
                                : std::string("on this host");
  o += fmt::format("ioprobe checkpoint: {} ({}), {} rank(s) {} of world {} (tp {} x pp {} x dp {}, ZeRO-{})\n",
                   bytes(st.host_bytes), st.source, st.ranks_on_host, where, st.world_size, st.tp, st.pp, st.dp,
                   st.zero_stage);
  o += fmt::format("  target      {} ({}{}{})\n", tg.path, tg.fs_type, tg.device.empty() ? "" : ", " + tg.device,
                   tg.memory_backed ? ", RAM: not a device measurement" : "");
  o += fmt::format("  write path  chunks {}, compress {}{}, {} x {} io_uring buffers, {}, {}\n", bytes(cfg.chunk_bytes),
                   cfg.compress, cfg.byte_group ? " + byte grouping" : "", format_bytes(cfg.io_bytes), cfg.io_depth,
                   sv.direct                        ? "O_DIRECT"
                   : !sv.ok && cfg.direct_requested ? "O_DIRECT requested (no save completed)"
                                                    : "buffered (O_DIRECT refused or off)",
                   sv.durability);
  if (cfg.flush_every_bytes > 0)
    o += fmt::format("  flush       background fdatasync every {} written (--flush-every){}\n",
                     bytes(cfg.flush_every_bytes), c.raw_write.available ? ", raw baseline alike" : "");
  if (compressed && cfg.compress_pool == "zstd")
    o += fmt::format(
        "  zstd        zstd's own pool: {} worker(s) per rank; job size {}: {} worker(s) can be busy per chunk\n",
        cfg.compress_threads_per_rank, bytes(cfg.zstd_job_bytes), cfg.zstd_workers_busy_per_chunk);
  else if (compressed)
    o += fmt::format(
        "  zstd        ioprobe's own threads (not zstd's pool): {} per rank, one zstd context each, one frame "
        "per {} piece\n",
        cfg.compress_threads_per_rank, bytes(cfg.frame_bytes.value_or(0)));
  if (st.content != "tensors")
    o += fmt::format("  data        {} (--data {}): not training state; for compression tests\n",
                     st.content == "text" ? "text-like bytes" : "random bytes (incompressible)", st.content);
  // Older documents (before --huge-pages) carry neither key: nothing is said then.
  if (cfg.huge_pages) {
    if (*cfg.huge_pages)
      o += fmt::format(
          "  memory      transparent huge pages advised for state and I/O buffers; state on huge pages: {} of {} "
          "(measured)\n",
          bytes(st.resident_huge_page_bytes), bytes(st.resident_bytes));
    else
      o +=
          "  memory      4 KiB pages for the save (--huge-pages false): O_DIRECT requests may be split at the device's "
          "segment limit; the raw baseline keeps huge pages\n";
  }
  if (st.resident_cyclic)
    o += fmt::format("  state       larger than the memory budget: {} resident, read cyclically\n",
                     bytes(st.resident_bytes));
  // A save that did not complete claims no rate, ratio or size on disk (those are empty); only the
  // work it did is shown.
  const bool ok = sv.ok;
  const CheckpointPhases& ph = sv.phases_max_over_ranks_s;
  // A save whose read-back failed (a checksum mismatch, an undecodable chunk, a read error) is a
  // failed save: its rates are shown marked as such, and nothing is derived from them.
  const bool verify_failed = ok && c.restore && !c.restore->ok && !c.restore->interrupted;
  if (ok) {
    o += verify_failed ? "\nsave FAILED VERIFICATION: its read-back failed (RESTORE FAILED below); the rates below are "
                         "of a failed save, not a result\n"
                       : "\nsave\n";
    // Within 0.5% is no saving to claim, and more than 0.5% over is a growth: chance matches in
    // incompressible data, or chunks so small that their index entries (48 B each,
    // shard_format.hpp) and zstd frame headers cancel the saving.
    uint64_t chunks = 0;
    for (const auto& r : sv.ranks) chunks += r.chunks_total;
    const auto logical = static_cast<double>(sv.logical_bytes);
    std::string why;
    const double ratio = sv.ratio.value_or(0);
    if (compressed && ratio < 1.005) {
      const std::string what = ratio < 0.995
                                   ? fmt::format(" -- larger than the state ({:.1f}% more)", (1 / ratio - 1) * 100)
                                   : std::string(" -- no saving (within 0.5%)");
      why = logical > 0 && 48.0 * static_cast<double>(chunks) > 0.005 * logical
                ? fmt::format("{}: {} chunks of {} each add a 48 B index entry and a zstd frame header; use a larger "
                              "--chunk-size",
                              what, chunks, bytes(cfg.chunk_bytes))
                : what + ": " + no_saving_cause(cfg.compress, st.content);
    }
    o += fmt::format("  logical {}  on disk {}  ratio {:.3f}x{}\n", bytes(sv.logical_bytes),
                     bytes(sv.bytes_on_disk.value_or(0)), ratio, why);
    if (const auto& d = sv.device_io)
      o += "  device I/O  " + device_io_summary(d->section, "on disk") +
           (d->section.scope.empty() ? "" : " [" + d->section.scope + "]") + "\n";
  } else {
    o += fmt::format("\nsave {} -- no throughput, ratio or size on disk is claimed\n",
                     sv.interrupted ? "INTERRUPTED" : "FAILED");
    uint64_t chunks_done = 0, chunks_total = 0;
    for (const auto& r : sv.ranks) {
      chunks_done += r.chunks_done;
      chunks_total += r.chunks_total;
    }
    if (chunks_total == 0)  // no rank started writing (stopped while the state was generated or probed)
      o += "  completed work: none: the save had not started\n";
    else
      o += fmt::format("  completed work: {} of {} chunks ({} of logical state); {} written to the files before the "
                       "stop, 0 B durable ({}, temporary files removed)\n",
                       format_count(chunks_done), format_count(chunks_total), bytes(sv.logical_bytes),
                       bytes(sv.written_bytes), sv.durability);
  }
  o += fmt::format("  phases (max over ranks, overlapping): stage {}  compress {}  write wait {}  fsync {}\n",
                   secs(ph.stage), secs(ph.compress), secs(ph.write_wait), secs(ph.fsync));
  // Without fsync the save ends when its files are published in the page cache: that time is
  // not a time to durable, and says so (the JSON keeps the key, with durable = false).
  const bool durable = sv.durable;
  o += fmt::format("  time to staged {}  ranks done {}  publish {}  {} {}\n",
                   sv.async ? secs(sv.time_to_staged_s)
                            : std::string(durable || !ok ? "- (sync: training blocked until durable)"
                                                         : "- (sync: training blocked until published)"),
                   secs(sv.ranks_done_s), secs(sv.publish_s),
                   durable || !ok ? "time to durable" : "time to published (NOT durable: no fsync)",
                   ok ? secs(sv.time_to_durable_s.value_or(0)) : std::string("-"));
  for (const auto& r : sv.ranks) {
    if (ok)
      o += fmt::format("  rank {:>4}  {}  {}  {}\n", r.rank, bytes(r.logical_bytes), secs(r.duration_s),
                       rate(r.write_bytes_per_s.value_or(0)));
    else
      o += fmt::format("  rank {:>4}  {} chunk(s) of {} done  {} reached the kernel  elapsed {}\n", r.rank,
                       r.chunks_done, r.chunks_total, bytes(r.written_bytes), secs(r.duration_s));
  }
  if (verify_failed) {
    o += fmt::format("  duration (max over ranks) {}  throughput (min over ranks) {} of the FAILED save\n",
                     secs(sv.duration_max_s), rate(sv.throughput_min_rank_bytes_per_s.value_or(0)));
    o += fmt::format("  aggregate write {} of logical state of a save that FAILED VERIFICATION: not a result, do not "
                     "size storage on it\n",
                     rate(sv.write_bytes_per_s.value_or(0)));
  } else if (ok) {
    o += fmt::format("  duration (max over ranks) {}  throughput (min over ranks) {}\n", secs(sv.duration_max_s),
                     rate(sv.throughput_min_rank_bytes_per_s.value_or(0)));
    o += fmt::format("  aggregate write {} of logical state{}\n", rate(sv.write_bytes_per_s.value_or(0)),
                     sv.durable ? " (to durable)" : " -- NOT DURABLE (page cache), do not size storage on it");
  } else {
    o += fmt::format("  elapsed (max over ranks) {}\n", secs(sv.duration_max_s));
  }
  if (const auto& z = sv.compression) {
    o += fmt::format(
        "  compression workers busy (measured: their CPU time in zstd / wall): {:.2f} of {} per rank on average; "
        "{} used{}; checksums (xxh3 of each piece and frame) {:.3f} s of their CPU (max over ranks)\n",
        z->workers_busy_mean_per_rank, z->workers_per_rank, z->workers_used_min_over_ranks,
        z->workers_per_rank == 0 ? " (compressing in the rank's own thread)" : "", z->checksum_cpu_s_max_over_ranks);
  }
  o += fmt::format("  CPU user {:.2f} s + sys {:.2f} s over {:.2f} s wall = {:.2f} cores busy\n", sv.user_cpu_s,
                   sv.sys_cpu_s, sv.ranks_done_s, sv.cpu_per_wall);
  if (const auto& a = sv.async) {
    const uint64_t steps = a->steps_during_persistence;
    o += fmt::format(
        "  async: training blocked {}; {} step{} ran during persistence, mean {:.3f} ms vs {:.3f} ms idle ({:+.1f}%)\n",
        secs(a->training_blocked_s), steps, steps == 1 ? "" : "s", a->step_mean_during_persistence_s * 1e3,
        a->step_baseline_s * 1e3, a->step_slowdown * 100);
  }
  if (sv.failure) o += failure_lines("  FAILED: ", *sv.failure, "  ");
  const CheckpointRawWrite& rw = c.raw_write;
  const CheckpointComparison& cmp = c.comparison;
  if (!rw.available) o += "\nraw sequential write: not measured: " + rw.reason + "\n";
  if (rw.available) {
    std::string runs;
    for (const double v : rw.runs_bytes_per_s) runs += fmt::format("{}{:.1f}", runs.empty() ? "" : ", ", v / 1e6);
    o += fmt::format("\nraw sequential write, same target, same run: {} in {} = {} ({}, fsync{})\n", bytes(rw.bytes),
                     secs(rw.duration_max_s), rate(rw.write_bytes_per_s), rw.direct ? "O_DIRECT" : "buffered",
                     runs.empty() ? "" : "; best of runs before/after the save: " + runs + " MB/s");
    if (rw.after_save_skipped) o += "  the run after the save did not run: " + *rw.after_save_skipped + "\n";
  }
  if (verify_failed) {
    o += "  checkpoint / raw: not claimed: the save failed verification\n";
  } else if (!cmp.available || !cmp.checkpoint_over_raw) {
    o += "  checkpoint / raw: not available: " + cmp.reason.value_or("no raw write measured") + "\n";
  } else {
    o += fmt::format("  checkpoint / raw = {:.3f}\n", *cmp.checkpoint_over_raw);
    if (cmp.ratio_note) o += "  note: " + *cmp.ratio_note + "\n";
    const int cores = cmp.cores.value_or(0);
    if (cmp.cpu_limit_bytes_per_s)
      o += fmt::format("  limits: write x ratio {}; {} core(s) x zstd {} = {}  -> {}-bound\n",
                       rate(cmp.write_limit_bytes_per_s.value_or(0)), cores,
                       rate(cmp.zstd_single_thread_bytes_per_s.value_or(0)), rate(*cmp.cpu_limit_bytes_per_s),
                       cmp.bound.value_or("?"));
    const std::string pool = cmp.compress_pool.value_or("ioprobe");
    if (cmp.zstd_multithread_in_memory_bytes_per_s)
      // The ratio to zstd's pool only where the save used zstd's pool: with ioprobe's threads the
      // measured-limit line below compares with the pool the save used.
      o += fmt::format("  in memory, no I/O, {} core(s): zstd's own pool {}{}{}\n", cores,
                       rate(*cmp.zstd_multithread_in_memory_bytes_per_s),
                       cmp.ioprobe_pool_in_memory_bytes_per_s
                           ? ", ioprobe's threads " + rate(*cmp.ioprobe_pool_in_memory_bytes_per_s) +
                                 " (this save used " + pool + "'s)"
                           : std::string(),
                       pool == "zstd" ? fmt::format("; checkpoint / zstd's pool = {:.3f}",
                                                    cmp.checkpoint_over_zstd_multithread.value_or(0))
                                      : std::string());
    // A ratio the note above calls not meaningful at this size is shown, never judged.
    if (cmp.checkpoint_over_limit && !cmp.ratio_meaningful.value_or(true))
      o += fmt::format(
          "  checkpoint / limit = {:.3f} (not judged against ioprobe's design target of 0.90: the writes were too "
          "small or too short for their rates to be meaningful, see the note above)\n",
          *cmp.checkpoint_over_limit);
    else if (cmp.checkpoint_over_limit)
      o += fmt::format(
          "  checkpoint / limit = {:.3f} ({} ioprobe's design target of 0.90: what a FastPersist-style writer "
          "should reach here)\n",
          *cmp.checkpoint_over_limit, *cmp.checkpoint_over_limit >= 0.9 ? "at or above" : "below");
    if (cmp.checkpoint_over_measured_limit)
      o += fmt::format(
          "  checkpoint / measured limit = {:.3f} (min(write x ratio, the pool's measured {} core(s) {} = {:.2f}x "
          "one core's speed))\n",
          *cmp.checkpoint_over_measured_limit, cores, rate(cmp.measured_cpu_limit_bytes_per_s.value_or(0)),
          cmp.cores_speedup_measured.value_or(0));
    if (cmp.cores_speedup_measured && *cmp.cores_speedup_measured > 1.05 * cores)
      o += fmt::format(
          "  note: a speedup above {} core(s) means the one-core probe ran slower than the cores did together: "
          "this host's CPU speed varies between probes (each best of 3), so take both limits as approximate\n",
          cores);
  }
  if (const auto& r = c.restore) {
    if (r->ok || r->interrupted)
      o += fmt::format("\nrestore, {}: {} verified in {} = {}; min over ranks {}\n", r->cache, bytes(r->logical_bytes),
                       secs(r->duration_max_s), rate(r->restore_bytes_per_s), rate(r->throughput_min_rank_bytes_per_s));
    else  // a failed read-back has no rate to claim
      o += fmt::format("\nrestore, {}: FAILED after {} verified in {}; no rate is claimed\n", r->cache,
                       bytes(r->logical_bytes), secs(r->duration_max_s));
    const int decoders = r->decode_threads_per_rank;
    // Why no decoders ran: the one reason that applied to this run's shards.
    const std::string why = !compressed                   ? "uncompressed: nothing to decode"
                            : cfg.compress_pool == "zstd" ? "one zstd frame per chunk (--compress-pool zstd)"
                                                          : "--restore-threads 0";
    o += decoders > 0
             ? fmt::format("  {} decompression worker(s) per rank (--restore-threads), reading on the rank's thread\n",
                           decoders)
             : fmt::format("  read{} on each rank's thread ({})\n", compressed ? " and decoded" : "", why);
    uint64_t verified = 0, total = 0;
    for (const auto& x : r->ranks) {
      verified += x.chunks_verified;
      total += x.chunks_total;
    }
    if (r->interrupted)
      o += fmt::format("  INTERRUPTED: {} of {} chunks verified; the figures cover those chunks only\n",
                       format_count(verified), format_count(total));
    if (r->error) o += failure_lines("  RESTORE FAILED: ", *r->error, "  ");
    if (r->device_io) o += "  device I/O  " + device_io_summary(*r->device_io, "shard bytes") + "\n";
  }
  o += render_checkpoint_hosts_text(doc.cluster, doc.hosts);  // across hosts only
  for (const auto& w : doc.warnings) o += "warning: " + w + "\n";
  return o;
}

}  // namespace ioprobe
