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
using nlohmann::json;  // the raw write exchange

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

CheckpointClusterSection checkpoint_cluster_section(const CheckpointCluster& c, const std::string& launcher,
                                                    const std::string& dir_placement,
                                                    const std::string& restore_placement) {
  checkpoint::SaveTotals tot;
  for (const auto& h : c.hosts) tot.merge(h.save);
  CheckpointClusterSection s;
  s.launcher = launcher;
  s.hosts = c.hosts.size();
  s.mpi_ranks = c.mpi_ranks;
  s.ckpt_ranks = c.state.size();
  s.dir_placement = dir_placement;
  s.restore_placement = restore_placement;
  s.merge =
      "every process starts its save after a common barrier and times its ranks on its own monotonic clock; "
      "duration = max over ranks (time to durable), throughput = total bytes / that duration (MLPerf Storage); the "
      "raw baseline runs on every host at once and merges the same way";
  s.save_bytes = tot.logical_bytes;
  if (c.save.ok) {
    s.save_duration_max_s = sec(c.save.durable_ns);
    s.save_bytes_per_s = checkpoint::rate_bytes_per_s(tot.logical_bytes, c.save.durable_ns);
  }
  if (c.restore) s.restores_from_other_host = c.restores_from_other_host;
  return s;
}

std::vector<CheckpointHostSection> checkpoint_host_sections(const CheckpointCluster& c) {
  std::vector<CheckpointHostSection> rows;
  for (const auto& h : c.hosts) {
    CheckpointHostSection r;
    r.hostname = h.hostname;
    r.host_index = h.host_index;
    r.mpi_ranks = h.mpi_ranks;
    r.ckpt_ranks = h.ckpt_ranks;
    r.save_bytes = h.save.logical_bytes;
    r.save_duration_max_s = sec(h.save.duration_max_ns);
    r.time_to_durable_s = sec(h.durable_ns);
    r.save_bytes_per_s = checkpoint::rate_bytes_per_s(h.save.logical_bytes, h.durable_ns);
    r.min_rank_bytes_per_s = h.save.min_rank_bytes_per_s;
    // The host's devices over the save window against the bytes on disk of the files it published.
    if (h.save_device_io) r.save_device_io = device_io_section(*h.save_device_io, DeviceRef::kWrite, h.save_file_bytes);
    if (h.restored) {
      CheckpointHostRestore x;
      x.bytes = h.restore.logical_bytes;
      x.duration_max_s = sec(h.restore.duration_max_ns);
      x.bytes_per_s = h.restore.bytes_per_s();
      x.restored_from = h.restored_from;
      if (!h.restore.first_error.empty()) x.error = error_line(h.restore.first_error);
      // The host's devices over the restore window against the shard files it read.
      DeviceIo io;
      if (h.restore_device_io) io = *h.restore_device_io;
      else io.reason = "not measured on this host (its process sent no restore accounting)";
      x.device_io = device_io_section(io, DeviceRef::kRead, h.restore_file_bytes);
      x.served_from = bytes_source(io, h.restore_file_bytes);
      r.restore = std::move(x);
    }
    rows.push_back(std::move(r));
  }
  return rows;
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

std::string render_checkpoint_hosts_text(const std::optional<CheckpointClusterSection>& cluster,
                                         const std::vector<CheckpointHostSection>& hosts) {
  if (!cluster) return "";
  const CheckpointClusterSection& c = *cluster;
  std::string o = "\nHosts\n";
  o += fmt::format("  {:<14} {} host(s), {} MPI rank(s), {} checkpoint rank(s) (one shard each); started by {}\n",
                   "cluster", c.hosts, c.mpi_ranks, c.ckpt_ranks, c.launcher);
  o += fmt::format("  {:<14} {}\n", "--dir", c.dir_placement);
  if (c.save_bytes_per_s)
    o += fmt::format("  {:<14} {} in {:.3f} s (the slowest rank's time to durable) = {:.2f} MB/s (total bytes / max "
                     "over ranks, MLPerf Storage's rule)\n",
                     "save", format_bytes(c.save_bytes), c.save_duration_max_s.value_or(0), *c.save_bytes_per_s / 1e6);
  if (c.restores_from_other_host)
    o += fmt::format("  {:<14} {}; {} shard(s) read on a host other than the one that wrote them\n", "restore",
                     c.restore_placement, *c.restores_from_other_host);
  o += fmt::format("  {:<16} {:>5} {:>7} {:>12} {:>10} {:>12} {:>14} {:>14} {:>22}  {}\n", "host", "MPI", "shards",
                   "saved MB", "durable", "save MB/s", "min rank MB/s", "restore MB/s", "restore device read",
                   "restored from");
  std::string save_lines;  // each host's devices over the save window
  for (const auto& h : hosts) {
    std::string from;
    std::string dev = "-";  // device bytes read over the restore window, and where the shard bytes came from
    if (const auto& x = h.restore) {
      for (const auto& f : x->restored_from) from += (from.empty() ? "" : ", ") + f;
      dev = x->device_io.io.source == "none"
                ? std::string("not measured")
                : fmt::format("{:.2f} MB ({})", static_cast<double>(x->device_io.io.bytes_read) / 1e6, x->served_from);
    }
    o += fmt::format("  {:<16} {:>5} {:>7} {:>12.2f} {:>9.3f}s {:>12.2f} {:>14.2f} {:>14} {:>22}  {}\n", h.hostname,
                     h.mpi_ranks.size(), h.ckpt_ranks.size(), static_cast<double>(h.save_bytes) / 1e6,
                     h.time_to_durable_s, h.save_bytes_per_s / 1e6, h.min_rank_bytes_per_s / 1e6,
                     h.restore ? fmt::format("{:.2f}", h.restore->bytes_per_s / 1e6) : std::string("-"), dev,
                     from.empty() ? "-" : from);
    if (h.save_device_io)
      save_lines += fmt::format("  {:<16} save device I/O {}\n", h.hostname,
                                device_io_summary(*h.save_device_io, "on disk"));
  }
  o += save_lines;
  o += "  (MB/s = 10^6 B/s; durable: the host's slowest process from the common start barrier to its shards "
       "fsynced and published; restore device read: the host's devices over the restore window, from "
       "/proc/diskstats, and whether the shard bytes came from the device, a cache (page cache) or both (mixed))\n";
  return o;
}

}  // namespace ioprobe
