// `ioprobe report FILE.json [FILE2.json ...]`: re-renders saved result documents as text, HTML
// (--html) or CSV (--csv: a tune's points, any other kind's figures), and compares two or more side by side; with
// --merge, combines run (or raw) documents into one result (report/document_merge.hpp), written with --json.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/message.hpp"
#include "core/text.hpp"
#include "report/capacity_document.hpp"
#include "report/capacity_report.hpp"
#include "report/checkpoint_document.hpp"
#include "report/checkpoint_report.hpp"
#include "report/checkpoint_series.hpp"
#include "report/compare_text.hpp"
#include "report/document.hpp"
#include "report/document_check.hpp"
#include "report/document_merge.hpp"
#include "report/document_text.hpp"
#include "report/html_report.hpp"
#include "report/probe_text.hpp"
#include "report/raw_document.hpp"
#include "report/raw_report.hpp"
#include "report/replay_report.hpp"
#include "report/run_document.hpp"
#include "report/run_text.hpp"
#include "report/scaling_report.hpp"
#include "report/tune_document.hpp"
#include "trace/trace_format.hpp"

namespace ioprobe::cli {

namespace {

// `report --merge` of replay documents: decoded into the typed document, merged with
// ReplayResult::merge (replay/replay_result.hpp).
int merge_replays(const std::vector<nlohmann::json>& docs, const std::vector<std::string>& names,
                  const std::string& out, const std::string& html) {
  std::vector<ReplayDocument> typed;
  for (size_t i = 0; i < docs.size(); ++i) {
    if (docs[i].value("kind", "") != "replay")
      throw UsageError(fmt::format("--merge: '{}' is a '{}' document, '{}' a replay: merge documents of one kind",
                                   names[i], escape_bytes(docs[i].value("kind", "")), names.front()));
    typed.push_back(replay_document_from_json(docs[i], "'" + names[i] + "'"));
  }
  const ReplayDocument merged = merge_replay_documents(typed, names);
  std::cout << render_replay_text(merged);
  if (!out.empty()) {
    write_replay_document(out, merged);
    message(fmt::format("wrote {}", escape_bytes(out)));
  }
  if (!html.empty()) {
    write_file_atomically(html, render_html_report({replay_document_json(merged)}),
                          "check that the directory exists and is writable");
    message(fmt::format("wrote {}", escape_bytes(html)));
  }
  return kExitOk;
}

// `report --merge A.json B.json [...] [--json M.json] [--html OUT.html]`.
int merge_command(const std::vector<std::string>& files, const std::vector<nlohmann::json>& docs,
                  const po::variables_map& vm, const std::string& html, const std::string& csv) {
  if (files.size() < 2) throw UsageError("--merge: give two or more result documents (A.json B.json ...)");
  if (!csv.empty())
    throw UsageError("--csv does not take --merge: write the merged document with --json, then render it with "
                     "'ioprobe report M.json --csv FILE'");
  const std::string out = vm.count("json") ? vm["json"].as<std::string>() : "";
  if (vm.count("json") && out.empty()) throw UsageError("--json: empty path; give a file name");
  // An output that is an input is named as such first: more telling than its kind.
  if (!out.empty()) {
    check_output_not_input(out, "--json", files);
    check_output_path(out, "--json", docs.front().value("kind", ""));
  }
  if (vm.count("html") && html.empty()) throw UsageError("--html: empty path; give a file name");
  if (!html.empty()) {
    check_output_not_input(html, "--html", files);
    check_output_path(html, "--html", kHtmlOutput);
  }
  check_outputs_distinct({{"--json", out}, {"--html", html}});
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(escape_bytes(f));
  if (docs.front().value("kind", "") == "replay") return merge_replays(docs, names, out, html);
  const MergedDocument merged = merge_documents(docs, names);
  // Inputs of different work are said before the figures that add them up (and again in the text's warnings).
  for (const auto& w : merged.workload_warnings) warning(w);
  const auto* run = std::get_if<RunDocument>(&merged.doc);
  std::cout << (run ? render_run_text(*run) : render_merged_raw_text(std::get<RawDocument>(merged.doc)));
  if (!out.empty()) {
    if (run) write_run_document(out, *run);
    else write_raw_document(out, std::get<RawDocument>(merged.doc));
    message(fmt::format("wrote {}", escape_bytes(out)));
  }
  if (!html.empty()) {
    write_file_atomically(html, render_html_report({merged_document_json(merged)}),
                          "check that the directory exists and is writable");
    message(fmt::format("wrote {}", escape_bytes(html)));
  }
  return kExitOk;
}

// Reads each document and refuses one whose numbers ioprobe cannot have written (a negative
// count would render as 18,446,744,073,709,551,611), naming the file and the field.
std::vector<nlohmann::json> load_documents(const std::vector<std::string>& files) {
  std::vector<nlohmann::json> docs;
  for (const auto& f : files) {
    if (trace::is_trace_file(f))
      throw UsageError(fmt::format("'{}' is an ioprobe trace (`ioprobe record`), not a result document: replay it "
                                   "with `ioprobe replay '{}'`, then render that run's --json",
                                   escape_bytes(f), escape_bytes(f)));
    docs.push_back(read_json_file(f));
    if (const std::string why = implausible_number(docs.back(), "'" + escape_bytes(f) + "'"); !why.empty())
      throw UsageError(fmt::format("{}; the document was edited or damaged after ioprobe wrote it: render the "
                                   "original or run the measurement again",
                                   why));
  }
  return docs;
}

// A typed document decoded by `from_json` (run_document_from_json, ...), or UsageError naming the
// file `name`, the field and what to do.
template <class Doc>
Doc decoded(Doc (*from_json)(const nlohmann::json&, const std::string&), const nlohmann::json& doc,
            const std::string& name) {
  try {
    return from_json(doc, "'" + name + "'");
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}; the document was edited, cut or written by another ioprobe version: render the "
                                 "original or run the measurement again",
                                 e.what()));
  }
}

RunDocument run_document_of(const nlohmann::json& doc, const std::string& name) {
  return decoded(run_document_from_json, doc, name);
}

TuneDocument tune_document_of(const nlohmann::json& doc, const std::string& name) {
  return decoded(tune_document_from_json, doc, name);
}

CapacityDocument capacity_document_of(const nlohmann::json& doc, const std::string& name) {
  return decoded(capacity_document_from_json, doc, name);
}

// A checkpoint document decoded (report/checkpoint_document.hpp), or UsageError as run_document_of's.
CheckpointDocument checkpoint_document_of(const nlohmann::json& doc, const std::string& name) {
  try {
    return checkpoint_document_from_json(doc, "'" + name + "'");
  } catch (const UsageError& e) {
    throw UsageError(fmt::format("{}; the document was edited, cut or written by another ioprobe version: render the "
                                 "original or run the measurement again",
                                 e.what()));
  }
}

// The text report of one document (`name` its escaped file name), any kind ioprobe writes; "" for
// an unknown kind.
std::string document_text(const nlohmann::json& doc, const std::string& name) {
  const std::string kind = doc.value("kind", "");
  if (kind == "run") return render_run_text(run_document_of(doc, name));
  if (kind == "tune") return render_tune_text(tune_document_of(doc, name));
  if (kind == "capacity") return render_capacity_text(capacity_document_of(doc, name));
  if (kind == "checkpoint") {
    const CheckpointDocument c = checkpoint_document_of(doc, name);
    return render_checkpoint_text(c) + render_series_text(c);
  }
  if (kind == "raw") return render_raw_text(decoded(raw_document_from_json, doc, name));
  if (kind == "probe") return render_probe_text(decoded(probe_document_from_json, doc, name));
  if (kind == "scaling") return render_scaling_text(decoded(scaling_document_from_json, doc, name));
  if (kind == "replay") return render_replay_text(replay_document_from_json(doc, "replay document"));
  return "";
}

}  // namespace

int cmd_report(const CommandContext& ctx) {
  po::options_description desc("ioprobe report FILE.json [B.json ...]: re-render saved result documents");
  // clang-format off
  desc.add_options()
      ("html", po::value<std::string>(), "write one self-contained HTML page (inline SVG charts) to FILE")
      ("csv", po::value<std::string>(), "write one document as CSV to FILE (a tune's points; other kinds: every figure by its JSON key)")
      ("merge", "combine run (or raw, or replay) documents into one result: counts summed, elapsed the longest, "
                "percentiles from the added latency buckets")
      ("json", po::value<std::string>(), "with --merge: write the merged document to FILE")
      ("help,h", "this help");
  // clang-format on
  std::vector<std::string> files, rest;
  // Words are files, except the value after --html/--csv/--json.
  for (size_t i = 0; i < ctx.args.size(); ++i) {
    const std::string& a = ctx.args[i];
    if ((a == "--html" || a == "--csv" || a == "--json") && i + 1 < ctx.args.size()) {
      rest.push_back(a);
      rest.push_back(ctx.args[++i]);
    } else {
      (a.empty() || a[0] != '-' ? files : rest).push_back(a);
    }
  }
  po::variables_map vm = parse_command_line(rest, desc, "report");
  if (vm.count("help") || files.empty()) {
    std::cout << "usage: ioprobe report FILE.json [B.json ...] [--html OUT.html] [--csv OUT.csv]\n"
                 "       ioprobe report --merge A.json B.json [...] [--json M.json] [--html OUT.html]\n"
                 "One file: its text report. Two or more: a side-by-side comparison, then each report.\n"
                 "--merge: one result combining run (or raw) documents, e.g. one per host of a multi-host run.\n"
              << desc << "\nExit codes: 0 ok, 2 bad usage, or a document that cannot be read, compared or merged.\n";
    if (files.empty() && !vm.count("help")) throw UsageError("report: give a result document (FILE.json)");
    return kExitOk;
  }
  std::vector<nlohmann::json> docs = load_documents(files);
  const std::string html = vm.count("html") ? vm["html"].as<std::string>() : "";
  const std::string csv = vm.count("csv") ? vm["csv"].as<std::string>() : "";
  if (vm.count("json") && !vm.count("merge"))
    throw UsageError("--json writes a merged document; use it with --merge (report re-renders documents that exist)");
  if (vm.count("merge")) return merge_command(files, docs, vm, html, csv);
  if (vm.count("html") && html.empty()) throw UsageError("--html: empty path; give a file name");
  // An output must never replace an input (`report ck.json --html ck.json`), nor the other output;
  // an input is named as such before an output's kind is checked.
  if (!html.empty()) check_output_not_input(html, "--html", files);
  if (!csv.empty()) check_output_not_input(csv, "--csv", files);
  if (!html.empty()) check_output_path(html, "--html", kHtmlOutput);
  // A tune document's CSV is its table; any other document's, its figures by JSON key.
  if (!csv.empty())
    check_output_path(csv, "--csv",
                      docs.size() == 1 && docs[0].value("kind", "") == "tune" ? kTuneCsvOutput : kFieldsCsvOutput);
  if (!html.empty() && !csv.empty()) check_output_not_input(csv, "--csv", {html});
  check_outputs_distinct({{"--html", html}, {"--csv", csv}});
  if (!csv.empty() && docs.size() != 1)
    throw UsageError("--csv writes one document as CSV (a tune's points, any other kind's figures by JSON key); give "
                     "exactly one FILE.json");

  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(escape_bytes(f));
  if (docs.size() > 1) {
    if (std::string why = comparison_refusal(docs, names); !why.empty()) throw UsageError(why);
    std::vector<ComparedDocument> compared;
    for (size_t i = 0; i < docs.size(); ++i)
      compared.push_back(decoded(compared_document_from_json, docs[i], names[i]));
    std::cout << render_comparison_text(compared, names) << "\n";
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    const std::string kind = docs[i].value("kind", "");
    try {
      const std::string text = document_text(docs[i], names[i]);
      if (text.empty())
        throw UsageError(fmt::format(
            "'{}': kind '{}' is not one this version writes (run, tune, capacity, checkpoint, raw, probe, scaling, "
            "replay)",
            escape_bytes(files[i]), kind));
      std::cout << text;
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(fmt::format("'{}' is missing fields of a '{}' document ({}): it was edited, cut or written by "
                                   "another ioprobe version; render the original or run the measurement again",
                                   escape_bytes(files[i]), escape_bytes(kind), json_error_text(e)));
    }
  }
  if (!html.empty()) {
    write_file_atomically(html, render_html_report(docs), "check that the directory exists and is writable");
    message(fmt::format("wrote {}", escape_bytes(html)));
  }
  if (!csv.empty()) {
    // A run's or capacity search's figures as its typed document has them: derived figures (a run's
    // rates and percentiles, a point's demand and pass) come from the counts and settings, so an
    // edited derived figure is not passed on; a tune's points as its typed document has them.
    const std::string kind = docs[0].value("kind", "");
    const nlohmann::json& one = kind == "run"        ? run_document_json(run_document_of(docs[0], names[0]))
                                : kind == "capacity" ? capacity_document_json(capacity_document_of(docs[0], names[0]))
                                                     : docs[0];
    write_file_atomically(csv,
                          kind == "tune" ? render_tune_csv(tune_document_of(docs[0], names[0]))
                                         : render_document_csv(one),
                          "check that the directory exists and is writable");
    message(fmt::format("wrote {}", escape_bytes(csv)));
  }
  return kExitOk;
}

}  // namespace ioprobe::cli
