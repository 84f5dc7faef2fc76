// The pieces of the _core module (module.cpp registers them): scenarios and runs, and the strategy search.
#pragma once

#include <pybind11/pybind11.h>

namespace simumax::python {

// _core.Scenario, load_scenario*, read_config_json, Run and run().
void bind_run(pybind11::module_& m);
// _core.SearchRun, search_base() and search().
void bind_search(pybind11::module_& m);

}  // namespace simumax::python
