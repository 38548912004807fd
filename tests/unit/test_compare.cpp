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

ComparedDocument run_doc(uint64_t files, uint64_t bytes, double seconds) {
  ComparedDocument d;
  d.kind = "run";
  d.created_utc = "2026-11-29T00:00:00Z";
  d.dataset.root = "/data/ds";
  d.dataset.preset = "imagenet-like";
  d.dataset.files = files;
  d.dataset.bytes = bytes;
  d.dataset.kind = "files";
  d.figures = {.samples_per_s = static_cast<double>(files) / seconds,
               .bytes_per_s = static_cast<double>(bytes) / seconds,
               .au = 0.5,
               .demand_samples_per_s = 2000.0,
               .latency_p50_us = 120.25,
               .latency_p99_us = 900.0,
               .num_workers = 8,
               .prefetch_factor = 2,
               .gpus = 1,
               .samples = static_cast<double>(files),
               .elapsed_s = seconds};
  return d;
}

json kind_doc(const char* kind) { return {{"kind", kind}, {"created_utc", "2026-11-29T00:00:00Z"}}; }
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
  const json ck = kind_doc("checkpoint");
  const json tune = kind_doc("tune"), run = kind_doc("run");
  const std::string two_ck = comparison_refusal({ck, ck}, {"A.json", "B.json"});
  CHECK_THAT(two_ck, Catch::Contains("'A.json' is a checkpoint result") &&
                         Catch::Contains("'B.json' is a checkpoint result") && Catch::Contains("run results") &&
                         Catch::Contains("tune results"));
  CHECK(two_ck.find('\n') == std::string::npos);
  CHECK_THAT(comparison_refusal({tune, ck}, {"t.json", "c.json"}),
             Catch::Contains("'t.json' is a tune result") && Catch::Contains("'c.json' is a checkpoint result"));
  CHECK_THAT(comparison_refusal({run, json{{"x", 1}}}, {"a.json", "b.json"}),
             Catch::Contains("'b.json' is a document without a kind"));
  // Runs, tunes and a run beside a tune's fastest run still compare.
  CHECK(comparison_refusal({run, run}, {"a", "b"}).empty());
  CHECK(comparison_refusal({tune, tune}, {"a", "b"}).empty());
  CHECK(comparison_refusal({run, tune}, {"a", "b"}).empty());
}

TEST_CASE("report compare: a tune shows its recommended point's rate from its table, not its best run's whole run",
          "[report]") {
  // tune's table gives the point's steady rate (1273 samples/s); its best run's whole-run rate
  // (warm-up and the cut at the end included) is lower (1010).
  TuneDocument tune;
  tune.header.created_utc = "2026-11-29T00:00:00Z";
  tune.dataset = run_doc(1000, 1'000'000, 1.0).dataset;
  tune.dataset.kind = "files";
  tune.loader.gpus = 1;
  LoaderResult best;
  best.samples = 5050;
  best.elapsed_ns = 5'000'000'000;
  tune.best_run = best;
  for (const auto& [workers, rate] : {std::pair{2U, 900.0}, std::pair{4U, 1273.0}}) {
    TunePointEntry e;
    e.point.num_workers = workers;
    e.point.prefetch_factor = 2;
    e.point.samples_per_s = rate;
    e.point.bytes_per_s = rate * 1000;
    e.point.runs.resize(1);  // measured
    tune.points.push_back(e);
  }
  tune.recommendation.valid = true;
  tune.recommendation.point = tune.recommendation.best = 1;
  tune.recommendation.dataloader = "DataLoader(...)";
  const ComparedDocument typed = compared_document(tune);
  CHECK(typed.tune_point);
  CHECK(typed.figures.samples.value_or(0) == 5050);
  CHECK(!typed.figures.au);
  const std::string t = render_comparison_text({run_doc(1000, 1'000'000, 1.0), typed}, {"run.json", "tune.json"});
  INFO(t);
  CHECK(line_of(t, "throughput") == "throughput samples/s 1000.0 1273.0 1.27x");
  CHECK(line_of(t, "num_workers") == "num_workers count 8 4 0.50x");
  CHECK_THAT(t, !Catch::Contains("1010"));
  CHECK_THAT(t, Catch::Contains("B: a tune: throughput and num_workers are its recommended point's (its table's steady "
                                "rate)"));
}

TEST_CASE("report compare: per-file and per-read latency on their own rows, never divided", "[report]") {
  ComparedDocument files = run_doc(1000, 1'048'576'000, 2.0), records = run_doc(1000, 1'048'576'000, 2.0);
  files.figures.latency_p50_us = 120.0;
  records.dataset.kind = "sharded";  // samples are records read inside shard files: latency per read
  records.figures.latency_p50_us = 30.5;
  records.figures.latency_p99_us = 200.0;
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
