// simumax_sim._core: the engine in-process for Python. Errors become Python exceptions carrying the CLI's text:
// ConfigError (a ValueError: "file: /json/pointer: message", with .file, .pointer, .message), UsageError (a
// ValueError) and InternalError (a RuntimeError, our fault); nothing the engine throws ends the interpreter.
#include <pybind11/pybind11.h>

#include "engine/common/error.hpp"
#include "engine/common/install_paths.hpp"
#include "engine/common/version.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m) {
  m.doc() = "simumax-sim's engine (the Python package simumax_sim wraps it in SimuMax's PerfLLM shape)";
  m.attr("__version__") = simumax::common::version();
  // Owned by the module for the interpreter's life: the translator below raises them.
  static py::handle config_error = py::exception<simumax::common::ConfigError>(m, "ConfigError", PyExc_ValueError);
  static py::handle usage_error = py::exception<simumax::common::UsageError>(m, "UsageError", PyExc_ValueError);
  static py::handle internal_error =
      py::exception<simumax::common::InternalError>(m, "InternalError", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const simumax::common::ConfigError& e) {
      py::object exc = config_error(e.what());
      exc.attr("file") = e.file();
      exc.attr("pointer") = e.pointer();
      exc.attr("message") = e.message();
      PyErr_SetObject(config_error.ptr(), exc.ptr());
    } catch (const simumax::common::UsageError& e) {
      PyErr_SetString(usage_error.ptr(), e.what());
    } catch (const simumax::common::InternalError& e) {
      PyErr_SetString(internal_error.ptr(), e.what());
    }
  });
  m.def("data_dir", [] { return simumax::common::data_dir().string(); },
        "the folder of the shipped data (data/, models/, platforms/, scenarios/): $SIMUMAX_DATA_DIR, else found "
        "beside this module");
  simumax::python::bind_run(m);
  simumax::python::bind_search(m);
}
