// A calibration for the unit tests: the driver's output as python/ioprobe_calibrate.py prints it
// (figures from a run on this host, rounded), the document made from it, and a document's refusal.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.hpp"
#include "core/error.hpp"

namespace ioprobe::test {

using nlohmann::json;

inline json spread(double mean, double lo, double hi) {
  return {{"mean", mean}, {"p10", lo}, {"p50", mean}, {"p90", hi}, {"min", lo}, {"max", hi}, {"n", 15}};
}

inline json driver_output() {
  json rows = json::array();
  rows.push_back({{"num_workers", 0},
                  {"pin_memory", false},
                  {"batches", 15},
                  {"samples", 960},
                  {"samples_per_s", 2638.9},
                  {"main_cpu_per_batch_us", 3184.0},
                  {"main_thread_cpu_per_batch_us", spread(2973, 2756, 3104)},
                  {"bytes_per_batch", spread(16384, 16384, 16384)},
                  {"inprocess_cpu_per_sample_us", 49.75}});
  rows.push_back({{"num_workers", 0},
                  {"pin_memory", true},
                  {"batches", 15},
                  {"samples", 960},
                  {"samples_per_s", 1695.6},
                  {"main_cpu_per_batch_us", 4576.5},
                  {"main_thread_cpu_per_batch_us", spread(4223, 2590, 4848)},
                  {"bytes_per_batch", spread(16384, 16384, 16384)},
                  {"inprocess_cpu_per_sample_us", 71.5},
                  {"pin_cpu_per_batch_us", spread(137.1, 50, 215.9)}});
  for (int w : {1, 2}) {
    rows.push_back({{"num_workers", w},
                    {"pin_memory", false},
                    {"batches", 15},
                    {"samples", 960},
                    {"samples_per_s", 6395.2},
                    {"main_cpu_per_batch_us", w == 1 ? 1573.5 : 1700.5},
                    {"main_thread_cpu_per_batch_us", spread(1152, 1000, w == 1 ? 1300 : 1500)},
                    {"bytes_per_batch", spread(16384, 16384, 16384)},
                    {"worker_cpu_per_sample_us", w == 1 ? 52.0 : 60.0},
                    {"worker_loop_cpu_per_sample_us", w == 1 ? 30.0 : 34.0},
                    {"worker_put_cpu_per_sample_us", w == 1 ? 22.0 : 26.0},
                    {"worker_startup_s", spread(w == 1 ? 0.777 : 0.9, w == 1 ? 0.777 : 0.85, w == 1 ? 0.777 : 0.95)},
                    {"worker_startup_cpu_s", spread(w == 1 ? 0.1 : 0.2, w == 1 ? 0.1 : 0.15, w == 1 ? 0.1 : 0.25)},
                    {"main_startup_cpu_s", w == 1 ? 0.01 : 0.03}});
    rows.push_back({{"num_workers", w},
                    {"pin_memory", true},
                    {"batches", 15},
                    {"samples", 960},
                    {"samples_per_s", 8013.6},
                    {"main_cpu_per_batch_us", 1519.1},
                    {"main_thread_cpu_per_batch_us", spread(979, 900, 1100)},
                    {"bytes_per_batch", spread(16384, 16384, 16384)},
                    {"worker_cpu_per_sample_us", 52.0},
                    {"worker_startup_s", spread(0.826, 0.826, 0.826)},
                    {"pin_cpu_per_batch_us", spread(w == 1 ? 118.4 : 130.0, 40, 300)}});
  }
  for (json& r : rows) r["dataset_samples"] = 1024;  // a sample per file
  return {{"python", "/usr/bin/python3"},
          {"python_version", "3.11.2"},
          {"torch_version", "1.13.0a0"},
          {"cuda_available", false},
          {"pin_method", "copy into an mlock'ed buffer (torch without CUDA cannot pin memory)"},
          {"collate", "torch default_collate"},
          {"dataset_kind", "map-style"},
          {"files", 1024},
          {"data_bytes", 3498712},
          {"batch_size", 64},
          {"rows", rows}};
}

inline Calibration sample_calibration() {
  Calibration c = calibration_from_driver(driver_output(), "test");
  c.ioprobe_version = "0.1.0";
  c.created = "2026-12-01T23:00:00Z";
  c.command = {"ioprobe", "calibrate"};
  c.code_file = "/home/u/train.py";
  c.function = "make_dataset";
  c.data_dir = "/data/train";
  c.hostname = "h";
  c.kernel = "6.1";
  c.cpus_allowed = 2;
  return c;
}

inline std::string refusal(json j) {
  try {
    calibration_from_json(j, "cal.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace ioprobe::test
