#include "cli/run_document_build.hpp"

#include <algorithm>

#include "engine/page_cache.hpp"
#include "report/document.hpp"

namespace ioprobe::cli {

void set_run_target(RunDocument& doc, const RunPlan& plan, const LoaderConfig& l, const LoaderResult& mine,
                    const CacheBudgetFit* fit) {
  doc.target = plan_target_section(plan, l);
  TargetRunFacts& f = doc.target.run.emplace();
  f.numa = l.placement.text();
  f.numa_reason = plan.numa_reason;
  f.epoch_resident_fraction = mine.epoch_resident_fraction;
  f.residency_method = mine.residency_method;
  for (double r : mine.epoch_resident_fraction) f.epoch_source.emplace_back(residency_source(r));
  if (fit)
    f.cache_budget = TargetCacheBudget{.bytes = fit->bytes,
                                       .source = fit->source,
                                       .dataset_bytes = fit->dataset_bytes,
                                       .fits = fit->dataset_bytes <= fit->bytes};
}

void set_run_dataset(RunDocument& doc, const RunPlan& plan, const LoaderResult& lr, uint64_t known_bytes) {
  doc.targets = target_share_sections(plan.targets);
  DatasetSection& ds = doc.dataset;
  ds = plan.data.dataset;
  // Unknown sizes: the bytes of a whole epoch, from the completed epochs only (an epoch a stop cut
  // short is not one); with none completed, what was delivered is a lower bound.
  uint64_t whole_epochs_bytes = 0;
  for (size_t i = 0; i < std::min<size_t>(lr.epochs_completed, lr.epoch_bytes.size()); ++i)
    whole_epochs_bytes += lr.epoch_bytes[i];
  ds.bytes = known_bytes                                 ? known_bytes
             : lr.epochs_completed && whole_epochs_bytes ? whole_epochs_bytes / lr.epochs_completed
                                                         : lr.bytes;
  if (!known_bytes && !(lr.epochs_completed && whole_epochs_bytes))
    ds.bytes_basis = "at least: no epoch completed, so the bytes delivered before the stop";
  if (known_bytes && !plan.dataset_bytes_basis.empty()) ds.bytes_basis = plan.dataset_bytes_basis;
}

}  // namespace ioprobe::cli
