#include "core/error_record.hpp"

#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/json_field.hpp"
#include "core/text.hpp"

namespace ioprobe {

std::string error_line(const ErrorRecord& e) {
  std::string s = e.op;
  if (!e.path.empty()) s += (s.empty() ? "" : " ") + escape_bytes(e.path);
  std::string why = e.err ? errno_text(e.err) : std::string();
  if (!e.detail.empty()) why += (why.empty() ? "" : ": ") + e.detail;
  if (!why.empty()) s += (s.empty() ? "" : ": ") + why;
  return s;
}

void add_error(std::vector<ErrorRecord>& list, const ErrorRecord& e, size_t max_records) {
  for (ErrorRecord& r : list)
    if (r.same_failure(e)) {
      r.count += e.count;
      return;
    }
  if (list.size() < max_records) list.push_back(e);
}

ErrorSpread error_spread(const std::vector<ErrorRecord>& list, uint64_t failures) {
  std::set<std::string> paths;
  uint64_t kept = 0;
  for (const ErrorRecord& r : list) {
    if (!r.path.empty()) paths.insert(r.path);
    kept += r.count;
  }
  return {paths.size(), kept >= failures};
}

std::string failed_reads_text(uint64_t failures, const ErrorSpread& spread) {
  std::string s = fmt::format("{} failed read{}", failures, failures == 1 ? "" : "s");
  if (spread.files > 0)
    s += fmt::format(" of {}{} file{}", spread.complete ? "" : "at least ", spread.files, spread.files == 1 ? "" : "s");
  return s;
}

nlohmann::json error_record_json(const ErrorRecord& e) {
  return {{"errno", e.err},       {"errno_name", e.err ? errno_name(e.err) : std::string()},
          {"op", e.op},           {"path", escape_bytes(e.path)},
          {"detail", e.detail},   {"count", e.count},
          {"text", error_line(e)}};
}

ErrorRecord error_record_from_json(const nlohmann::json& j, const std::string& where) {
  ErrorRecord e;
  e.err = json_field<int>(j, "errno", where);
  e.op = json_field<std::string>(j, "op", where);
  e.path = unescape_bytes(json_field<std::string>(j, "path", where));
  e.detail = json_field<std::string>(j, "detail", where);
  e.count = json_field<uint64_t>(j, "count", where);
  return e;
}

}  // namespace ioprobe
