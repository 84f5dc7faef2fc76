// simumax-sim: predicts the step time and memory of Megatron-style LLM training from SimuMax's configs.
#include <cstdio>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"
#include "engine/common/logging.hpp"
#include "engine/common/version.hpp"
#include "tools/cli_checks.hpp"
#include "tools/commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"simumax-sim: simulate one training step of a Megatron-style LLM job on a GPU cluster"};
  app.set_version_flag("--version", std::string("simumax-sim ") + simumax::common::version());
  app.require_subcommand(1);
  // Options a subcommand does not know go up to the app: `run x.json --log-level info` works as the README writes.
  app.fallthrough();
  std::string log_level = "warn";
  app.add_option("--log-level", log_level, "log level on stderr: trace, debug, info (one line per pipeline stage), warn, error, off; before or after "
                 "the command")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  std::vector<std::function<int()>> actions = {
      simumax::tools::add_run(app),      simumax::tools::add_validate(app),  simumax::tools::add_calibrate(app),         simumax::tools::add_search(app, argv[0]),
      simumax::tools::add_compare(app),  simumax::tools::add_platform(app),         simumax::tools::add_bench(app, argv[0]),
      simumax::tools::add_report(app), simumax::tools::add_serve(app),    simumax::tools::add_sweep(app),
      simumax::tools::add_completion(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    std::string what = e.what();
    if (const std::string unknown = simumax::tools::unknown_option_message(app, "simumax-sim", argc, argv); !unknown.empty()) {
      what = unknown;
    } else if (what == "A subcommand is required" && argc > 1 && argv[1][0] != '-') {
      std::string names;
      for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
        names += (names.empty() ? "" : ", ") + sub->get_name();
      }
      what = std::string("unknown command '") + argv[1] + "'; commands: " + names;
    }
    std::fprintf(stderr, "error: %s\nRun 'simumax-sim --help' for more information.\n", what.c_str());
    return 2;
  }
  if (const std::string bad = simumax::tools::non_finite_option(app); !bad.empty()) {
    std::fprintf(stderr, "error: %s\n", bad.c_str());
    return 2;
  }
  simumax::common::set_log_level(log_level);
  simumax::common::install_interrupt_handler();
  try {
    // Each action returns -1 when its subcommand was not the one chosen.
    for (auto& action : actions) {
      if (int rc = action(); rc >= 0) return rc;
    }
    return 0;
  } catch (const simumax::common::ConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const simumax::common::UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 3;
  }
}
