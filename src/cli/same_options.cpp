#include "cli/same_options.hpp"

#include <set>

#include <fmt/format.h>

#include "comm/comm.hpp"
#include "ingest/catalog.hpp"

namespace ioprobe::cli {

namespace {

// Options that may differ between processes: rank 0 alone writes the document and prints.
const std::set<std::string> kMayDiffer = {"json", "quiet", "help"};

// How long a process waits at the comparison for the others: they arrive right after parsing
// their options, so only a process that never started (or hangs) is waited for this long.
constexpr double kCompareTimeoutS = 300;

std::string value_text(const po::variable_value& v) {
  const boost::any& a = v.value();
  if (const auto* s = boost::any_cast<std::string>(&a)) return *s;
  if (const auto* l = boost::any_cast<std::vector<std::string>>(&a)) {
    std::string out;
    for (const auto& x : *l) out += (out.empty() ? "" : " ") + x;
    return out;
  }
  return "(a value of another type)";
}

// --gpu as its catalog key, so "H100-SXM" on one host and "h100" on another agree.
std::string gpu_key(const std::string& given) {
  try {
    std::string key = accelerator_key(load_catalog(workloads_dir() + "/accelerators.json"), given);
    if (!key.empty()) return key;
  } catch (const Error&) {
  }
  return given;  // not in the catalog: the command refuses it itself
}

}  // namespace

std::vector<cluster::OptionValue> shared_option_values(const po::variables_map& vm, const po::options_description& desc,
                                                       PresetFile preset) {
  // The preset's keys the command line does not set, as the command will load them.
  po::variables_map from_file;
  try {
    std::string path;
    if (preset == PresetFile::kDataset)
      path = find_workload_file(vm.count("dataset") ? vm["dataset"].as<std::string>() : "imagenet-like");
    else if (preset == PresetFile::kCheckpointModel && vm.count("model"))
      path = find_workload_file(vm["model"].as<std::string>(), "checkpoint");
    if (!path.empty()) po::store(po::parse_config_file<char>(path.c_str(), desc, false), from_file);
  } catch (const std::exception&) {
    from_file.clear();
  }
  std::vector<cluster::OptionValue> out;
  for (const auto& o : desc.options()) {
    const std::string& name = o->long_name();
    if (name.empty() || kMayDiffer.count(name)) continue;
    cluster::OptionValue v;
    v.option = "--" + name;
    const po::variable_value* given = nullptr;
    if (auto it = vm.find(name); it != vm.end() && !it->second.empty()) given = &it->second;
    else if (auto f = from_file.find(name); f != from_file.end() && !f->second.empty()) given = &f->second;
    if (given) {
      v.given = true;
      v.value = value_text(*given);
      if (name == "gpu") v.value = gpu_key(v.value);
    }
    out.push_back(std::move(v));
  }
  return out;
}

void check_same_options(const CommandContext& ctx, const po::variables_map& vm, const po::options_description& desc,
                        const std::string& command, PresetFile preset) {
  if (!ctx.comm || !ctx.comm->multi()) return;
  cluster::check_options_agree(*ctx.comm, command, shared_option_values(vm, desc, preset), kCompareTimeoutS);
}

}  // namespace ioprobe::cli
