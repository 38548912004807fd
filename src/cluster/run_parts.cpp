#include "cluster/run_parts.hpp"

#include <algorithm>

#include "cluster/run_partial.hpp"
#include "core/json_field.hpp"
#include "loader/loader_result_json.hpp"
#include "topology/device_io_json.hpp"

namespace ioprobe::cluster {

void to_json(nlohmann::json& j, const ProcessPart& p) {
  j = {{"rank", p.rank},
       {"host_index", p.host_index},
       {"hostname", p.hostname},
       {"gpu_ranks", p.gpu_ranks},
       {"first_rank", p.first_rank},
       {"start_skew_s", p.start_skew_s},
       {"step_exchanges", p.step_exchanges},
       {"exchange_s", p.exchange_s},
       {"init_s", p.init_s},
       {"setup_s", p.setup_s},
       {"finish_wait_s", p.finish_wait_s},
       {"cpus_allowed", p.cpus_allowed},
       {"memory_bytes", p.memory_bytes},
       {"cgroup_memory_limit_bytes", p.cgroup_memory_limit_bytes},
       {"target", p.target},
       {"result", loader_result_to_json(p.result)},
       {"device_io", p.device_io},
       {"device_io_epochs", p.device_io_epochs}};
}

void from_json(const nlohmann::json& j, ProcessPart& p) {
  const std::string w = "part";
  p.rank = json_field<int>(j, "rank", w);
  p.host_index = json_field<int>(j, "host_index", w);
  p.hostname = json_field<std::string>(j, "hostname", w);
  p.gpu_ranks = json_field<uint32_t>(j, "gpu_ranks", w);
  p.first_rank = json_field<uint32_t>(j, "first_rank", w);
  p.start_skew_s = json_field<double>(j, "start_skew_s", w);
  p.step_exchanges = json_field<uint64_t>(j, "step_exchanges", w);
  p.exchange_s = json_field<double>(j, "exchange_s", w);
  p.init_s = json_field<double>(j, "init_s", w);
  p.setup_s = json_field<double>(j, "setup_s", w);
  p.finish_wait_s = json_field<double>(j, "finish_wait_s", w);
  p.cpus_allowed = json_field<int>(j, "cpus_allowed", w);
  p.memory_bytes = json_field<uint64_t>(j, "memory_bytes", w);
  p.cgroup_memory_limit_bytes = json_field<uint64_t>(j, "cgroup_memory_limit_bytes", w);
  p.target = json_at(j, "target", w);
  p.result = loader_result_from_json(json_at(j, "result", w), json_path(w, "result"));
  p.device_io = device_io_from_wire(json_at(j, "device_io", w), json_path(w, "device_io"));
  const nlohmann::json& epochs = json_array_at(j, "device_io_epochs", w);
  for (size_t i = 0; i < epochs.size(); ++i)
    p.device_io_epochs.push_back(device_io_from_wire(epochs[i], json_path(json_path(w, "device_io_epochs"), i)));
}

ClusterRun merge_parts(std::vector<ProcessPart> parts) {
  std::sort(parts.begin(), parts.end(), [](const ProcessPart& a, const ProcessPart& b) { return a.rank < b.rank; });
  RunPartial all;
  for (const ProcessPart& p : parts) all.merge(partial_of(p));
  return finish_partial(std::move(all));
}

}  // namespace ioprobe::cluster
