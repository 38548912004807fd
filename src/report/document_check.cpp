#include "report/document_check.hpp"

#include <array>
#include <cmath>
#include <string_view>

#include <fmt/format.h>

#include "core/json_field.hpp"

namespace ioprobe {

namespace {

constexpr const char* kFraction = "a fraction (0 to 1)";

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

// What the key's number measures, by the schema's naming; nullptr when it is not checked.
const char* measure_of(std::string_view key) {
  // Accelerator utilization and shares are fractions from 0 to 1 (the text shows them as %): a
  // document edited to 7.5 would render "AU 750.0%". Process CPU shares are left out: CPU time
  // over wall time can pass 1 by accounting granularity.
  if (key == "au" || key == "au_min" || key == "au_target" || key.rfind("accelerator_utilization", 0) == 0 ||
      (ends_with(key, "_fraction") && key.find("cpu") == std::string_view::npos))
    return kFraction;
  static constexpr std::array<std::string_view, 4> kTime = {"_s", "_us", "_ns", "_ms"};
  for (auto t : kTime)
    if (ends_with(key, t)) return ends_with(key, "_per_s") ? "a rate" : "a duration";
  if (ends_with(key, "bytes") || key == "size") return "a size";
  if (key == "iops") return "a rate";
  static constexpr std::array<std::string_view, 16> kCounts = {"samples", "files",      "records",          "ios",
                                                               "errors",  "epochs",     "chunks",           "dirs",
                                                               "skipped", "duplicates", "_completed",       "_total",
                                                               "_done",   "_count",     "records_per_file", "batches"};
  for (auto c : kCounts)
    if (key == c || (c.front() == '_' && ends_with(key, c)) || ends_with(key, std::string("_") + std::string(c)))
      return "a count";
  return nullptr;
}

std::string check(const nlohmann::json& j, const std::string& where, const char* measure) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string why = check(it.value(), json_path(where, it.key().c_str()), measure_of(it.key()));
      if (!why.empty()) return why;
    }
    return "";
  }
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string why = check(j[i], json_path(where, i), measure);
      if (!why.empty()) return why;
    }
    return "";
  }
  if (!measure || !j.is_number()) return "";
  if (measure == kFraction && (!std::isfinite(j.get<double>()) || j.get<double>() < 0 || j.get<double>() > 1 + 1e-9))
    return fmt::format("{}: {} cannot be outside 0 to 1, found {}", where, measure, j.dump());
  if (j.is_number_unsigned() && j.get<uint64_t>() > (uint64_t{1} << 63))
    return fmt::format("{}: {} this large is a wrapped negative number, found {}", where, measure, j.get<uint64_t>());
  if (j.is_number_integer() && !j.is_number_unsigned() && j.get<int64_t>() < 0)
    return fmt::format("{}: {} cannot be negative, found {}", where, measure, j.get<int64_t>());
  if (j.is_number_float() && (!std::isfinite(j.get<double>()) || j.get<double>() < 0))
    return fmt::format("{}: {} cannot be negative, found {}", where, measure, j.get<double>());
  return "";
}

}  // namespace

std::string implausible_number(const nlohmann::json& doc, const std::string& where) {
  return check(doc, where, nullptr);
}

}  // namespace ioprobe
