#include "checkpoint/cluster_parts.hpp"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"

namespace ioprobe::checkpoint {

RawWriteResult merge_raw_writes(const std::vector<RawWriteResult>& runs) {
  RawWriteResult m;
  m.direct = !runs.empty();
  for (const RawWriteResult& r : runs) {
    m.bytes += r.bytes;
    m.rank_ns.insert(m.rank_ns.end(), r.rank_ns.begin(), r.rank_ns.end());
    m.max_ns = std::max(m.max_ns, r.max_ns);
    m.direct = m.direct && r.direct;
    m.interrupted = m.interrupted || r.interrupted;
  }
  return m;
}

std::vector<int> restore_sources(const std::vector<int>& host_of) {
  const int n = static_cast<int>(host_of.size());
  std::vector<int> src(static_cast<size_t>(n));
  if (n == 0) return src;
  const std::set<int> hosts(host_of.begin(), host_of.end());
  const int first_host = static_cast<int>(std::count(host_of.begin(), host_of.end(), host_of[0]));
  const int shift = hosts.size() > 1 ? first_host % n : (n > 1 ? 1 : 0);
  for (int p = 0; p < n; ++p) src[static_cast<size_t>(p)] = (p + shift) % n;
  return src;
}

CheckpointCluster merge_checkpoint_parts(std::vector<CheckpointPart> parts) {
  CheckpointCluster c;
  std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.mpi_rank < b.mpi_rank; });
  c.mpi_ranks = static_cast<int>(parts.size());
  c.save.ok = !parts.empty();
  std::map<int, CheckpointHostRow> rows;
  std::map<int, std::string> rank_host;  // global rank -> host
  struct RestoreRow {
    int shard;
    RankRestoreResult r;
    std::string reader, writer;
  };
  std::vector<RestoreRow> restore_rows;
  bool any_restore = false, restore_ok = true, restore_interrupted = false;
  int64_t restore_wall = 0;
  for (CheckpointPart& p : parts) {
    if (p.save.ranks.empty())  // interrupted before its save started: its ranks wrote nothing
      for (const RankState& st : p.state) {
        RankSaveResult r;
        r.rank = st.rank;
        r.interrupted = true;
        p.save.ranks.push_back(r);
      }
    if (p.save.ranks.size() != p.state.size())
      throw Error(fmt::format("process {} on host {} sent {} save rows for {} ranks", p.mpi_rank, p.hostname,
                              p.save.ranks.size(), p.state.size()),
                  kExitFailure);
    CheckpointHostRow& h = rows[p.host_index];
    if (h.mpi_ranks.empty()) {
      h.hostname = p.hostname;
      h.host_index = p.host_index;
    }
    h.mpi_ranks.push_back(p.mpi_rank);
    for (size_t i = 0; i < p.state.size(); ++i) {
      const int g = p.state[i].rank;
      if (!rank_host.emplace(g, p.hostname).second)
        throw Error(fmt::format("rank {} was written by two processes (the second: process {} on host {}): the "
                                "processes numbered their ranks differently",
                                g, p.mpi_rank, p.hostname),
                    kExitFailure);
      h.ckpt_ranks.push_back(g);
      const uint64_t disk = i < p.file_bytes.size() ? p.file_bytes[i] : p.save.ranks[i].stored_bytes;
      h.save.add_rank(p.save.ranks[i], disk, p.state[i].bytes > 0);
      h.save_file_bytes += i < p.file_bytes.size() ? p.file_bytes[i] : 0;
    }
    h.durable_ns = std::max(h.durable_ns, p.save.durable_ns);
    // The cluster's save: ranks concatenated (processes number their ranks in MPI rank order),
    // every time the slowest process's, CPU summed.
    c.state.insert(c.state.end(), p.state.begin(), p.state.end());
    c.save.ranks.insert(c.save.ranks.end(), p.save.ranks.begin(), p.save.ranks.end());
    for (size_t i = 0; i < p.state.size(); ++i) c.file_bytes.push_back(i < p.file_bytes.size() ? p.file_bytes[i] : 0);
    c.save.ok = c.save.ok && p.save.ok;
    c.save.interrupted = c.save.interrupted || p.save.interrupted;
    c.save.staged_ns = std::max(c.save.staged_ns, p.save.staged_ns);
    c.save.ranks_done_ns = std::max(c.save.ranks_done_ns, p.save.ranks_done_ns);
    c.save.publish_ns = std::max(c.save.publish_ns, p.save.publish_ns);
    c.save.durable_ns = std::max(c.save.durable_ns, p.save.durable_ns);
    c.save.user_cpu_s += p.save.user_cpu_s;
    c.save.sys_cpu_s += p.save.sys_cpu_s;
    c.save.final_paths.insert(c.save.final_paths.end(), p.save.final_paths.begin(), p.save.final_paths.end());
    if (c.save.failed_rank < 0 && p.save.failed_rank >= 0) {
      c.save.failed_rank = p.save.failed_rank;
      c.save.failure = p.save.failure;
      c.save.failure.op = fmt::format("host {} (process {}): {}", p.hostname, p.mpi_rank, p.save.failure.op);
    }
    if (p.restore) {
      any_restore = true;
      restore_ok = restore_ok && p.restore->ok;
      restore_interrupted = restore_interrupted || p.restore->interrupted;
      restore_wall = std::max(restore_wall, p.restore->wall_ns);
      h.restored = true;
      for (size_t i = 0; i < p.restore->ranks.size(); ++i) {
        const int shard = i < p.restore_shards.size() ? p.restore_shards[i] : -1;
        h.restore.add_rank(p.restore->ranks[i], true);
        restore_rows.push_back({shard, p.restore->ranks[i], p.hostname, p.restore_writer_host});
      }
      if (!p.restore_writer_host.empty()) h.restored_from.push_back(p.restore_writer_host);
      if (p.restore_device_io && !h.restore_device_io) h.restore_device_io = p.restore_device_io;  // the host's first
    }
  }
  int expect = 0;
  for (const auto& [g, host] : rank_host) {
    if (g != expect)
      throw Error(fmt::format("the processes wrote ranks up to {} but none wrote rank {}: the processes numbered "
                              "their ranks differently",
                              rank_host.rbegin()->first, expect),
                  kExitFailure);
    ++expect;
    c.rank_host.push_back(host);
  }
  std::sort(c.state.begin(), c.state.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
  if (any_restore) {
    std::stable_sort(restore_rows.begin(), restore_rows.end(),
                     [](const auto& a, const auto& b) { return a.shard < b.shard; });
    RestoreResult r;
    r.ok = restore_ok;
    r.interrupted = restore_interrupted;
    r.wall_ns = restore_wall;
    for (auto& row : restore_rows) {
      r.ranks.push_back(row.r);
      c.restore_shards.push_back(row.shard);
      c.restore_reader_host.push_back(row.reader);
      c.restore_writer_host.push_back(row.writer);
      if (row.reader != row.writer) ++c.restores_from_other_host;
    }
    c.restore = std::move(r);
  }
  // Restore accounting: each host's shard files against its devices, the hosts' devices added.
  for (size_t i = 0; i < c.restore_shards.size(); ++i) {
    const int g = c.restore_shards[i];
    const uint64_t bytes = g >= 0 && static_cast<size_t>(g) < c.file_bytes.size() ? c.file_bytes[static_cast<size_t>(g)]
                                                                                  : 0;
    c.restore_file_bytes += bytes;
    for (auto& [idx, h] : rows)
      if (h.hostname == c.restore_reader_host[i]) h.restore_file_bytes += bytes;
  }
  // Save accounting: each host's published files against its devices over the save window.
  std::map<int, std::vector<DeviceIo>> save_io;  // host index -> its processes' accounting
  for (const auto& p : parts)
    if (p.save_device_io) save_io[p.host_index].push_back(*p.save_device_io);
  // The job's accounting: each host's devices once, named by host, the hosts added.
  std::vector<std::pair<std::string, DeviceIo>> save_hosts, restore_hosts;
  for (auto& [idx, h] : rows) {
    const auto it = save_io.find(idx);
    if (it == save_io.end()) continue;
    h.save_device_io = host_device_io(it->second);
    save_hosts.emplace_back(h.hostname, *h.save_device_io);
  }
  for (const auto& [idx, h] : rows)
    if (h.restore_device_io) restore_hosts.emplace_back(h.hostname, *h.restore_device_io);
  if (!save_hosts.empty()) c.save_device_io = sum_hosts_device_io(save_hosts);
  if (!restore_hosts.empty()) c.restore_device_io = sum_hosts_device_io(restore_hosts);
  std::map<std::string, int> names;
  for (auto& [idx, h] : rows) {
    std::sort(h.restored_from.begin(), h.restored_from.end());
    h.restored_from.erase(std::unique(h.restored_from.begin(), h.restored_from.end()), h.restored_from.end());
    ++names[h.hostname];
    c.hosts.push_back(std::move(h));
  }
  for (const auto& [name, n] : names)
    if (n > 1)
      c.warnings.push_back(fmt::format("{} hosts report the hostname '{}': MPI sees separate shared-memory domains; "
                                       "check the host list",
                                       n, name));
  if (c.restore && c.hosts.size() > 1 && c.restores_from_other_host < static_cast<int>(c.restore->ranks.size()))
    c.warnings.push_back(fmt::format("{} of {} shards were restored on the host that wrote them (its page cache was "
                                     "evicted, but a client cache may still serve them)",
                                     c.restore->ranks.size() - static_cast<size_t>(c.restores_from_other_host),
                                     c.restore->ranks.size()));
  return c;
}

}  // namespace ioprobe::checkpoint
