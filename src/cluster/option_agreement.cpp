#include "cluster/option_agreement.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cluster/collective.hpp"
#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe::cluster {

namespace {

std::string shown(const OptionValue* v) {
  if (!v || !v->given) return "not given (its default)";
  return v->value.empty() ? "'' (empty)" : escape_bytes(v->value);
}

bool same(const OptionValue* a, const OptionValue* b) {
  const bool ga = a && a->given, gb = b && b->given;
  return ga == gb && (!ga || a->value == b->value);
}

std::map<std::string, const OptionValue*> by_option(const RankOptions& r) {
  std::map<std::string, const OptionValue*> m;
  for (const auto& o : r.options) m[o.option] = &o;
  return m;
}

nlohmann::json to_json(const std::vector<OptionValue>& options) {
  nlohmann::json a = nlohmann::json::array();
  // Values may hold any bytes (paths): escaped for the JSON text, compared in that form.
  for (const auto& o : options) a.push_back({o.option, escape_bytes(o.value), o.given});
  return a;
}

std::vector<OptionValue> from_json(const nlohmann::json& a) {
  std::vector<OptionValue> out;
  for (const auto& e : a) out.push_back({e.at(0).get<std::string>(), e.at(1).get<std::string>(), e.at(2).get<bool>()});
  return out;
}

}  // namespace

std::string options_mismatch(const std::vector<RankOptions>& all, size_t max_lines) {
  if (all.size() < 2) return "";
  const RankOptions& lead = all.front();
  const auto lead_map = by_option(lead);
  std::vector<std::string> lines;
  size_t count = 0;
  for (size_t i = 1; i < all.size(); ++i) {
    const auto map = by_option(all[i]);
    // Every option either side knows, in rank 0's order first, then the others' extra ones.
    std::vector<std::string> names;
    for (const auto& o : lead.options) names.push_back(o.option);
    for (const auto& o : all[i].options)
      if (!lead_map.count(o.option)) names.push_back(o.option);
    for (const auto& name : names) {
      const auto a = lead_map.find(name), b = map.find(name);
      const OptionValue* va = a == lead_map.end() ? nullptr : a->second;
      const OptionValue* vb = b == map.end() ? nullptr : b->second;
      if (same(va, vb)) continue;
      if (++count > max_lines) continue;
      lines.push_back(fmt::format("rank {} on host {}: {} {}, rank 0 (host {}) has {}", all[i].rank, all[i].host, name,
                                  shown(vb), lead.host, shown(va)));
    }
  }
  if (!count) return "";
  std::string text;
  for (const auto& l : lines) text += "\n  " + l;
  if (count > lines.size()) text += fmt::format("\n  and {} more difference(s)", count - lines.size());
  return text;
}

void check_options_agree(comm::Comm& comm, const std::string& command, const std::vector<OptionValue>& mine,
                         double timeout_s) {
  if (!comm.multi()) return;
  const nlohmann::json me = {{"host", comm.hostname()}, {"options", to_json(mine)}};
  const std::vector<std::string> texts = comm.allgather(me.dump(), "compare the processes' options", timeout_s);
  std::vector<RankOptions> all;
  for (size_t r = 0; r < texts.size(); ++r) {
    const nlohmann::json j = nlohmann::json::parse(texts[r]);
    all.push_back({static_cast<int>(r), j.at("host").get<std::string>(), from_json(j.at("options"))});
  }
  const std::string diff = options_mismatch(all);
  if (diff.empty()) return;
  throw JobFailure(comm.rank() == 0
                       ? fmt::format("{}: the {} processes of this job were started with different options, so they "
                                     "would not run one plan:{}\nstart every process with the same options (only "
                                     "--json and --quiet may differ: rank 0 alone writes and prints); nothing was "
                                     "read or written",
                                     command, texts.size(), diff)
                       : "",
                   kExitUsage);
}

}  // namespace ioprobe::cluster
