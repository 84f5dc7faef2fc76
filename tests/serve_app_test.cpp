// The app of `simumax-sim serve` in headless Chromium (issue #17): an edit shows the CLI's number, compare,
// search with a progress bar, downloads, and the form built from the readers' schema. Chromium missing fails.
#include <fstream>
#include <iostream>
#include <string>

#include <gtest/gtest.h>

#include "tests/serve_client.hpp"

namespace simumax::tests::serve {
namespace {

// The app in headless Chromium: the form loads the default scenario, the edit in the URL (#strategy.tp_size=2,
// typed into the tp_size field on load) is posted, and the headline shows the CLI's step time for tp 2.
TEST(Serve, AppInChromiumShowsTheCliNumberAfterAnEdit) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string dom = app_dom(s.port(), "strategy.tp_size=2", "serve_app.png");
  const std::string headline = "<p id=\"app-headline\"[^>]*>";
  ASSERT_EQ(tag_attr(dom, headline, "data-state"), "ok") << dom.substr(0, 2000);
  EXPECT_EQ(std::stod(tag_attr(dom, headline, "data-step-time-ms")), cli_step_time_ms(2));
  std::cout << "edit to numbers on screen: " << tag_attr(dom, headline, "data-update-ms") << " ms\n";
}

TEST(Serve, AppInChromiumComparesSearchesWithAProgressBarAndDownloads) {
  Server s({"--root", "models", "--root", "platforms", "--root", "scenarios", "--root", "tests/data/compare"});
  ASSERT_GT(s.port(), 0);
  const std::string req = default_request(1).dump();
  // Compare with a real trace under the served folders: the report's compare view, with the server's numbers.
  std::string dom = app_dom(s.port(), "real=compare/ranks/rank0.json&do=compare", "serve_compare.png");
  const Json cmp = body_of(post(s.port(), "/api/compare?real=compare/ranks/rank0.json", req))["compare"];
  EXPECT_EQ(tag_attr(dom, "<section id=\"compare\"[^>]*>", "data-ops"), std::to_string(cmp["ops"].size()));
  EXPECT_DOUBLE_EQ(std::stod(tag_attr(dom, "<rect[^>]*data-metric=\"total_ms\" data-side=\"real\"[^>]*>", "data-value")),
                   cmp["metrics"]["time"][0]["real"].get<double>());
  // A search: the progress bar ends full, and the scatter has every candidate the server evaluated.
  dom = app_dom(s.port(), "search.world_size=16&search.global_batch_size=64&search.seq_len=4096&do=search",
                "serve_search.png");
  const std::string bar = "<progress id=\"search-progress\"[^>]*>";
  EXPECT_EQ(tag_attr(dom, bar, "data-state"), "done");
  EXPECT_EQ(tag_attr(dom, bar, "data-done"), tag_attr(dom, bar, "data-total"));
  const Json st = body_of(get(s.port(), "/api/search"));
  ASSERT_EQ(st["state"], "done");
  EXPECT_EQ(tag_attr(dom, "<section id=\"search\"[^>]*>", "data-candidates"),
            std::to_string(st["result"]["search"]["candidates"].size()));
  EXPECT_EQ(tag_attr(dom, bar, "data-total"), std::to_string(st["total"].get<int>()));
  EXPECT_NE(dom.find("class=\"search-file\""), std::string::npos);
  // A download from the page: the bytes the server gives for these configs.
  for (const char* file : {"summary.json", "memory_snapshot.pickle"}) {
    dom = app_dom(s.port(), std::string("do=download:") + file);
    const std::string button = "<button id=\"download\"[^>]*>";
    EXPECT_EQ(tag_attr(dom, button, "data-state"), "done") << file;
    EXPECT_EQ(tag_attr(dom, button, "data-last-file"), file);
    EXPECT_EQ(tag_attr(dom, button, "data-last-bytes"),
              std::to_string(body_text(post(s.port(), std::string("/api/download?file=") + file, req)).size()));
  }
}

TEST(Serve, AppFormIsBuiltFromTheReadersSchemaWithNestedFieldsAndTheCliErrors) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const Json schema = body_of(post(s.port(), "/api/schema", default_request(1).dump()));
  EXPECT_EQ(schema["/strategy/tp_size"]["kind"], "integer");
  EXPECT_EQ(schema["/system/accelerator/mem_gbs"]["kind"], "number");
  EXPECT_EQ(schema["/strategy/fidelity"]["choices"], Json::array({"megatron", "simumax"}));
  EXPECT_FALSE(default_request(1)["strategy"].contains("fidelity"));  // known to the readers, absent from the file
  // A nested field made invalid: the message next to it is the CLI's, word for word.
  std::string dom = app_dom(s.port(), "system.accelerator.mem_gbs=-1");
  Json bad = default_request(1);
  bad["system"]["accelerator"]["mem_gbs"] = -1;
  const CliResult cli_bad = cli_run_of(bad, "bad", nullptr);
  ASSERT_EQ(cli_bad.exit_code, 2);
  const std::string cli_message = cli_bad.err.substr(cli_bad.err.find("scenario.json: "));
  EXPECT_EQ(tag_attr(dom, "<span[^>]*data-error=\"[^\"]*\"[^>]*>", "data-error") + "\n", cli_message);
  EXPECT_NE(dom.find("<details class=\"nested\" data-pointer=\"/system/accelerator\""), std::string::npos);
  // A nested edit and a field the file does not have: the CLI's step time and fit verdicts.
  dom = app_dom(s.port(), "system.accelerator.mem_gbs=40&strategy.fidelity=simumax", "serve_schema_form.png");
  Json edited = default_request(1);
  edited["system"]["accelerator"]["mem_gbs"] = 40;
  edited["strategy"]["fidelity"] = "simumax";
  Json summary;
  ASSERT_EQ(cli_run_of(edited, "edited", &summary).exit_code, 0);
  EXPECT_EQ(std::stod(tag_attr(dom, "<p id=\"app-headline\"[^>]*>", "data-step-time-ms")), summary["step_time_ms"].get<double>());
  for (const Json& st : summary["stages"]) {
    const std::string verdict = "<span[^>]*data-stage=\"" + std::to_string(st["stage"].get<int>()) + "\"[^>]*>";
    EXPECT_EQ(tag_attr(dom, verdict, "data-fits"), st["fits"].get<bool>() ? "true" : "false");
  }
  EXPECT_NE(dom.find("<select id=\"field-strategy-fidelity\" data-pointer=\"/strategy/fidelity\">"), std::string::npos);
}

// The what-if in the app: "what-if: against system" (#whatif=...) runs the form's configs on a second system and
// draws both side by side, each step time the CLI's for its configs.
TEST(Serve, AppInChromiumShowsAWhatIfOfTheFormOnASecondSystem) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string dom = app_dom(s.port(), "whatif=platforms/dgx_h100.json", "serve_whatif.png");
  const std::string headline = "<p id=\"app-headline\"[^>]*>";
  ASSERT_EQ(tag_attr(dom, headline, "data-state"), "ok") << dom.substr(0, 2000);
  Json on_h100 = default_request(1);
  on_h100["system"] = Json::parse(read_file("platforms/dgx_h100.json"));
  Json summary;
  ASSERT_EQ(cli_run_of(on_h100, "whatif-h100", &summary).exit_code, 0);
  EXPECT_EQ(std::stod(tag_attr(dom, headline, "data-step-time-ms")), cli_step_time_ms(1));
  EXPECT_EQ(std::stod(tag_attr(dom, headline, "data-whatif-step-time-ms")), summary["step_time_ms"].get<double>());
  EXPECT_DOUBLE_EQ(std::stod(tag_attr(dom, "<span class=\"whatif-step\" data-run=\"B\"[^>]*>", "data-step-time-ms")),
                   summary["step_time_ms"].get<double>());
  EXPECT_EQ(tag_attr(dom, "<section id=\"timeline-a\"[^>]*>", "data-axis-end-us"),
            tag_attr(dom, "<section id=\"timeline-b\"[^>]*>", "data-axis-end-us"));
  EXPECT_NE(dom.find("<section id=\"memory-b\""), std::string::npos);
}

}  // namespace
}  // namespace simumax::tests::serve
