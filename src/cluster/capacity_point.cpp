#include "cluster/capacity_point.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "loader/loader_result_json.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::cluster {

namespace {
// `n` split over `parts` evenly, the first n % parts one more.
uint32_t share_of(uint32_t n, size_t parts, size_t i) {
  const auto p = static_cast<uint32_t>(parts);
  return n / p + (i < n % p ? 1 : 0);
}
}  // namespace

std::vector<uint32_t> split_gpus(uint32_t gpus, const std::vector<int>& host_of_rank) {
  if (host_of_rank.empty()) throw Error("split_gpus: no ranks", kExitFailure);
  const int hosts = *std::max_element(host_of_rank.begin(), host_of_rank.end()) + 1;
  std::vector<std::vector<size_t>> ranks_of(static_cast<size_t>(std::max(hosts, 0)));
  for (size_t r = 0; r < host_of_rank.size(); ++r) {
    if (host_of_rank[r] < 0)
      throw Error(fmt::format("split_gpus: rank {} has host index {}", r, host_of_rank[r]), kExitFailure);
    ranks_of[static_cast<size_t>(host_of_rank[r])].push_back(r);
  }
  std::vector<uint32_t> out(host_of_rank.size(), 0);
  for (size_t h = 0; h < ranks_of.size(); ++h) {
    if (ranks_of[h].empty()) throw Error(fmt::format("split_gpus: host index {} has no rank", h), kExitFailure);
    const uint32_t host_share = share_of(gpus, ranks_of.size(), h);
    for (size_t k = 0; k < ranks_of[h].size(); ++k) out[ranks_of[h][k]] = share_of(host_share, ranks_of[h].size(), k);
  }
  return out;
}

std::vector<uint32_t> first_gpu_ranks(const std::vector<uint32_t>& split) {
  std::vector<uint32_t> first(split.size(), 0);
  uint32_t sum = 0;
  for (size_t r = 0; r < split.size(); ++r) {
    first[r] = sum;
    sum += split[r];
  }
  return first;
}

void to_json(nlohmann::json& j, const PointPart& p) {
  j = {{"rank", p.rank},
       {"host_index", p.host_index},
       {"hostname", p.hostname},
       {"cpus_allowed", p.cpus_allowed},
       {"point_gpus", p.point_gpus},
       {"gpu_ranks", p.gpu_ranks},
       {"result", loader_result_to_json(p.result)},
       {"device_io", p.device_io}};
}

void from_json(const nlohmann::json& j, PointPart& p) {
  const std::string w = "point part";
  p.rank = json_field<int>(j, "rank", w);
  p.host_index = json_field<int>(j, "host_index", w);
  p.hostname = json_field<std::string>(j, "hostname", w);
  p.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  p.point_gpus = json_field<uint32_t>(j, "point_gpus", w);
  p.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  p.result = loader_result_from_json(json_at(j, "result", w), json_path(w, "result"));
  p.device_io = device_io_from_wire(json_at(j, "device_io", w), json_path(w, "device_io"));
}

PointMerge merge_point_parts(std::vector<PointPart> parts) {
  PointMerge m;
  if (parts.empty()) return m;
  std::sort(parts.begin(), parts.end(), [](const PointPart& a, const PointPart& b) { return a.rank < b.rank; });
  m.gpus = parts.front().point_gpus;
  uint32_t sum = 0;
  std::string odd;
  for (const PointPart& p : parts) {
    if (p.point_gpus != m.gpus)
      odd += fmt::format("{}rank {} on host {} ran {} accelerators", odd.empty() ? "" : ", ", p.rank, p.hostname,
                         p.point_gpus);
    sum += p.gpu_ranks;
  }
  if (!odd.empty())
    throw Error(fmt::format("the processes left the search's common sequence: rank {} ran the point of {} "
                            "accelerators, but {}",
                            parts.front().rank, m.gpus, odd),
                kExitFailure);
  if (sum != m.gpus)
    throw Error(fmt::format("the processes' GPU ranks add up to {}, not to the point's {} accelerators", sum, m.gpus),
                kExitFailure);
  std::map<int, PointHost> hosts;
  for (PointPart& p : parts) {
    PointHost& h = hosts[p.host_index];
    if (h.mpi_ranks.empty()) {
      h.hostname = p.hostname;
      h.host_index = p.host_index;
      h.cpus_allowed = p.cpus_allowed;
    }
    h.mpi_ranks.push_back(p.rank);
    h.gpu_ranks += p.gpu_ranks;
    if (p.result.ranks.empty()) continue;  // a share of 0: nothing measured
    m.merged.merge(p.result);
    h.result.merge(p.result);
  }
  for (auto& [idx, h] : hosts) {
    m.cpus_allowed += h.cpus_allowed;
    m.hosts.push_back(std::move(h));
  }
  return m;
}

}  // namespace ioprobe::cluster
