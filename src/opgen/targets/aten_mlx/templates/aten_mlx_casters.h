// How Python values become the runtime's C++ values (aten_mlx_runtime.h), for nanobind:
// PyTorch's Scalar from a Python number, an Operand from an mx.array or a number, a list
// of ints from one int or a sequence, a Generator from anything but None.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "aten_mlx_runtime.h"

namespace nanobind::detail {

// A Python number: bool before int (a bool is an int), then float, then complex; an
// object with __index__ (a NumPy integer) as an int, with __float__ as a float.
inline bool read_scalar(PyObject* object, aten_mlx::Scalar& value) noexcept {
  if (PyBool_Check(object)) {
    value = aten_mlx::Scalar(object == Py_True);
    return true;
  }
  if (PyLong_Check(object)) {
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow != 0 || (integer == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return false;
    }
    value = aten_mlx::Scalar(static_cast<std::int64_t>(integer));
    return true;
  }
  if (PyFloat_Check(object)) {
    value = aten_mlx::Scalar(PyFloat_AS_DOUBLE(object));
    return true;
  }
  if (PyComplex_Check(object)) {
    value = aten_mlx::Scalar(
        std::complex<double>(PyComplex_RealAsDouble(object), PyComplex_ImagAsDouble(object)));
    return true;
  }
  return false;
}

template <>
struct type_caster<aten_mlx::Scalar> {
  NB_TYPE_CASTER(aten_mlx::Scalar, const_name("bool | int | float | complex"))

  bool from_python(handle source, uint8_t, cleanup_list*) noexcept {
    return read_scalar(source.ptr(), value);
  }

  static handle from_cpp(const aten_mlx::Scalar& scalar, rv_policy, cleanup_list*) noexcept {
    switch (scalar.kind) {
      case aten_mlx::Scalar::Kind::boolean:
        return PyBool_FromLong(scalar.integer != 0);
      case aten_mlx::Scalar::Kind::integer:
        return PyLong_FromLongLong(scalar.integer);
      case aten_mlx::Scalar::Kind::floating:
        return PyFloat_FromDouble(scalar.real);
      default:
        return PyComplex_FromDoubles(scalar.real, scalar.imag);
    }
  }
};

template <>
struct type_caster<aten_mlx::Operand> {
  NB_TYPE_CASTER(aten_mlx::Operand, const_name("array | bool | int | float | complex"))

  type_caster() : value(aten_mlx::Scalar()) {}

  bool from_python(handle source, uint8_t flags, cleanup_list* cleanup) noexcept {
    make_caster<mlx::core::array> array_caster;
    if (array_caster.from_python(source, flags & ~(uint8_t)cast_flags::convert, cleanup)) {
      value = aten_mlx::Operand(array_caster.operator mlx::core::array&());
      return true;
    }
    aten_mlx::Scalar scalar;
    if (read_scalar(source.ptr(), scalar)) {
      value = aten_mlx::Operand(scalar);
      return true;
    }
    return false;
  }

  static handle from_cpp(const aten_mlx::Operand&, rv_policy, cleanup_list*) noexcept {
    return handle();
  }
};

template <>
struct type_caster<aten_mlx::IntList> {
  NB_TYPE_CASTER(aten_mlx::IntList, const_name("int | Sequence[int]"))

  bool from_python(handle source, uint8_t flags, cleanup_list* cleanup) noexcept {
    PyObject* object = source.ptr();
    if (PyLong_Check(object) && !PyBool_Check(object)) {
      const long long integer = PyLong_AsLongLong(object);
      if (integer == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return false;
      }
      value = aten_mlx::IntList{static_cast<std::int64_t>(integer)};
      return true;
    }
    if (PyList_CheckExact(object) || PyTuple_CheckExact(object)) {
      // The common case, read in place: a list or tuple of Python ints.
      const Py_ssize_t size = PySequence_Fast_GET_SIZE(object);
      PyObject** items = PySequence_Fast_ITEMS(object);
      value.clear();
      value.reserve(static_cast<std::size_t>(size));
      bool plain = true;
      for (Py_ssize_t i = 0; i < size && plain; ++i) {
        PyObject* item = items[i];
        plain = PyLong_CheckExact(item) != 0;
        if (plain) {
          const long long integer = PyLong_AsLongLong(item);
          if (integer == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
          }
          value.push_back(static_cast<std::int64_t>(integer));
        }
      }
      if (plain) {
        return true;
      }
    }
    make_caster<std::vector<std::int64_t>> list;
    if (!list.from_python(source, flags, cleanup)) {
      return false;
    }
    value = aten_mlx::IntList(std::move(list.value));
    return true;
  }

  static handle from_cpp(const aten_mlx::IntList& list, rv_policy policy, cleanup_list* cleanup) noexcept {
    return make_caster<std::vector<std::int64_t>>::from_cpp(
        static_cast<const std::vector<std::int64_t>&>(list), policy, cleanup);
  }
};

template <>
struct type_caster<aten_mlx::BoolList> {
  NB_TYPE_CASTER(aten_mlx::BoolList, const_name("Sequence[bool]"))

  bool from_python(handle source, uint8_t flags, cleanup_list* cleanup) noexcept {
    make_caster<std::vector<bool>> list;
    if (!list.from_python(source, flags, cleanup)) {
      return false;
    }
    value.assign(list.value.begin(), list.value.end());
    return true;
  }

  static handle from_cpp(const aten_mlx::BoolList& list, rv_policy policy, cleanup_list* cleanup) noexcept {
    return make_caster<std::vector<bool>>::from_cpp(
        std::vector<bool>(list.begin(), list.end()), policy, cleanup);
  }
};

template <>
struct type_caster<aten_mlx::Generator> {
  NB_TYPE_CASTER(aten_mlx::Generator, const_name("object"))

  bool from_python(handle source, uint8_t, cleanup_list*) noexcept {
    return !source.is_none();
  }

  static handle from_cpp(const aten_mlx::Generator&, rv_policy, cleanup_list*) noexcept {
    return none().release();
  }
};

} // namespace nanobind::detail
