// `ioprobe run`'s result document (report/run_document.hpp RunDocument), built from the plan and
// what the run measured: the target and dataset sections are assembled here from the plan.
#pragma once

#include <cstdint>
#include <string>

#include "cli/run_plan.hpp"
#include "loader/config.hpp"
#include "loader/loader_result.hpp"
#include "report/run_document.hpp"

namespace ioprobe::cli {

/// The page-cache budget a warm run was checked against before it started: `bytes` the budget
/// (B), `source` where it comes from, `dataset_bytes` the dataset's known bytes (B).
struct CacheBudgetFit {
  uint64_t bytes = 0;
  std::string source;
  uint64_t dataset_bytes = 0;
};

/// doc.target: plan_target_section with this process's NUMA placement, the residency measured before
/// each epoch of `mine` (this process's result) and, when a warm run was checked, its cache budget.
void set_run_target(RunDocument& doc, const RunPlan& plan, const LoaderConfig& l, const LoaderResult& mine,
                    const CacheBudgetFit* fit);

/// doc.targets and doc.dataset: the plan's dataset section with its bytes per epoch: `known_bytes`
/// (B) when the sizes are known, else those of the completed epochs of `lr`, else the bytes `lr`
/// delivered (a lower bound, with bytes_basis saying so).
void set_run_dataset(RunDocument& doc, const RunPlan& plan, const LoaderResult& lr, uint64_t known_bytes);

}  // namespace ioprobe::cli
