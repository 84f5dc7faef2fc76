// The HTML report's page, style and scripts (web/report.html, .css, report.js, report_compare.js,
// report_whatif.js, report_sweep.js, report_charts.js, app.js), compiled in at
// build time (cmake/embed_web.cmake writes web_assets.cpp from them): the report needs no file and no network.
#pragma once

namespace simumax::report::web {

extern const char* const kReportHtml;  // the template: @TITLE@ twice, /*@CSS@*/, @DATA@, /*@JS@*/ once
extern const char* const kReportCss;
extern const char* const kReportJs;         // helpers, summary, timeline
extern const char* const kReportCompareJs;  // ours against a real run, links over time (after kReportJs)
extern const char* const kReportWhatIfJs;   // two runs side by side (after kReportCompareJs)
extern const char* const kReportSweepJs;    // a sweep's cases, chart and best per layout (after kReportWhatIfJs)
extern const char* const kReportChartsJs;   // memory, links, search; draws the page (after the three above)
extern const char* const kAppJs;            // simumax-sim serve's form and live update (after the four above)

}  // namespace simumax::report::web
