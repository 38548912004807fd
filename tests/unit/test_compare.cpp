#include <catch2/catch.hpp>

#include "report/compare_text.hpp"

using namespace ioprobe;
using nlohmann::json;

namespace {
// The line starting with `label`, with runs of spaces squeezed to one.
std::string line_of(const std::string& text, const std::string& label) {
  size_t p = text.find("  " + label);
  if (p == std::string::npos) return "";
  std::string line = text.substr(p + 2, text.find('\n', p) - p - 2), out;
  for (char c : line)
    if (c != ' ' || (!out.empty() && out.back() != ' ')) out += c;
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

json run_doc(uint64_t files, uint64_t bytes, double seconds) {
  return {{"kind", "run"},
          {"created_utc", "2026-11-29T00:00:00Z"},
          {"dataset", {{"root", "/data/ds"}, {"preset", "imagenet-like"}, {"files", files}, {"bytes", bytes}}},
          {"loader", {{"num_workers", 8}, {"prefetch_factor", 2}, {"gpus", 1}}},
          {"results",
           {{"samples", files},
            {"samples_per_s", files / seconds},
            {"bytes_per_s", bytes / seconds},
            {"elapsed_s", seconds},
            {"file_latency_us", {{"p50", 120.25}, {"p99", 900.0}}}}},
          {"ingest", {{"accelerator_utilization", 0.5}, {"required_samples_per_s", 2000.0}}}};
}
}  // namespace

TEST_CASE("report compare: one format per kind of figure, units in their own column", "[report]") {
  const std::string t = render_comparison_text({run_doc(1000, 1'048'576'000, 2.0), run_doc(1000, 1'048'576'000, 4.0)},
                                               {"a.json", "b.json"});
  INFO(t);
  // 1,048,576,000 B in 2 s = 524.288 MB/s = 500.0 MiB/s; counts print as whole numbers.
  CHECK_THAT(t, Catch::Contains("MB/s") && Catch::Contains("524.3") && Catch::Contains("MiB/s") &&
                    Catch::Contains("500.0"));
  CHECK(line_of(t, "num_workers") == "num_workers count 8 8 1.00x");
  CHECK_THAT(t, !Catch::Contains("8.0 "));
  CHECK_THAT(t, Catch::Contains("samples/s") && Catch::Contains("500.0") && Catch::Contains("250.0") &&
                    Catch::Contains("0.50x"));
  CHECK_THAT(t, Catch::Contains("elapsed") && Catch::Contains("2.000") && Catch::Contains("4.000"));
  CHECK_THAT(t, Catch::Contains("10^6 B/s") && Catch::Contains("2^20 B/s"));
  CHECK_THAT(t, !Catch::Contains("different datasets"));
}

TEST_CASE("report compare: a warning when the two runs read different datasets", "[report]") {
  const std::string t = render_comparison_text({run_doc(1000, 1'048'576'000, 2.0), run_doc(2000, 2'097'152'000, 2.0)},
                                               {"a.json", "b.json"});
  INFO(t);
  CHECK_THAT(t, Catch::Contains("warning: A and B read different datasets"));
  CHECK_THAT(t, Catch::Contains("1,000 files") && Catch::Contains("2,000 files"));
}

TEST_CASE("report compare: kinds without the compared figures are refused, naming files and kinds", "[report]") {
  // Two checkpoint results printed an empty table; a tune and a checkpoint printed "-" in every B cell.
  const json ck = {{"kind", "checkpoint"}, {"created_utc", "2026-11-29T00:00:00Z"}};
  json tune = {{"kind", "tune"}, {"best_run", {{"samples_per_s", 100.0}}}};
  const std::string two_ck = comparison_refusal({ck, ck}, {"A.json", "B.json"});
  CHECK_THAT(two_ck, Catch::Contains("'A.json' is a checkpoint result") &&
                         Catch::Contains("'B.json' is a checkpoint result") && Catch::Contains("run results") &&
                         Catch::Contains("tune results"));
  CHECK(two_ck.find('\n') == std::string::npos);
  CHECK_THAT(comparison_refusal({tune, ck}, {"t.json", "c.json"}),
             Catch::Contains("'t.json' is a tune result") && Catch::Contains("'c.json' is a checkpoint result"));
  CHECK_THAT(comparison_refusal({run_doc(1, 1, 1), json{{"x", 1}}}, {"a.json", "b.json"}),
             Catch::Contains("'b.json' is a document without a kind"));
  // Runs, tunes and a run beside a tune's fastest run still compare.
  CHECK(comparison_refusal({run_doc(1, 1, 1), run_doc(2, 2, 1)}, {"a", "b"}).empty());
  CHECK(comparison_refusal({tune, tune}, {"a", "b"}).empty());
  CHECK(comparison_refusal({run_doc(1, 1, 1), tune}, {"a", "b"}).empty());
}

TEST_CASE("report compare: a tune shows its recommended point's rate from its table, not its best run's whole run",
          "[report]") {
  // tune's table gives the point's steady rate (1273 samples/s); its best run's whole-run rate
  // (warm-up and the cut at the end included) is lower (1010).
  json tune = {{"kind", "tune"},
               {"created_utc", "2026-11-29T00:00:00Z"},
               {"loader", {{"gpus", 1}}},
               {"best_run",
                {{"samples_per_s", 1010.0},
                 {"bytes_per_s", 1010.0 * 1000},
                 {"samples", 5050},
                 {"file_latency_us", {{"p50", 100.0}, {"p99", 800.0}}}}},
               {"points", json::array({{{"num_workers", 2},
                                        {"prefetch_factor", 2},
                                        {"status", "measured"},
                                        {"samples_per_s", 900.0},
                                        {"bytes_per_s", 900.0 * 1000}},
                                       {{"num_workers", 4},
                                        {"prefetch_factor", 2},
                                        {"status", "measured"},
                                        {"samples_per_s", 1273.0},
                                        {"bytes_per_s", 1273.0 * 1000}}})},
               {"recommendation", {{"valid", true}, {"point", 1}, {"best", 1}, {"dataloader", "DataLoader(...)"}}}};
  const std::string t = render_comparison_text({run_doc(1000, 1'000'000, 1.0), tune}, {"run.json", "tune.json"});
  INFO(t);
  CHECK(line_of(t, "throughput") == "throughput samples/s 1000.0 1273.0 1.27x");
  CHECK(line_of(t, "num_workers") == "num_workers count 8 4 0.50x");
  CHECK_THAT(t, !Catch::Contains("1010"));
  CHECK_THAT(t, Catch::Contains("B: a tune: throughput and num_workers are its recommended point's (its table's steady "
                                "rate)"));
}

TEST_CASE("report compare: per-file and per-read latency on their own rows, never divided", "[report]") {
  json files = run_doc(1000, 1'048'576'000, 2.0), records = run_doc(1000, 1'048'576'000, 2.0);
  files["results"]["file_latency_us"]["p50"] = 120.0;
  records["dataset"]["kind"] = "sharded";  // samples are records read inside shard files: latency per read
  records["results"]["file_latency_us"] = {{"p50", 30.5}, {"p99", 200.0}};
  const std::string t = render_comparison_text({files, records}, {"a.json", "b.json"});
  INFO(t);
  CHECK(line_of(t, "file latency p50") == "file latency p50 µs 120.0 - -");
  CHECK(line_of(t, "read latency p50") == "read latency p50 µs - 30.5 -");
  CHECK(line_of(t, "read latency p99") == "read latency p99 µs - 200.0 -");
  CHECK_THAT(t, Catch::Contains("note: A measured latency per file") && Catch::Contains("and B per read") &&
                    Catch::Contains("not divided"));
  // Two documents of one measure: one row each, divided as before, no note.
  const std::string same = render_comparison_text({records, records}, {"a.json", "b.json"});
  INFO(same);
  CHECK(line_of(same, "read latency p50") == "read latency p50 µs 30.5 30.5 1.00x");
  CHECK(line_of(same, "file latency p50").empty());
  CHECK_THAT(same, !Catch::Contains("note: A measured"));
}
