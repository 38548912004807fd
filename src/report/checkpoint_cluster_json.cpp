#include "report/checkpoint_cluster_json.hpp"

#include "report/device_io_report.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/error_record.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace ioprobe {

using checkpoint::CheckpointCluster;
using checkpoint::CheckpointPart;
using nlohmann::json;

namespace {

double sec(int64_t ns) { return static_cast<double>(ns) / 1e9; }

}  // namespace

std::string encode_raw_write(const checkpoint::RawWriteResult& r) {
  return json{r.bytes, r.rank_ns, r.max_ns, r.direct, r.interrupted}.dump();
}

checkpoint::RawWriteResult decode_raw_write(const std::string& text) {
  checkpoint::RawWriteResult r;
  try {
    const json j = json::parse(text);
    j.at(0).get_to(r.bytes), j.at(1).get_to(r.rank_ns), j.at(2).get_to(r.max_ns), j.at(3).get_to(r.direct);
    j.at(4).get_to(r.interrupted);
  } catch (const std::exception& e) {
    throw Error(fmt::format("a process sent a raw write result this ioprobe cannot read ({})", e.what()), kExitFailure);
  }
  return r;
}

json checkpoint_cluster_json(const CheckpointCluster& c, const std::string& launcher, const std::string& dir_placement,
                             const std::string& restore_placement) {
  checkpoint::SaveTotals tot;
  for (const auto& h : c.hosts) tot.merge(h.save);
  const bool ok = c.save.ok;
  json j = {{"launcher", launcher},
            {"hosts", c.hosts.size()},
            {"mpi_ranks", c.mpi_ranks},
            {"ckpt_ranks", c.state.size()},
            {"dir_placement", dir_placement},
            {"restore_placement", restore_placement},
            {"merge", "every process starts its save after a common barrier and times its ranks on its own monotonic "
                      "clock; duration = max over ranks (time to durable), throughput = total bytes / that duration "
                      "(MLPerf Storage); the raw baseline runs on every host at once and merges the same way"},
            {"save_bytes", tot.logical_bytes},
            {"save_duration_max_s", ok ? json(sec(c.save.durable_ns)) : json(nullptr)},
            {"save_bytes_per_s",
             ok ? json(checkpoint::rate_bytes_per_s(tot.logical_bytes, c.save.durable_ns)) : json(nullptr)}};
  if (c.restore) j["restores_from_other_host"] = c.restores_from_other_host;
  return j;
}

json checkpoint_hosts_json(const CheckpointCluster& c) {
  json a = json::array();
  for (const auto& h : c.hosts) {
    json r = {{"save_bytes", h.save.logical_bytes},
              {"save_duration_max_s", sec(h.save.duration_max_ns)},
              {"time_to_durable_s", sec(h.durable_ns)},
              {"save_bytes_per_s", checkpoint::rate_bytes_per_s(h.save.logical_bytes, h.durable_ns)},
              {"min_rank_bytes_per_s", h.save.min_rank_bytes_per_s}};
    // The host's devices over the save window against the bytes on disk of the files it published.
    if (h.save_device_io) r["save_device_io"] = device_io_json(*h.save_device_io, DeviceRef::kWrite, h.save_file_bytes);
    if (h.restored) {
      r["restore_bytes"] = h.restore.logical_bytes;
      r["restore_duration_max_s"] = sec(h.restore.duration_max_ns);
      r["restore_bytes_per_s"] = h.restore.bytes_per_s();
      r["restored_from"] = h.restored_from;
      if (!h.restore.first_error.empty()) r["restore_error"] = error_line(h.restore.first_error);
      // The host's devices over the restore window against the shard files it read.
      DeviceIo io;
      if (h.restore_device_io) io = *h.restore_device_io;
      else io.reason = "not measured on this host (its process sent no restore accounting)";
      r["restore_device_io"] = device_io_json(io, DeviceRef::kRead, h.restore_file_bytes);
      r["restore_served_from"] = bytes_source(io, h.restore_file_bytes);
    }
    a.push_back({{"hostname", h.hostname},
                 {"host_index", h.host_index},
                 {"mpi_ranks", h.mpi_ranks},
                 {"ckpt_ranks", h.ckpt_ranks},
                 {"results", r}});
  }
  return a;
}

void add_cluster_restore_device_io(CheckpointSection& ck, const CheckpointCluster& c) {
  if (!c.restore || !ck.restore) return;
  DeviceIo io;
  if (c.restore_device_io) io = *c.restore_device_io;
  else io.reason = "no host sent its restore accounting";
  ck.restore->device_io = device_io_section(io, DeviceRef::kRead, c.restore_file_bytes);
  ck.restore->device_io->scope = "every host's devices over the restore window, added";
  ck.restore->served_from = bytes_source(io, c.restore_file_bytes);
}

void add_cluster_save_device_io(CheckpointSection& ck, const CheckpointCluster& c) {
  CheckpointSaveSection& sv = ck.save;
  DeviceIo io;
  if (c.save_device_io) io = *c.save_device_io;
  else io.reason = "not measurable: no host sent its save accounting (no save ran)";
  const uint64_t on_disk = sv.bytes_on_disk.value_or(0);
  const uint64_t logical = sv.logical_bytes;
  sv.device_io = checkpoint_save_device_io(io, on_disk, logical);
  sv.device_io->section.scope = "every host's own devices over the save window, added, each host counted once (the "
                                "processes of a host share its devices)";
}

void annotate_checkpoint_ranks(CheckpointSection& ck, const CheckpointCluster& c) {
  for (auto& row : ck.save.ranks) {
    const int g = row.rank;
    if (g >= 0 && static_cast<size_t>(g) < c.rank_host.size()) row.host = c.rank_host[static_cast<size_t>(g)];
  }
  if (ck.restore) {
    auto& rows = ck.restore->ranks;
    for (size_t i = 0; i < rows.size() && i < c.restore_shards.size(); ++i) {
      rows[i].shard_rank = c.restore_shards[i];
      rows[i].read_on_host = c.restore_reader_host[i];
      rows[i].written_on_host = c.restore_writer_host[i];
    }
  }
}

std::string render_checkpoint_hosts_text(const json& cluster, const json& hosts) {
  if (cluster.is_null() || hosts.is_null()) return "";
  const auto& c = cluster;
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<14} {} host(s), {} MPI rank(s), {} checkpoint rank(s) (one shard each); started by {}\n",
                   "cluster", c.value("hosts", 0), c.value("mpi_ranks", 0), c.value("ckpt_ranks", 0),
                   c.value("launcher", "?"));
  o += fmt::format("  {:<14} {}\n", "--dir", c.value("dir_placement", "?"));
  if (c.contains("save_bytes_per_s") && c["save_bytes_per_s"].is_number())
    o += fmt::format("  {:<14} {} in {:.3f} s (the slowest rank's time to durable) = {:.2f} MB/s (total bytes / max "
                     "over ranks, MLPerf Storage's rule)\n",
                     "save", format_bytes(c.value("save_bytes", 0ULL)), c["save_duration_max_s"].get<double>(),
                     c["save_bytes_per_s"].get<double>() / 1e6);
  if (c.contains("restores_from_other_host"))
    o += fmt::format("  {:<14} {}; {} shard(s) read on a host other than the one that wrote them\n", "restore",
                     c.value("restore_placement", "?"), c.value("restores_from_other_host", 0));
  o += fmt::format("  {:<16} {:>5} {:>7} {:>12} {:>10} {:>12} {:>14} {:>14} {:>22}  {}\n", "host", "MPI", "shards",
                   "saved MB", "durable", "save MB/s", "min rank MB/s", "restore MB/s", "restore device read",
                   "restored from");
  std::string save_lines;  // each host's devices over the save window
  for (const auto& h : hosts) {
    const auto& r = h.at("results");
    std::string from;
    if (r.contains("restored_from"))
      for (const auto& f : r["restored_from"]) from += (from.empty() ? "" : ", ") + f.get<std::string>();
    // Device bytes read over the restore window against the shard bytes, and where they came from.
    std::string dev = "-";
    if (r.contains("restore_device_io")) {
      const auto& io = r["restore_device_io"];
      dev = io.value("source", "none") == "none"
                ? std::string("not measured")
                : fmt::format("{:.2f} MB ({})", static_cast<double>(io.value("bytes_read", 0ULL)) / 1e6,
                              r.value("restore_served_from", "unknown"));
    }
    o += fmt::format("  {:<16} {:>5} {:>7} {:>12.2f} {:>9.3f}s {:>12.2f} {:>14.2f} {:>14} {:>22}  {}\n",
                     h.value("hostname", "?"), h.at("mpi_ranks").size(), h.at("ckpt_ranks").size(),
                     static_cast<double>(r.value("save_bytes", 0ULL)) / 1e6, r.value("time_to_durable_s", 0.0),
                     r.value("save_bytes_per_s", 0.0) / 1e6, r.value("min_rank_bytes_per_s", 0.0) / 1e6,
                     r.contains("restore_bytes_per_s")
                         ? fmt::format("{:.2f}", r["restore_bytes_per_s"].get<double>() / 1e6)
                         : std::string("-"),
                     dev, from.empty() ? "-" : from);
    if (r.contains("save_device_io"))
      save_lines += fmt::format("  {:<16} save device I/O {}\n", h.value("hostname", "?"),
                                device_io_summary(r["save_device_io"], "on disk"));
  }
  o += save_lines;
  o += "  (MB/s = 10^6 B/s; durable: the host's slowest process from the common start barrier to its shards "
       "fsynced and published; restore device read: the host's devices over the restore window, from "
       "/proc/diskstats, and whether the shard bytes came from the device, a cache (page cache) or both (mixed))\n";
  return o;
}

}  // namespace ioprobe
