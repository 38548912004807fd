// The replay result document (kind "replay"): a typed ReplayDocument built once by `ioprobe
// replay` from the trace, the settings and the ReplayResult, its JSON (both ways, strict), its
// analysis (elapsed against the recording, AU on this storage against the recorded AU, the
// verdict) and its text. `ioprobe report` decodes a saved document into the same type, and
// `report --merge` merges replays with ReplayResult::merge.
//
// Document sections besides the common header (report/document.hpp):
//   trace     {path, source, host, command, anonymized, duration_ns, limits, streams, ops,
//              read_bytes, mapped_bytes, mapped_sampled, ranks}
//   settings  {gaps, as_fast_as_possible, cache, direct, engine, engine_reason, maps, dir,
//              files_mapped, files_reused, files_created, bytes_laid_out, gaps_total,
//              gaps_without_cpu, rank_rule}
//   replay    replay/replay_result.hpp's codec (ns and bytes, histograms with buckets)
//   device_io report/device_io_report.hpp's section, read_ratio against replay.bytes
//   analysis  {elapsed_ratio, recorded_au, replayed_au, wait_share, verdict} (derived; rewritten
//             on every encode, not read back)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/engine_kind.hpp"
#include "replay/replay_result.hpp"
#include "report/document_sections.hpp"
#include "topology/device_io.hpp"
#include "topology/host.hpp"
#include "topology/target.hpp"

namespace ioprobe {

/// What the replayed trace was.
struct ReplayTraceInfo {
  std::string path;                  // the trace file, raw bytes
  std::string source;                // "ioprobe record", "dftracer", "strace"
  std::string host;                  // where it was recorded
  std::vector<std::string> command;  // the recorded command line
  bool anonymized = false;
  int64_t duration_ns = 0;          // the job's recorded elapsed time
  std::vector<std::string> limits;  // what the source cannot see, in words
  uint64_t streams = 0;             // recorded threads
  uint64_t ops = 0;
  uint64_t read_bytes = 0;      // bytes the recorded reads returned
  uint64_t mapped_bytes = 0;    // bytes of data files mapped (not seen read)
  bool mapped_sampled = false;  // whether the recorder observed which mapped pages were touched
  std::vector<int32_t> ranks;   // recorded ranks
};

/// How the replay ran.
struct ReplaySettings {
  std::string gaps = "recorded";  // replay/replay_plan.hpp gap_mode_name
  bool as_fast_as_possible = false;
  std::string cache = "cold";  // "cold" (pages evicted first) | "warm"
  bool direct = false;         // O_DIRECT reads
  EngineKind engine = EngineKind::kPsync;
  std::string engine_reason;
  std::vector<std::string> maps;  // the --map rules as given
  std::string dir;                // --dir, "" none
  uint64_t files_mapped = 0, files_reused = 0, files_created = 0;
  uint64_t bytes_laid_out = 0;
  uint64_t gaps_total = 0;        // op gaps replayed
  uint64_t gaps_without_cpu = 0;  // of those, without a recorded thread CPU (slept under --gaps recorded)
  std::string rank_rule;          // which recorded rank each process replayed, in words
};

/// A replay document.
struct ReplayDocument {
  nlohmann::json header;  // report/document.hpp document_header (schema, version, kind, command, host)
  TargetSection target;   // the replayed files' filesystem (report/document_sections.hpp)
  ReplayTraceInfo trace;
  ReplaySettings settings;
  replay::ReplayResult result;
  DeviceIo device_io;  // the target's devices over the replay (diskstats), source "none" with the
                       // reason where not measured (tmpfs, across hosts)
  std::vector<std::string> warnings;
  std::vector<std::string> sources;  // report --merge: the merged files
};

/// What the document means, derived from it.
struct ReplayAnalysis {
  double elapsed_ratio = 0;  // the job's time here / recorded (training loop when batches are marked,
                             // else the streams' span), 0 unknown
  double recorded_au = 0;    // 0..1, 0 without batch marks
  double replayed_au = 0;
  double wait_share = 0;      // share of the job's time here spent waiting for batches (or blocked in reads)
  bool from_batches = false;  // the figures come from the batch timeline
  std::string verdict;        // "on this target your job would have run 1.8x longer; 62% of it waiting on ..."
};

ReplayAnalysis analyse_replay(const ReplayDocument& doc);

/// Sets the document's common header (document_header: kind "replay", `argv`, `host`) and target.
void set_replay_header(ReplayDocument& doc, const std::vector<std::string>& argv, const HostInfo& host,
                       const TargetInfo& target);

/// Writes the document to `path` atomically (report/document.hpp write_json_file).
void write_replay_document(const std::string& path, const ReplayDocument& doc);

/// The JSON text of a ReplayResult for a gather across processes, and its strict inverse
/// (`where` names the sender in messages).
std::string encode_replay_part(const replay::ReplayResult& r);
replay::ReplayResult decode_replay_part(const std::string& text, const std::string& where);

/// The whole document (header, sections above).
nlohmann::json replay_document_json(const ReplayDocument& doc);
/// Strict inverse: throws UsageError naming `where` and the path of a missing or mistyped field.
ReplayDocument replay_document_from_json(const nlohmann::json& j, const std::string& where);

/// The text report.
std::string render_replay_text(const ReplayDocument& doc);

/// One document of several replays of the same trace (e.g. one per host): results merged with
/// ReplayResult::merge, the first document's header, trace and settings, `names` as sources.
/// Throws UsageError when the documents replayed different traces (naming both).
ReplayDocument merge_replay_documents(const std::vector<ReplayDocument>& docs, const std::vector<std::string>& names);

}  // namespace ioprobe
