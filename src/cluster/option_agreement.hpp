// Every process of a multi-host job must run the same plan: the same options, compared at
// set-up, before any I/O. One process started with other options (mpirun's MPMD form,
// `-np 1 ioprobe --workers 4 : -np 1 ioprobe --workers 1`, a host whose workload INI file
// differs) is refused, naming the rank, its host, the option and both values, instead of a job
// whose merged report describes rank 0's options only.
#pragma once

#include <string>
#include <vector>

#include "comm/comm.hpp"

namespace ioprobe::cluster {

/// One option as this process resolved it: `option` as the user writes it ("--workers"),
/// `value` its text after parsing (INI values included; a name normalized where several
/// spellings mean one thing, e.g. --gpu's catalog key), `given` false when left to its default.
struct OptionValue {
  std::string option;
  std::string value;
  bool given = false;
};

/// One process's options and where it runs, as compared.
struct RankOptions {
  int rank = 0;
  std::string host;
  std::vector<OptionValue> options;
};

/// The mismatches of `all` (one entry per rank, rank 0 first) against rank 0's options: "" when
/// every rank agrees, else one line per differing (rank, option), at most `max_lines` of them
/// and a count of the rest, e.g. "rank 1 on host h2: --workers 1, rank 0 (host h1) has 4". An
/// option one rank gives and another leaves to its default differs too ("not given").
std::string options_mismatch(const std::vector<RankOptions>& all, size_t max_lines = 8);

/// Collective: gathers every process's `mine` and compares them with rank 0's. When any differs,
/// throws JobFailure (exit 2) on every process, the message on rank 0: `command`, each
/// mismatch, and what to do (start every process with the same options). With one process it
/// returns at once. `timeout_s`: the watchdog of the exchange (0: none).
void check_options_agree(comm::Comm& comm, const std::string& command, const std::vector<OptionValue>& mine,
                         double timeout_s);

}  // namespace ioprobe::cluster
