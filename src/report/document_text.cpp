#include "report/document_text.hpp"

#include <fmt/format.h>

#include "report/tune_document.hpp"

namespace ioprobe {

namespace {

using json = nlohmann::json;

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string o = "\"";
  for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
  return o + "\"";
}

void flatten(const json& j, const std::string& where, std::string& out) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), where + "/" + it.key(), out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) flatten(j[i], fmt::format("{}/{}", where, i), out);
  } else if (!j.is_null()) {
    out += csv_cell(where) + "," + csv_cell(j.is_string() ? j.get<std::string>() : j.dump()) + "\n";
  }
}

}  // namespace

std::string render_document_csv(const json& doc) {
  if (doc.value("kind", "") == "tune") return render_tune_csv(tune_document_from_json(doc, "tune document"));
  std::string out = std::string(kDocumentCsvHeader) + "\n";
  flatten(doc, "", out);
  return out;
}

}  // namespace ioprobe
