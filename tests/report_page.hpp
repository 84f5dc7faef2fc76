// What the HTML report tests read from a page: the JSON it inlines for its scripts.
#pragma once

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace simumax::tests {

// The JSON between <script type="application/json" id="report-data"> and </script>; a page without it fails
// the calling test (and parsing the empty rest throws).
inline nlohmann::json page_data(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"report-data\">";
  const size_t at = page.find(open);
  EXPECT_NE(at, std::string::npos) << "the page has no report-data script";
  const size_t from = at == std::string::npos ? page.size() : at + open.size();
  const size_t to = page.find("</script>", from);
  return nlohmann::json::parse(page.substr(from, to == std::string::npos ? std::string::npos : to - from));
}

}  // namespace simumax::tests
