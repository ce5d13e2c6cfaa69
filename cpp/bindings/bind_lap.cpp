// linear_sum_assignment for Python, with scipy.optimize.linear_sum_assignment's conventions.
//
// Written against the CPython vectorcall protocol and numpy's C API (through pybind11's npy_api)
// rather than pybind11's dispatcher: small matrices are solved in well under a microsecond, so
// argument parsing and building the result arrays are most of the cost of a call.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <span>

#include "long_call.hpp"
#include "servelab/core/errors.hpp"
#include "servelab/solvers/lap/assignment.hpp"

namespace servelab::bindings {
namespace {

namespace npd = pybind11::detail;
using npy = npd::npy_api;

// Above this many entries the solve releases the GIL (and listens for Ctrl-C).
constexpr std::int64_t kLongCallEntries = 64 * 64;
// Above this many entries the thread's solver drops its scratch buffers after the call.
constexpr std::int64_t kKeepScratchEntries = std::int64_t{1} << 22;

// One solver per thread: its scratch buffers persist, so repeated calls do not allocate.
solvers::AssignmentSolver& thread_solver() {
  thread_local solvers::AssignmentSolver solver;
  return solver;
}

// The cost matrix as a C-contiguous, aligned, native float64 array: the object itself when it
// already is one (no copy), else numpy's conversion (safe casts only: bool, ints, floats).
PyObject* as_float64_matrix(PyObject* cost) {
  const auto& api = npy::get();
  if (api.PyArray_Check_(cost)) {
    const auto* proxy = npd::array_proxy(cost);
    const auto* descr = npd::array_descriptor_proxy(proxy->descr);
    constexpr int flags = npy::NPY_ARRAY_C_CONTIGUOUS_ | npy::NPY_ARRAY_ALIGNED_;
    if (descr->type_num == npy::NPY_DOUBLE_ && descr->byteorder != '>' && (proxy->flags & flags) == flags) {
      Py_INCREF(cost);
      return cost;
    }
  }
  return api.PyArray_FromAny_(cost, api.PyArray_DescrFromType_(npy::NPY_DOUBLE_), 0, 0,
                              npy::NPY_ARRAY_C_CONTIGUOUS_ | npy::NPY_ARRAY_ALIGNED_ | npy::NPY_ARRAY_ENSUREARRAY_,
                              nullptr);
}

PyObject* new_index_array(Py_intptr_t size) {
  const auto& api = npy::get();
  return api.PyArray_NewFromDescr_(api.PyArray_Type_, api.PyArray_DescrFromType_(npy::NPY_INT64_), 1, &size, nullptr,
                                   nullptr, 0, nullptr);
}

std::int64_t* index_data(PyObject* array) { return reinterpret_cast<std::int64_t*>(npd::array_proxy(array)->data); }

// (row_ind, col_ind): row_ind ascending, one pair per assigned row.
PyObject* to_python(const solvers::Assignment& result, std::int64_t rows, std::int64_t cols) {
  const std::int64_t pairs = rows < cols ? rows : cols;
  PyObject* row_ind = new_index_array(pairs);
  if (!row_ind) return nullptr;
  PyObject* col_ind = new_index_array(pairs);
  if (!col_ind) {
    Py_DECREF(row_ind);
    return nullptr;
  }
  auto* r = index_data(row_ind);
  auto* c = index_data(col_ind);
  std::int64_t k = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const auto j = result.row_to_col[i];
    if (j >= 0) {
      r[k] = i;
      c[k] = j;
      ++k;
    }
  }
  PyObject* out = PyTuple_New(2);
  if (!out) {
    Py_DECREF(row_ind);
    Py_DECREF(col_ind);
    return nullptr;
  }
  PyTuple_SET_ITEM(out, 0, row_ind);
  PyTuple_SET_ITEM(out, 1, col_ind);
  return out;
}

PyObject* solve_matrix(PyObject* cost_obj, bool maximize) {
  PyObject* array = as_float64_matrix(cost_obj);
  if (!array) return nullptr;
  const auto* proxy = npd::array_proxy(array);
  if (proxy->nd != 2) {
    PyErr_Format(PyExc_ValueError, "cost_matrix must be a 2-D array, got %d dimension(s)", proxy->nd);
    Py_DECREF(array);
    return nullptr;
  }
  const std::int64_t rows = proxy->dimensions[0], cols = proxy->dimensions[1];
  const std::span<const double> cost(reinterpret_cast<const double*>(proxy->data),
                                     static_cast<std::size_t>(rows * cols));
  PyObject* out = nullptr;
  try {
    auto& solver = thread_solver();
    const solvers::Assignment* result;
    if (rows * cols >= kLongCallEntries) {
      result = run_long([&] { return &solver.solve(cost, rows, cols, maximize); });
    } else {
      result = &solver.solve(cost, rows, cols, maximize);
    }
    out = to_python(*result, rows, cols);
    // Scratch sized for a huge matrix would stay with the thread for good: let it go.
    if (rows * cols > kKeepScratchEntries) solver = solvers::AssignmentSolver();
  } catch (...) {
    npd::try_translate_exceptions();
  }
  Py_DECREF(array);
  return out;
}

bool keyword_is(PyObject* name, const char* expected) {
  return PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, expected) == 0;
}

// linear_sum_assignment(cost_matrix, maximize=False)
PyObject* linear_sum_assignment(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* cost = nargs > 0 ? args[0] : nullptr;
  PyObject* maximize = nargs > 1 ? args[1] : nullptr;
  if (nargs > 2) {
    PyErr_Format(PyExc_TypeError, "linear_sum_assignment() takes at most 2 positional arguments (%zd given)", nargs);
    return nullptr;
  }
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* name = PyTuple_GET_ITEM(kwnames, k);
    PyObject** slot = keyword_is(name, "cost_matrix") ? &cost : keyword_is(name, "maximize") ? &maximize : nullptr;
    if (!slot) {
      PyErr_Format(PyExc_TypeError, "linear_sum_assignment() got an unexpected keyword argument '%U'", name);
      return nullptr;
    }
    if (*slot) {
      PyErr_Format(PyExc_TypeError, "linear_sum_assignment() got multiple values for argument '%U'", name);
      return nullptr;
    }
    *slot = args[nargs + k];
  }
  if (!cost) {
    PyErr_SetString(PyExc_TypeError, "linear_sum_assignment() missing required argument 'cost_matrix'");
    return nullptr;
  }
  int max = 0;
  if (maximize && (max = PyObject_IsTrue(maximize)) < 0) return nullptr;
  return solve_matrix(cost, max != 0);
}

PyMethodDef linear_sum_assignment_def = {
    "linear_sum_assignment", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&linear_sum_assignment)),
    METH_FASTCALL | METH_KEYWORDS,
    "linear_sum_assignment(cost_matrix, maximize=False) -> (row_ind, col_ind)\n\n"
    "Solve the linear sum assignment problem (Jonker-Volgenant), like\n"
    "scipy.optimize.linear_sum_assignment: every row (rows <= cols) or every column is assigned\n"
    "once, minimising (or maximising) the sum of the chosen entries. +inf entries are forbidden\n"
    "(-inf when maximising). Returns int64 arrays; row_ind is sorted and\n"
    "cost_matrix[row_ind, col_ind].sum() is the optimum. ValueError when no complete assignment\n"
    "exists ('cost matrix is infeasible') or on NaN entries, naming the row and column."};

}  // namespace

void init_lap(pybind11::module_& solvers) {
  PyObject* function = PyCFunction_NewEx(&linear_sum_assignment_def, nullptr, solvers.attr("__name__").ptr());
  if (!function) throw pybind11::error_already_set();
  solvers.add_object("linear_sum_assignment", pybind11::reinterpret_steal<pybind11::object>(function));
}

}  // namespace servelab::bindings
