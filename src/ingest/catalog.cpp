#include "ingest/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/text.hpp"

namespace ioprobe {

namespace {
std::optional<IngestRate> rate_of(const nlohmann::json& j) {
  if (j.is_null()) return std::nullopt;
  IngestRate r;
  r.samples_per_s = j.at("samples_per_s").get<double>();
  if (j.contains("step_time_s") && j["step_time_s"].is_number()) r.step_time_s = j["step_time_s"].get<double>();
  if (j.contains("batch_size") && j["batch_size"].is_number()) r.batch_size = j["batch_size"].get<uint32_t>();
  r.source = j.at("source").get<std::string>();
  return r;
}
}  // namespace

std::vector<CatalogRow> load_catalog(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read the accelerator catalog '{}'", path));
  std::vector<CatalogRow> rows;
  try {
    nlohmann::json doc = nlohmann::json::parse(in);
    for (const auto& j : doc.at("rows")) {
      CatalogRow r;
      r.accelerator = j.at("accelerator").get<std::string>();
      r.name = j.at("name").get<std::string>();
      r.model = j.at("model").get<std::string>();
      r.bytes_per_sample = j.at("bytes_per_sample").get<double>();
      r.bytes_source = j.at("bytes_source").get<std::string>();
      r.training = rate_of(j.at("training"));
      r.emulation = rate_of(j.at("emulation"));
      rows.push_back(std::move(r));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("accelerator catalog '{}' is malformed: {}", path, e.what()));
  }
  return rows;
}

double load_au_floor(const std::string& path, const std::string& model, std::string* source) {
  std::ifstream in(path);
  if (!in) throw UsageError(fmt::format("cannot read the accelerator catalog '{}'", path));
  try {
    const nlohmann::json doc = nlohmann::json::parse(in);
    if (!doc.contains("au_floors")) return 0.9;
    const nlohmann::json& f = doc.at("au_floors");
    const nlohmann::json& e = f.contains(model) ? f.at(model) : f.at("default");
    if (source) *source = e.at("source").get<std::string>();
    return e.at("au").get<double>();
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(fmt::format("accelerator catalog '{}' is malformed: {}", path, e.what()));
  }
}

namespace {

bool same_ignoring_case(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string accelerator_key(const std::vector<CatalogRow>& rows, const std::string& given) {
  for (const auto& r : rows)
    if (same_ignoring_case(r.accelerator, given) || same_ignoring_case(r.name, given)) return r.accelerator;
  return "";
}

const CatalogRow& find_row(const std::vector<CatalogRow>& rows, const std::string& given, const std::string& model) {
  const std::string acc = accelerator_key(rows, given);
  std::string have, kinds;
  for (const auto& r : rows) {
    if (!acc.empty() && r.accelerator == acc && r.model == model) return r;
    if (r.model == model) have += (have.empty() ? "" : ", ") + r.accelerator;
    const std::string kind = fmt::format("{} ({})", r.accelerator, r.name);
    if (kinds.find(r.accelerator + " (") == std::string::npos) kinds += (kinds.empty() ? "" : ", ") + kind;
  }
  if (acc.empty())
    throw UsageError(fmt::format("--gpu '{}' is not in the accelerator catalog (it has: {}; the key or the label, in "
                                 "any case); give the rate yourself with --gpu-samples-per-s N or --step-time SECONDS",
                                 escape_bytes(given), kinds));
  throw UsageError(fmt::format(
      "--gpu '{}': the catalog has no rate for model '{}'{}; give the rate yourself with --gpu-samples-per-s N "
      "or --step-time SECONDS",
      escape_bytes(given), model, have.empty() ? "" : fmt::format(" (it has: {})", have)));
}

}  // namespace ioprobe
