#include "core/error_record.hpp"

#include "core/error.hpp"
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

}  // namespace ioprobe
