#include "cli/commands.hpp"
#include "core/error.hpp"
namespace ioprobe::cli {
int cmd_run(const CommandContext&) { throw UsageError("run: not built yet"); }
int cmd_gen(const CommandContext&) { throw UsageError("gen: not built yet"); }
int cmd_report(const CommandContext&) { throw UsageError("report: not built yet"); }
}  // namespace ioprobe::cli
