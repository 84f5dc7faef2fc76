// The one request body `simumax-sim serve` accepts (POST /api/run): a scenario whose model, strategy and system
// are inline JSON objects. Checked here (JSON stays in config/ and report/) before anything reads it.
#pragma once

#include <string>

namespace simumax::report {

// Returns `body` re-serialised, as a scenario file's text, when it is a JSON object with inline objects "model",
// "strategy", "system" and optionally "name" (a string of at most 200 characters), "model_overrides",
// "strategy_overrides" (objects), nothing else: no path, so a request can never make the server read a file.
// Throws common::ConfigError("request", json-pointer, what) otherwise; the message never quotes the body.
std::string inline_scenario_text(const std::string& body);

// The same request's three configs as files' texts, the overrides merged in (for the readers that take one file
// per config: the search's base). Throws as inline_scenario_text.
struct InlineConfigs {
  std::string model, strategy, system;
};
InlineConfigs inline_config_texts(const std::string& body);

}  // namespace simumax::report
