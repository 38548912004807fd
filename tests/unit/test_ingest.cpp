#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "ingest/analysis.hpp"
#include "ingest/catalog.hpp"

using namespace ioprobe;

namespace {
LoaderResult fake_run(double elapsed_s, uint64_t samples, uint64_t bytes, double compute_s, double wait_s,
                      double busy) {
  LoaderResult r;
  r.elapsed_ns = static_cast<int64_t>(elapsed_s * 1e9);
  r.samples = samples;
  r.bytes = bytes;
  RankStats rk;
  rk.compute_ns = static_cast<int64_t>(compute_s * 1e9);
  rk.nominal_compute_ns = rk.compute_ns;
  rk.elapsed_ns = r.elapsed_ns;
  rk.wait_ns = static_cast<int64_t>(wait_s * 1e9);
  r.ranks.push_back(rk);
  WorkerStats w;
  w.busy_ns = static_cast<int64_t>(busy * elapsed_s * 1e9);
  r.workers.push_back(w);
  for (int i = 0; i < 100; ++i) {
    r.file_latency.record(1000000);
    r.open_latency.record(100000);
  }
  return r;
}
}  // namespace

TEST_CASE("GPU demand in bytes/s compares like with like", "[ingest]") {
  Demand d;
  d.samples_per_s_per_gpu = 2000;
  d.gpus = 1;
  AnalysisInputs in;
  in.sample_bytes = 112640;
  auto r = analyze_ingest(fake_run(2.0, 256, 1073741824ULL, 1.9, 0.1, 0.5), d, in);
  CHECK(r.required_bytes_per_s == Approx(225.28e6));  // 225.28 MB/s = 214.84 MiB/s
  CHECK(r.required_bytes_per_s / 1048576.0 == Approx(214.84).epsilon(1e-4));
  CHECK(r.delivered_bytes_per_s == Approx(536.870912e6));
  // unet3d emulation: batch 4 every 1.36 s at 146,000,000 B per sample = 429.4 MB/s per accelerator.
  Demand u;
  u.samples_per_s_per_gpu = 4 / 1.36;
  in.sample_bytes = 146000000;
  auto ur = analyze_ingest(fake_run(10, 40, 40ULL * 146000000, 9, 1, 0.5), u, in);
  CHECK(ur.required_bytes_per_s / 1e6 == Approx(429.41).epsilon(1e-4));
}

TEST_CASE("verdicts: fed, storage-bound, CPU-bound, metadata-bound", "[ingest]") {
  Demand d;
  d.samples_per_s_per_gpu = 1000;
  d.gpus = 2;
  d.au_target = 0.9;
  AnalysisInputs in;
  in.cpus_allowed = 4;
  in.sample_bytes = 100000;
  auto fed = analyze_ingest(fake_run(10, 20000, 2000000000, 9.5, 0.5, 0.25), d, in);
  CHECK(fed.verdict == "none");
  CHECK(fed.gpus_fed == 2);  // proven by the run; nothing beyond it (worker busy 25% once said "up to 8")

  auto starved = analyze_ingest(fake_run(10, 9000, 900000000, 5, 5, 1.0), d, in);
  CHECK(starved.verdict == "storage");
  CHECK(starved.accelerator_utilization == Approx(0.5));
  CHECK(starved.gpus_fed == 0);  // fewer than 2 fed; no 900 / (1000 x 0.9) = 1 extrapolated

  LoaderResult cpu = fake_run(10, 9000, 900000000, 5, 5, 1.0);
  cpu.cpu_user_s = 38;  // 3.8 of 4 CPUs busy
  CHECK(analyze_ingest(cpu, d, in).verdict == "CPU");

  LoaderResult meta = fake_run(10, 9000, 900000000, 5, 5, 1.0);
  meta.open_latency = LatencyHistogram();
  for (int i = 0; i < 100; ++i) meta.open_latency.record(700000);
  CHECK(analyze_ingest(meta, d, in).verdict == "metadata");

  // Workers that waited on the run queue for a CPU most of the time they had work, while this
  // process used little CPU: the host's CPUs went elsewhere; not a storage verdict.
  LoaderResult contended = fake_run(10, 9000, 900000000, 5, 5, 1.0);
  contended.cpu_user_s = 4;                           // 0.4 of 4 CPUs
  contended.workers[0].runq_wait_ns = 6'000'000'000;  // 60% of its 10 s busy
  auto ct = analyze_ingest(contended, d, in);
  CHECK(ct.verdict == "CPU");
  CHECK_THAT(ct.verdict_text, Catch::StartsWith("CPU-starved: the workers waited for a CPU 60%"));
  CHECK(ct.worker_runq_fraction == Approx(0.6));
  contended.workers[0].runq_wait_ns = 1'000'000'000;  // 10%: the storage verdict stands
  CHECK(analyze_ingest(contended, d, in).verdict == "storage");
  contended.workers[0].runq_wait_ns = -1;  // not measured (a sender without the field)
  CHECK(analyze_ingest(contended, d, in).verdict == "storage");
  CHECK(analyze_ingest(contended, d, in).worker_runq_fraction == -1);

  auto none = analyze_ingest(fake_run(10, 0, 0, 0, 10, 1.0), d, in);
  CHECK(none.verdict == "failed");

  // Stopped early on io_uring's canceled reads: the rates measured the failure, so no storage
  // verdict, even with samples delivered before the stop.
  LoaderResult canceled = fake_run(10, 9000, 900000000, 5, 5, 1.0);
  canceled.stopped_on_errors = true;
  canceled.stop = {.kind = LoaderStopKind::kCanceledReads, .canceled_reads = 8};
  auto cr = analyze_ingest(canceled, d, in);
  CHECK(cr.verdict == "failed");
  CHECK_THAT(cr.verdict_text, Catch::StartsWith("stopped early"));
  CHECK(cr.gpus_fed == 0);
}

TEST_CASE("a --duration that ends before the first batch says so and asks for a longer one", "[ingest]") {
  Demand d;
  d.samples_per_s_per_gpu = 1000;
  d.gpus = 1;
  AnalysisInputs in;
  in.sample_bytes = 1000;
  // 100 reads finished in 0.1 s, but no batch was whole when the duration ended it.
  LoaderResult r = fake_run(0.1, 0, 0, 0, 0.1, 1.0);
  r.stop = {.kind = LoaderStopKind::kDuration};
  auto a = analyze_ingest(r, d, in);
  CHECK(a.verdict == "failed");
  CHECK_THAT(a.verdict_text, Catch::StartsWith("no batch completed within the --duration of 0.10 s"));
  CHECK_THAT(a.verdict_text, Catch::Contains("100 reads finished") && Catch::Contains("a longer --duration"));
  CHECK_THAT(a.verdict_text, !Catch::Contains("no sample was read"));
  // No read finished at all (a sample too large for the duration): no sample was read.
  r.file_latency = LatencyHistogram();
  CHECK_THAT(analyze_ingest(r, d, in).verdict_text, Catch::StartsWith("no sample was read: the run ended (duration"));
}

TEST_CASE("AU counts the nominal step time: a consumer that overslept lowers AU", "[ingest]") {
  RankStats rk;
  rk.elapsed_ns = 10'000'000'000;
  rk.wait_ns = 500'000'000;
  rk.compute_ns = 9'500'000'000;          // what the sleeps took
  rk.nominal_compute_ns = 8'000'000'000;  // what the GPUs' rate asked for
  CHECK(rank_accelerator_utilization(rk) == Approx(0.8));
  LoaderResult r;
  r.elapsed_ns = rk.elapsed_ns;
  r.samples = 1000;
  r.ranks.push_back(rk);
  Demand d;
  d.samples_per_s_per_gpu = 100;
  auto out = analyze_ingest(r, d, AnalysisInputs{});
  CHECK(out.consumer_lag_s == Approx(1.5));
  CHECK(out.accelerator_utilization == Approx(0.8));
}

TEST_CASE("the shipped catalog has sourced rates for the presets' models", "[ingest]") {
  auto rows = load_catalog(std::string(IOPROBE_SOURCE_WORKLOADS) + "/accelerators.json");
  const CatalogRow& h100 = find_row(rows, "h100", "resnet50");
  REQUIRE(h100.training);
  REQUIRE(h100.emulation);
  CHECK(h100.training->samples_per_s == 7007);
  CHECK(h100.emulation->samples_per_s == Approx(400 / 0.224).epsilon(1e-3));
  for (const auto& r : rows) {
    INFO(r.accelerator << " " << r.model);
    CHECK((r.training || r.emulation));
    if (r.training) CHECK_FALSE(r.training->source.empty());
    if (r.emulation) CHECK_FALSE(r.emulation->source.empty());
  }
  find_row(rows, "h100", "unet3d");
  find_row(rows, "h100", "cosmoflow");
  CHECK_THROWS(find_row(rows, "mi300x", "resnet50"));
}

TEST_CASE("the GPU option (--gpu) takes the catalog key or the report's own label, in any case", "[ingest]") {
  auto rows = load_catalog(std::string(IOPROBE_SOURCE_WORKLOADS) + "/accelerators.json");
  // The report names a GPU by its label ("2 x H100-SXM"): that label, and the key, in any case.
  for (const char* given : {"h100", "H100", "H100-SXM", "h100-sxm", "H100-sxm"}) {
    INFO(given);
    const CatalogRow& r = find_row(rows, given, "resnet50");
    CHECK(r.accelerator == "h100");
    CHECK(r.model == "resnet50");
  }
  CHECK(find_row(rows, "MI355X", "retinanet").accelerator == "mi355");
  CHECK(find_row(rows, "rtx 4090", "resnet50").accelerator == "rtx4090");
  // Every row's own key and label find that row.
  for (const auto& row : rows) {
    INFO(row.accelerator << " " << row.name << " " << row.model);
    CHECK(&find_row(rows, row.name, row.model) == &row);
    CHECK(&find_row(rows, row.accelerator, row.model) == &row);
  }
  // No prefix or partial match: "h1" is not "h100".
  try {
    find_row(rows, "h1", "resnet50");
    FAIL("--gpu h1 was accepted");
  } catch (const UsageError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("'h1'") && Catch::Contains("H100-SXM"));
  }
}

TEST_CASE("a verdict on a run with failed reads says how many reads of how many files failed", "[ingest]") {
  Demand d;
  d.samples_per_s_per_gpu = 100;
  d.gpus = 1;
  d.au_target = 0.9;
  d.accelerator_name = "H100";
  AnalysisInputs in;
  in.cpus_allowed = 4;
  in.sample_bytes = 1000;
  // 192 samples read and 1 failed (0.5%, within the share a verdict allows).
  LoaderResult r = fake_run(2, 192, 192000, 1.9, 0.1, 0.2);
  r.errors = 1;
  ErrorRecord e;
  e.err = 13;
  e.op = "open";
  e.path = "/d/f3";
  e.count = 1;
  r.error_samples.push_back(e);
  auto a = analyze_ingest(r, d, in);
  CHECK(a.verdict == "none");  // the enum is unchanged
  CHECK(a.gpus_fed == 1);
  CHECK_THAT(a.verdict_text, Catch::Contains("storage keeps up"));
  CHECK_THAT(a.verdict_text, Catch::Contains("but 1 failed read of 1 file (1% of the samples attempted)"));
  CHECK_THAT(a.verdict_text, Catch::Contains("the rate counts only the samples read"));
  // 9 files, one unreadable: 24 epochs of 8 samples read and 1 failed, 11% of the samples: the
  // rate is that of 8 files, not of the 9 given, so no verdict and no GPU fed.
  r.errors = 24;
  r.error_samples[0].count = 24;
  a = analyze_ingest(r, d, in);
  CHECK(a.verdict == "failed");
  CHECK(a.gpus_fed == 0);
  CHECK_THAT(a.verdict_text, Catch::StartsWith("24 failed reads of 1 file (11.1% of the samples attempted, more than "
                                               "the 1% a verdict allows)"));
  // An exact count of the files the failures hit, beyond the records kept.
  r.error_files = 12;
  r.error_files_exact = true;
  CHECK_THAT(analyze_ingest(r, d, in).verdict_text, Catch::StartsWith("24 failed reads of 12 files"));
  r.error_files = 0;
  r.error_files_exact = false;
  r.errors = 1;
  r.error_samples[0].count = 1;
  // Without failures, no such clause.
  r.errors = 0;
  r.error_samples.clear();
  CHECK_THAT(analyze_ingest(r, d, in).verdict_text, !Catch::Contains("failed"));
  // A failed run keeps its own text (no "but").
  r.samples = 0;
  r.errors = 9;
  CHECK_THAT(analyze_ingest(r, d, in).verdict_text, !Catch::Contains(", but"));
}

TEST_CASE("few batches per rank per epoch: the storage verdict is flagged, with what to do", "[ingest]") {
  // 1000 files, batch 256, one rank: 4 batches per epoch, 3 with drop_last.
  CHECK(batches_per_rank_epoch(1000, 1, 256, false) == 4);
  CHECK(batches_per_rank_epoch(1000, 1, 256, true) == 3);
  CHECK(batches_per_rank_epoch(1000, 2, 256, false) == 2);  // 500 per rank
  CHECK(batches_per_rank_epoch(0, 1, 256, false) == 0);
  CHECK(batches_per_rank_epoch(1000, 1, 0, false) == 0);
  const std::string w = few_batches_warning(4, 1, 256, "the storage verdict");
  CHECK_THAT(w, Catch::StartsWith("the storage verdict rests on 4 batches per rank per epoch"));
  CHECK_THAT(w, Catch::Contains("each epoch start waits for the first batch again"));
  CHECK_THAT(w, Catch::Contains("not measured"));
  CHECK_THAT(w, Catch::Contains("more --files (at least 5120 for 1 rank at batch size 256)"));
  CHECK_THAT(w, Catch::EndsWith("or a larger dataset with --duration"));
  CHECK_THAT(few_batches_warning(4, 1, 256, "the answer", "--point-time"),
             Catch::EndsWith("or a larger dataset with --point-time"));
  CHECK_THAT(few_batches_warning(1, 2, 8, "x"), Catch::Contains("1 batch per rank") && Catch::Contains("2 ranks"));
  CHECK(few_batches_warning(kFewBatchesPerEpoch, 1, 256, "x").empty());
  CHECK(few_batches_warning(0, 1, 256, "x").empty());
  CHECK_FALSE(few_batches_warning(kFewBatchesPerEpoch - 1, 1, 256, "x").empty());
}
