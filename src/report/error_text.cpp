#include "report/error_text.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/text.hpp"
#include "engine/engine_choice.hpp"

namespace ioprobe {

std::string error_text(const ErrorRecord& e) {
  std::string s = error_line(e);
  if (e.count > 1) s += fmt::format(" ({} times)", e.count);
  return s;
}

std::string error_hint(const ErrorRecord& e) { return io_uring_canceled_hint(e.err); }

nlohmann::json error_record_json(const ErrorRecord& e) {
  return {{"errno", e.err},       {"errno_name", e.err ? errno_name(e.err) : std::string()},
          {"op", e.op},           {"path", escape_bytes(e.path)},
          {"detail", e.detail},   {"count", e.count},
          {"text", error_line(e)}};
}

ErrorRecord error_record_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw UsageError(fmt::format("{}: an error record is not an object: {}", where, j.dump()));
  ErrorRecord e;
  try {
    e.err = j.value("errno", 0);
    e.op = j.value("op", "");
    e.path = unescape_bytes(j.value("path", ""));
    e.detail = j.value("detail", "");
    e.count = j.value("count", uint64_t{1});
  } catch (const nlohmann::json::exception& x) {
    throw UsageError(fmt::format("{}: a value of an error record has the wrong type: {}", where, x.what()));
  }
  return e;
}

std::string error_list_text(const std::vector<ErrorRecord>& errors, const std::string& indent) {
  std::string out;
  std::vector<std::string> hints;
  for (const ErrorRecord& e : errors) {
    out += indent + error_text(e) + "\n";
    const std::string h = error_hint(e);
    bool seen = h.empty();
    for (const auto& x : hints) seen = seen || x == h;
    if (!seen) hints.push_back(h);
  }
  for (const auto& h : hints) out += indent + h + "\n";
  return out;
}

}  // namespace ioprobe
