#include <cstdlib>

#include <fmt/format.h>

#include "core/units.hpp"
#include "report/checkpoint_cluster_json.hpp"
#include "report/checkpoint_readback.hpp"
#include "report/checkpoint_report.hpp"
#include "report/device_io_report.hpp"

namespace ioprobe {

using nlohmann::json;

namespace {

std::string rate(const json& v) { return format_rate(v.get<double>()); }
std::string bytes(const json& v) { return format_bytes(v.get<uint64_t>()); }

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
std::string secs(const json& v) { return fmt::format("{:.3f} s", v.get<double>()); }

}  // namespace

std::string render_checkpoint_text(const json& doc) {
  if (is_checkpoint_readback(doc)) return render_checkpoint_readback_text(doc);
  const json& c = doc.at("checkpoint");
  const json& st = c.at("state");
  const json& cfg = c.at("config");
  const json& sv = c.at("save");
  const json& tg = doc.value("target", json::object());
  std::string o;
  if (doc.value("partial", false))
    o += fmt::format("*** INTERRUPTED after {:.1f} s: partial result ***\n", c.value("elapsed_s", 0.0));
  const std::string where = doc.contains("cluster")  // across hosts: every process's ranks
                                ? fmt::format("on {} host(s), {} process(es),", doc["cluster"].value("hosts", 0),
                                              doc["cluster"].value("mpi_ranks", 0))
                                : std::string("on this host");
  o += fmt::format("ioprobe checkpoint: {} ({}), {} rank(s) {} of world {} (tp {} x pp {} x dp {}, ZeRO-{})\n",
                   bytes(st.at("host_bytes")), st.at("source").get<std::string>(), st.at("ranks_on_host").get<int>(),
                   where, st.at("world_size").get<int>(), st.at("tp").get<int>(), st.at("pp").get<int>(),
                   st.at("dp").get<int>(), st.at("zero_stage").get<int>());
  o += fmt::format("  target      {} ({}{}{})\n", tg.value("path", "?"), tg.value("fs_type", "?"),
                   tg.value("device", "").empty() ? "" : ", " + tg.value("device", ""),
                   tg.value("memory_backed", false) ? ", RAM: not a device measurement" : "");
  o += fmt::format("  write path  chunks {}, compress {}{}, {} x {} io_uring buffers, {}, {}\n",
                   bytes(cfg.at("chunk_bytes")), cfg.at("compress").get<std::string>(),
                   cfg.at("byte_group").get<bool>() ? " + byte grouping" : "",
                   format_bytes(cfg.at("io_bytes").get<uint64_t>()), cfg.at("io_depth").get<int>(),
                   sv.at("direct").get<bool>() ? "O_DIRECT"
                   : !sv.value("ok", false) && cfg.value("direct_requested", false)
                       ? "O_DIRECT requested (no save completed)"
                       : "buffered (O_DIRECT refused or off)",
                   sv.at("durability").get<std::string>());
  if (cfg.value("flush_every_bytes", uint64_t{0}) > 0)
    o += fmt::format("  flush       background fdatasync every {} written (--flush-every){}\n",
                     bytes(cfg.at("flush_every_bytes")),
                     c.contains("raw_write") && c.at("raw_write").value("available", false) ? ", raw baseline alike"
                                                                                            : "");
  if (cfg.at("compress").get<std::string>() != "none" && cfg.value("compress_pool", "zstd") == "zstd")
    o += fmt::format(
        "  zstd        zstd's own pool: {} worker(s) per rank; job size {}: {} worker(s) can be busy per chunk\n",
        cfg.at("compress_threads_per_rank").get<int>(), bytes(cfg.at("zstd_job_bytes")),
        cfg.at("zstd_workers_busy_per_chunk").get<int>());
  else if (cfg.at("compress").get<std::string>() != "none")
    o += fmt::format(
        "  zstd        ioprobe's own threads (not zstd's pool): {} per rank, one zstd context each, one frame "
        "per {} piece\n",
        cfg.at("compress_threads_per_rank").get<int>(), bytes(cfg.value("frame_bytes", json(0))));
  if (st.value("content", "tensors") != "tensors")
    o += fmt::format("  data        {} (--data {}): not training state; for compression tests\n",
                     st.at("content").get<std::string>() == "text" ? "text-like bytes"
                                                                   : "random bytes (incompressible)",
                     st.at("content").get<std::string>());
  // Older documents (before --huge-pages) carry neither key: nothing is said then.
  if (cfg.contains("huge_pages")) {
    if (cfg.at("huge_pages").get<bool>())
      o += fmt::format(
          "  memory      transparent huge pages advised for state and I/O buffers; state on huge pages: {} of {} "
          "(measured)\n",
          bytes(st.value("resident_huge_page_bytes", json(0))), bytes(st.at("resident_bytes")));
    else
      o +=
          "  memory      4 KiB pages for the save (--huge-pages false): O_DIRECT requests may be split at the device's "
          "segment limit; the raw baseline keeps huge pages\n";
  }
  if (st.at("resident_cyclic").get<bool>())
    o += fmt::format("  state       larger than the memory budget: {} resident, read cyclically\n",
                     bytes(st.at("resident_bytes")));
  // A save that did not complete claims no rate, ratio or size on disk (report/checkpoint_json.cpp
  // writes those as null); only the work it did is shown.
  const bool ok = sv.at("ok").get<bool>();
  const json& ph = sv.at("phases_max_over_ranks_s");
  // A save whose read-back failed (a checksum mismatch, an undecodable chunk, a read error) is a
  // failed save: its rates are shown marked as such, and nothing is derived from them.
  const json& rs = c.value("restore", json::object());
  const bool verify_failed = ok && rs.contains("ok") && !rs.at("ok").get<bool>() && !rs.value("interrupted", false);
  if (ok) {
    o += verify_failed ? "\nsave FAILED VERIFICATION: its read-back failed (RESTORE FAILED below); the rates below are "
                         "of a failed save, not a result\n"
                       : "\nsave\n";
    // Within 0.5% is no saving to claim, and more than 0.5% over is a growth: chance matches in
    // incompressible data, or chunks so small that their index entries (48 B each,
    // shard_format.hpp) and zstd frame headers cancel the saving.
    uint64_t chunks = 0;
    for (const auto& r : sv.value("ranks", json::array())) chunks += r.value("chunks_total", uint64_t{0});
    const double logical = sv.at("logical_bytes").get<double>();
    std::string why;
    const double ratio = sv.at("ratio").get<double>();
    if (cfg.at("compress").get<std::string>() != "none" && ratio < 1.005) {
      const std::string what = ratio < 0.995
                                   ? fmt::format(" -- larger than the state ({:.1f}% more)", (1 / ratio - 1) * 100)
                                   : std::string(" -- no saving (within 0.5%)");
      why = logical > 0 && 48.0 * static_cast<double>(chunks) > 0.005 * logical
                ? fmt::format("{}: {} chunks of {} each add a 48 B index entry and a zstd frame header; use a larger "
                              "--chunk-size",
                              what, chunks, bytes(cfg.at("chunk_bytes")))
                : what + ": " + no_saving_cause(cfg.at("compress").get<std::string>(), st.value("content", "tensors"));
    }
    o += fmt::format("  logical {}  on disk {}  ratio {:.3f}x{}\n", bytes(sv.at("logical_bytes")),
                     bytes(sv.at("bytes_on_disk")), sv.at("ratio").get<double>(), why);
    if (sv.contains("device_io"))
      o += "  device I/O  " + device_io_summary(sv.at("device_io"), "on disk") +
           (sv.at("device_io").contains("scope") ? " [" + sv.at("device_io").value("scope", "") + "]" : "") + "\n";
  } else {
    o += fmt::format("\nsave {} -- no throughput, ratio or size on disk is claimed\n",
                     sv.value("interrupted", false) ? "INTERRUPTED" : "FAILED");
    uint64_t chunks_done = 0, chunks_total = 0;
    for (const auto& r : sv.value("ranks", json::array())) {
      chunks_done += r.value("chunks_done", uint64_t{0});
      chunks_total += r.value("chunks_total", uint64_t{0});
    }
    if (chunks_total == 0)  // no rank started writing (stopped while the state was generated or probed)
      o += "  completed work: none: the save had not started\n";
    else
      o += fmt::format("  completed work: {} of {} chunks ({} of logical state); {} written to the files before the "
                       "stop, 0 B durable ({}, temporary files removed)\n",
                       format_count(chunks_done), format_count(chunks_total), bytes(sv.at("logical_bytes")),
                       bytes(sv.at("written_bytes")), sv.at("durability").get<std::string>());
  }
  o += fmt::format("  phases (max over ranks, overlapping): stage {}  compress {}  write wait {}  fsync {}\n",
                   secs(ph.at("stage")), secs(ph.at("compress")), secs(ph.at("write_wait")), secs(ph.at("fsync")));
  // Without fsync the save ends when its files are published in the page cache: that time is
  // not a time to durable, and says so (the JSON keeps the key, with durable = false).
  const bool durable = sv.value("durable", true);
  o += fmt::format("  time to staged {}  ranks done {}  publish {}  {} {}\n",
                   sv.contains("async") ? secs(sv.at("time_to_staged_s"))
                                        : std::string(durable || !ok ? "- (sync: training blocked until durable)"
                                                                     : "- (sync: training blocked until published)"),
                   secs(sv.at("ranks_done_s")), secs(sv.at("publish_s")),
                   durable || !ok ? "time to durable" : "time to published (NOT durable: no fsync)",
                   ok ? secs(sv.at("time_to_durable_s")) : std::string("-"));
  for (const auto& r : sv.at("ranks")) {
    if (ok)
      o += fmt::format("  rank {:>4}  {}  {}  {}\n", r.at("rank").get<int>(), bytes(r.at("logical_bytes")),
                       secs(r.at("duration_s")), rate(r.at("write_bytes_per_s")));
    else
      o += fmt::format("  rank {:>4}  {} chunk(s) of {} done  {} reached the kernel  elapsed {}\n",
                       r.at("rank").get<int>(), r.value("chunks_done", 0), r.value("chunks_total", 0),
                       bytes(r.value("written_bytes", json(0))), secs(r.at("duration_s")));
  }
  if (verify_failed) {
    o += fmt::format("  duration (max over ranks) {}  throughput (min over ranks) {} of the FAILED save\n",
                     secs(sv.at("duration_max_s")), rate(sv.at("throughput_min_rank_bytes_per_s")));
    o += fmt::format("  aggregate write {} of logical state of a save that FAILED VERIFICATION: not a result, do not "
                     "size storage on it\n",
                     rate(sv.at("write_bytes_per_s")));
  } else if (ok) {
    o += fmt::format("  duration (max over ranks) {}  throughput (min over ranks) {}\n", secs(sv.at("duration_max_s")),
                     rate(sv.at("throughput_min_rank_bytes_per_s")));
    o += fmt::format("  aggregate write {} of logical state{}\n", rate(sv.at("write_bytes_per_s")),
                     sv.at("durable").get<bool>() ? " (to durable)"
                                                  : " -- NOT DURABLE (page cache), do not size storage on it");
  } else {
    o += fmt::format("  elapsed (max over ranks) {}\n", secs(sv.at("duration_max_s")));
  }
  if (sv.contains("compression")) {
    const json& z = sv.at("compression");
    o += fmt::format(
        "  compression workers busy (measured: their CPU time in zstd / wall): {:.2f} of {} per rank on average; "
        "{} used{}; checksums (xxh3 of each piece and frame) {:.3f} s of their CPU (max over ranks)\n",
        z.at("workers_busy_mean_per_rank").get<double>(), z.at("workers_per_rank").get<int>(),
        z.at("workers_used_min_over_ranks").get<int>(),
        z.at("workers_per_rank").get<int>() == 0 ? " (compressing in the rank's own thread)" : "",
        z.value("checksum_cpu_s_max_over_ranks", 0.0));
  }
  o += fmt::format("  CPU user {:.2f} s + sys {:.2f} s over {:.2f} s wall = {:.2f} cores busy\n",
                   sv.at("user_cpu_s").get<double>(), sv.at("sys_cpu_s").get<double>(),
                   sv.at("ranks_done_s").get<double>(), sv.at("cpu_per_wall").get<double>());
  if (sv.contains("async")) {
    const json& a = sv.at("async");
    const int steps = a.at("steps_during_persistence").get<int>();
    o += fmt::format(
        "  async: training blocked {}; {} step{} ran during persistence, mean {:.3f} ms vs {:.3f} ms idle ({:+.1f}%)\n",
        secs(a.at("training_blocked_s")), steps, steps == 1 ? "" : "s",
        a.at("step_mean_during_persistence_s").get<double>() * 1e3, a.at("step_baseline_s").get<double>() * 1e3,
        a.at("step_slowdown").get<double>() * 100);
  }
  if (sv.contains("failure")) o += "  FAILED: " + sv.at("failure").get<std::string>() + "\n";
  const json& rw = c.value("raw_write", json::object());
  const json& cmp = c.value("comparison", json::object());
  if (!rw.value("available", rw.contains("write_bytes_per_s")))
    o += "\nraw sequential write: not measured: " + rw.value("reason", std::string("--raw-baseline off")) + "\n";
  if (rw.value("available", rw.contains("write_bytes_per_s"))) {
    std::string runs;
    for (const auto& v : rw.value("runs_bytes_per_s", json::array()))
      runs += fmt::format("{}{:.1f}", runs.empty() ? "" : ", ", v.get<double>() / 1e6);
    o += fmt::format("\nraw sequential write, same target, same run: {} in {} = {} ({}, fsync{})\n",
                     bytes(rw.at("bytes")), secs(rw.at("duration_max_s")), rate(rw.at("write_bytes_per_s")),
                     rw.at("direct").get<bool>() ? "O_DIRECT" : "buffered",
                     runs.empty() ? "" : "; best of runs before/after the save: " + runs + " MB/s");
    if (rw.contains("after_save_skipped"))
      o += "  the run after the save did not run: " + rw.at("after_save_skipped").get<std::string>() + "\n";
  }
  if (verify_failed) o += "  checkpoint / raw: not claimed: the save failed verification\n";
  else if (!cmp.value("available", cmp.contains("checkpoint_over_raw") && cmp["checkpoint_over_raw"].is_number()))
    o += "  checkpoint / raw: not available: " + cmp.value("reason", std::string("no raw write measured")) + "\n";
  else {
    o += fmt::format("  checkpoint / raw = {:.3f}\n", cmp.at("checkpoint_over_raw").get<double>());
    if (cmp.contains("ratio_note")) o += "  note: " + cmp.at("ratio_note").get<std::string>() + "\n";
    if (cmp.contains("cpu_limit_bytes_per_s"))
      o += fmt::format("  limits: write x ratio {}; {} core(s) x zstd {} = {}  -> {}-bound\n",
                       rate(cmp.at("write_limit_bytes_per_s")), cmp.at("cores").get<int>(),
                       rate(cmp.at("zstd_single_thread_bytes_per_s")), rate(cmp.at("cpu_limit_bytes_per_s")),
                       cmp.at("bound").get<std::string>());
    if (cmp.contains("zstd_multithread_in_memory_bytes_per_s"))
      // The ratio to zstd's pool only where the save used zstd's pool: with ioprobe's threads the
      // measured-limit line below compares with the pool the save used.
      o += fmt::format("  in memory, no I/O, {} core(s): zstd's own pool {}{}{}\n", cmp.at("cores").get<int>(),
                       rate(cmp.at("zstd_multithread_in_memory_bytes_per_s")),
                       cmp.contains("ioprobe_pool_in_memory_bytes_per_s")
                           ? ", ioprobe's threads " + rate(cmp.at("ioprobe_pool_in_memory_bytes_per_s")) +
                                 " (this save used " + cmp.value("compress_pool", std::string("ioprobe")) + "'s)"
                           : std::string(),
                       cmp.value("compress_pool", std::string("ioprobe")) == "zstd"
                           ? fmt::format("; checkpoint / zstd's pool = {:.3f}",
                                         cmp.at("checkpoint_over_zstd_multithread").get<double>())
                           : std::string());
    if (cmp.contains("checkpoint_over_limit"))
      o += fmt::format(
          "  checkpoint / limit = {:.3f} ({} ioprobe's design target of 0.90: what a FastPersist-style writer "
          "should reach here)\n",
          cmp.at("checkpoint_over_limit").get<double>(),
          cmp.at("checkpoint_over_limit").get<double>() >= 0.9 ? "at or above" : "below");
    if (cmp.contains("checkpoint_over_measured_limit"))
      o += fmt::format(
          "  checkpoint / measured limit = {:.3f} (min(write x ratio, the pool's measured {} core(s) {} = {:.2f}x "
          "one core's speed))\n",
          cmp.at("checkpoint_over_measured_limit").get<double>(), cmp.at("cores").get<int>(),
          rate(cmp.at("measured_cpu_limit_bytes_per_s")), cmp.at("cores_speedup_measured").get<double>());
    if (cmp.contains("cores_speedup_measured") &&
        cmp.at("cores_speedup_measured").get<double>() > 1.05 * cmp.at("cores").get<int>())
      o += fmt::format(
          "  note: a speedup above {} core(s) means the one-core probe ran slower than the cores did together: "
          "this host's CPU speed varies between probes (each best of 3), so take both limits as approximate\n",
          cmp.at("cores").get<int>());
  }
  if (c.contains("restore")) {
    const json& r = c.at("restore");
    if (r.value("ok", true) || r.value("interrupted", false))
      o += fmt::format("\nrestore, {}: {} verified in {} = {}; min over ranks {}\n", r.at("cache").get<std::string>(),
                       bytes(r.at("logical_bytes")), secs(r.at("duration_max_s")), rate(r.at("restore_bytes_per_s")),
                       rate(r.at("throughput_min_rank_bytes_per_s")));
    else  // a failed read-back has no rate to claim
      o += fmt::format("\nrestore, {}: FAILED after {} verified in {}; no rate is claimed\n",
                       r.at("cache").get<std::string>(), bytes(r.at("logical_bytes")), secs(r.at("duration_max_s")));
    const int decoders = r.value("decode_threads_per_rank", 0);
    // Why no decoders ran: the one reason that applied to this run's shards.
    const std::string pool = cfg.value("compress_pool", std::string("none"));
    const std::string why = cfg.at("compress").get<std::string>() == "none" ? "uncompressed: nothing to decode"
                            : pool == "zstd" ? "one zstd frame per chunk (--compress-pool zstd)"
                                             : "--restore-threads 0";
    o += decoders > 0
             ? fmt::format("  {} decompression worker(s) per rank (--restore-threads), reading on the rank's thread\n",
                           decoders)
             : fmt::format("  read{} on each rank's thread ({})\n",
                           cfg.at("compress").get<std::string>() == "none" ? "" : " and decoded", why);
    uint64_t verified = 0, total = 0;
    for (const auto& x : r.value("ranks", json::array())) {
      verified += x.value("chunks_verified", uint64_t{0});
      total += x.value("chunks_total", uint64_t{0});
    }
    if (r.value("interrupted", false))
      o += fmt::format("  INTERRUPTED: {} of {} chunks verified; the figures cover those chunks only\n",
                       format_count(verified), format_count(total));
    if (r.contains("error")) o += "  RESTORE FAILED: " + r.at("error").get<std::string>() + "\n";
    if (r.contains("device_io")) o += "  device I/O  " + device_io_summary(r.at("device_io"), "shard bytes") + "\n";
  }
  o += render_checkpoint_hosts_text(doc);  // across hosts only
  for (const auto& w : doc.value("warnings", json::array())) o += "warning: " + w.get<std::string>() + "\n";
  return o;
}

}  // namespace ioprobe
