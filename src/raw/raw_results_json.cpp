#include "raw/raw_results_json.hpp"

#include "core/json_field.hpp"
#include "stats/latency_json.hpp"

namespace ioprobe {

using json = nlohmann::json;

json raw_results_to_json(const RawResults& r) {
  return {{"ios", r.ios},
          {"bytes", r.bytes},
          {"elapsed_s", r.elapsed_s},
          {"latency", histogram_ns_json(r.latency)},
          {"cpu_user_s", r.cpu_user_s},
          {"cpu_sys_s", r.cpu_sys_s},
          {"errors", r.errors},
          {"first_error", error_record_json(r.first_error)},
          {"partial", r.partial},
          {"stop_reason", to_string(r.stop)},
          {"engine_notes", r.engine_notes},
          {"fixed_buffers", r.fixed_buffers},
          {"registered_files", r.registered_files},
          {"sqpoll", r.sqpoll}};
}

RawResults raw_results_from_json(const json& j, const std::string& where) {
  RawResults r;
  r.ios = json_field<uint64_t>(j, "ios", where);
  r.bytes = json_field<uint64_t>(j, "bytes", where);
  r.elapsed_s = json_field<double>(j, "elapsed_s", where);
  r.latency = histogram_from_ns_json(json_at(j, "latency", where), json_path(where, "latency"));
  r.cpu_user_s = json_field<double>(j, "cpu_user_s", where);
  r.cpu_sys_s = json_field<double>(j, "cpu_sys_s", where);
  r.errors = json_field<uint64_t>(j, "errors", where);
  r.first_error = error_record_from_json(json_at(j, "first_error", where), json_path(where, "first_error"));
  r.partial = json_field<bool>(j, "partial", where);
  r.stop = raw_stop_field(j, "stop_reason", where);
  r.engine_notes = json_field<std::vector<std::string>>(j, "engine_notes", where);
  r.fixed_buffers = json_field<bool>(j, "fixed_buffers", where);
  r.registered_files = json_field<bool>(j, "registered_files", where);
  r.sqpoll = json_field<bool>(j, "sqpoll", where);
  return r;
}

void to_json(json& j, const RawResults& r) { j = raw_results_to_json(r); }
void from_json(const json& j, RawResults& r) { r = raw_results_from_json(j, "raw result"); }

}  // namespace ioprobe
