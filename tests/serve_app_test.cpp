// The app of `simumax-sim serve` in headless Chromium (issue #17): an edit shows the CLI's number, compare,
// search with a progress bar, downloads, and the form built from the readers' schema; where the answer sits on
// the page (issue 34), measured from the DOM. Chromium missing fails.
#include <algorithm>
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

// A layout number the app records on #app (web/app.js recordLayout), px.
double layout_px(const std::string& dom, const std::string& name) {
  const std::string v = tag_attr(dom, "<section id=\"app\"[^>]*>", "data-" + name);
  EXPECT_NE(v.find_first_of("0123456789"), std::string::npos) << name << ": " << v;
  return v.find_first_of("0123456789") == std::string::npos ? -1 : std::stod(v);
}

// Issue 34: the answer (headline, summary with the fit verdicts) sits beside the form in the first screen at
// 1400x900 (it was at y=1429, below ~75 fields), the timeline starts in the first screen at the page's width, and
// every strategy field of the schema is in the form, the uncommon ones in folded groups.
TEST(Serve, AppShowsTheAnswerBesideTheGroupedFormInTheFirstScreen) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string dom = app_dom(s.port(), "", "serve_layout.png", "1400,900");
  ASSERT_EQ(tag_attr(dom, "<p id=\"app-headline\"[^>]*>", "data-state"), "ok") << dom.substr(0, 2000);
  const double viewport = layout_px(dom, "viewport-height"), page = layout_px(dom, "page-width");
  std::cout << "answer top " << layout_px(dom, "answer-top") << " px, summary top " << layout_px(dom, "summary-top")
            << " px, timeline top " << layout_px(dom, "timeline-top") << " px, timeline width "
            << layout_px(dom, "timeline-width") << " of " << page << " px, page height " << layout_px(dom, "page-height")
            << " px, viewport " << viewport << " px\n";
  EXPECT_LT(layout_px(dom, "answer-top"), viewport / 2);
  EXPECT_LT(layout_px(dom, "summary-top") + 200, viewport);  // the step time, MFU and the verdicts' table
  EXPECT_LT(layout_px(dom, "timeline-top"), viewport);
  EXPECT_GE(layout_px(dom, "timeline-width"), 0.8 * page);
  EXPECT_NE(dom.find("<table id=\"summary-head\""), std::string::npos);
  // The common fields first, outside any group; the others folded; none lost.
  const size_t common = dom.find("id=\"group-common\"");
  ASSERT_NE(common, std::string::npos);
  for (const char* key : {"tp_size", "pp_size", "cp_size", "ep_size", "micro_batch_size", "enable_recompute"}) {
    const size_t at = dom.find(std::string("data-pointer=\"/strategy/") + key + "\"");
    EXPECT_GT(at, common) << key;
    EXPECT_LT(at, dom.find("<details class=\"group\"")) << key;
  }
  EXPECT_EQ(dom.find("<details class=\"group\" open"), std::string::npos);
  const Json schema = body_of(post(s.port(), "/api/schema", default_request(1).dump()));
  int fields = 0;
  for (const auto& [pointer, f] : schema.items()) {
    if (pointer.rfind("/strategy/", 0) != 0 || pointer.find('/', 10) != std::string::npos) continue;
    ++fields;
    EXPECT_NE(dom.find("data-pointer=\"" + pointer + "\""), std::string::npos) << pointer;
  }
  EXPECT_GT(fields, 60);
}

// Issue 34: the what-if (the form's configs on a second system) is drawn at the page's width, below the answer.
TEST(Serve, AppDrawsTheWhatIfAtThePageWidth) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string dom = app_dom(s.port(), "whatif=platforms/dgx_h100.json", "serve_layout_whatif.png", "1400,900");
  ASSERT_EQ(tag_attr(dom, "<p id=\"app-headline\"[^>]*>", "data-state"), "ok") << dom.substr(0, 2000);
  const double page = layout_px(dom, "page-width");
  std::cout << "what-if width " << layout_px(dom, "whatif-width") << " px, its first timeline "
            << layout_px(dom, "timeline-width") << " px, of " << page << " px\n";
  EXPECT_GE(layout_px(dom, "whatif-width"), 0.8 * page);
  EXPECT_GE(layout_px(dom, "timeline-width"), 0.8 * page);
  EXPECT_LT(layout_px(dom, "summary-top"), layout_px(dom, "viewport-height"));
}

// Issue 34: typing tp_size 3 (world size 8 is then not a multiple of tp·cp·pp) shows the CLI's message and removes
// the result of the configs before it: no step time, summary or timeline stays on screen beside the error.
TEST(Serve, AppRemovesTheLastResultWhenAnEditIsRefused) {
  Server s;
  ASSERT_GT(s.port(), 0);
  const std::string dom = app_dom(s.port(), "type.strategy.tp_size=3", "serve_layout_error.png", "1400,900");
  const std::string headline = "<p id=\"app-headline\"[^>]*>";
  EXPECT_EQ(tag_attr(dom, headline, "data-state"), "error") << dom.substr(0, 2000);
  EXPECT_EQ(tag_attr(dom, headline, "data-step-time-ms"), "<no attribute>");
  EXPECT_EQ(dom.find("id=\"summary-head\""), std::string::npos);
  EXPECT_EQ(dom.find("<section id=\"timeline\""), std::string::npos);
  EXPECT_EQ(dom.find("<section id=\"memory"), std::string::npos);
  EXPECT_NE(dom.find("<p id=\"app-error\" class=\"nofit\">scenario.json: /strategy/world_size: 8 is not a multiple"),
            std::string::npos);
  EXPECT_NE(dom.find("data-error=\"scenario.json: /strategy/world_size: "), std::string::npos);
  EXPECT_NE(dom.find("id=\"field-strategy-tp_size\""), std::string::npos);
}

// Issue 34: "real run" offers the traces and logs only (it offered every model and platform file, and picked the
// first), and starts at "(none)".
TEST(Serve, AppRealRunListHoldsTracesAndLogsOnlyAndStartsAtNone) {
  Server s({"--root", "models", "--root", "platforms", "--root", "scenarios", "--root", "tests/data/compare"});
  ASSERT_GT(s.port(), 0);
  const Json files = body_of(get(s.port(), "/api/real-runs"))["files"];
  for (const char* real : {"compare/ranks/rank0.json", "compare/run/trace.json.gz", "compare/megatron_sample.log",
                           "compare/broken.json"}) {  // broken: compare says what is wrong with it
    EXPECT_NE(std::find(files.begin(), files.end(), real), files.end()) << real;
  }
  for (const Json& f : files) {
    const std::string name = f.get<std::string>();
    EXPECT_EQ(name.rfind("compare/", 0), 0u) << name;  // no model, platform or scenario
    EXPECT_NE(name, "compare/bad_classes.json");        // a kernel-class table
    EXPECT_NE(name, "compare/run/summary.json");
    EXPECT_NE(name, "compare/nccl_collectives.json");   // reference figures, not a trace
  }
  const std::string dom = app_dom(s.port(), "");
  const std::string pick = dom.substr(dom.find("<select id=\"pick-real\""));
  const std::string options = pick.substr(0, pick.find("</select>"));
  EXPECT_EQ(options.find("models/"), std::string::npos);
  EXPECT_EQ(options.find("platforms/"), std::string::npos);
  EXPECT_NE(options.find("<option value=\"\">(none)</option><option value=\"compare/"), std::string::npos) << options;
  // Served without traces: "(none)" alone, and "compare" says there is nothing to compare with.
  Server plain;
  ASSERT_GT(plain.port(), 0);
  EXPECT_EQ(body_of(get(plain.port(), "/api/real-runs"))["files"], Json::array());
  const std::string dom2 = app_dom(plain.port(), "do=compare");
  EXPECT_NE(dom2.find("<select id=\"pick-real\" data-count=\"0\"><option value=\"\">(none)</option></select>"),
            std::string::npos);
  EXPECT_NE(dom2.find("no trace or log under the served folders"), std::string::npos);
}

}  // namespace
}  // namespace simumax::tests::serve
