// "Did you mean ..." suggestions for error messages about misspelt names.
#pragma once

#include <string>
#include <vector>

namespace simumax::platform {

// " (did you mean \"x\"?)" for the candidate closest to `wrong` within a few edits (ties: the smallest
// name, so messages are reproducible), or "" if none is close.
std::string did_you_mean(const std::string& wrong, const std::vector<std::string>& candidates);

}  // namespace simumax::platform
