#include <algorithm>
#include <numeric>

namespace opgen_mlx {

// A Python index of an array, as MLX's `a[index]` takes one: an int, a slice, None, the
// Ellipsis, an mlx array or a list (an array of its items), or a tuple of these. `get`
// reads what it names; `set`, `add`, `subtract`, `multiply`, `divide`, `maximum` and
// `minimum` give the array with what it names replaced or combined with `values`, as
// MLX's scatters do (one update per position, repeated positions each applied; `values`
// in the array's dtype). The index `...` alone combines the whole arrays, as MLX does:
// `values` broadcast to the array's shape, in the dtype the operation gives.
class Index {
 public:
  nb::object object;

  mlx::core::array get(const mlx::core::array& a) const;
  mlx::core::array set(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array add(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array subtract(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array multiply(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array divide(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array maximum(const mlx::core::array& a, const mlx::core::array& values) const;
  mlx::core::array minimum(const mlx::core::array& a, const mlx::core::array& values) const;
};

namespace { // a type of each module's own, in nanobind's registry of types

// What `a.at` gives: the array, and the index `[...]` gives it (MLX's ArrayAt).
struct ArrayAt {
  mlx::core::array array;
  std::optional<Index> given;

  const Index& index() const {
    if (!given) {
      throw std::invalid_argument("Must give indices to array.at (e.g. `x.at[0].add(4)`).");
    }
    return *given;
  }
};

} // namespace

} // namespace opgen_mlx

namespace nanobind::detail {

template <>
struct type_caster<opgen_mlx::Index> {
  NB_TYPE_CASTER(opgen_mlx::Index, const_name("object"))

  bool from_python(handle source, uint8_t, cleanup_list*) noexcept {
    value.object = borrow(source);
    return true;
  }

  static handle from_cpp(const opgen_mlx::Index& index, rv_policy, cleanup_list*) noexcept {
    return index.object.inc_ref();
  }
};

} // namespace nanobind::detail

namespace opgen_mlx::indexing {

using mlx::core::array;
using mlx::core::Shape;

// One item of an index once the Ellipsis is spelled out: a new axis (None), a range of
// an axis (a slice, or an int where the index has no array: it drops the axis), or
// positions along an axis (an array or a list, or an int where the index has an array).
struct Item {
  enum class Kind { new_axis, range, positions } kind = Kind::new_axis;
  int start = 0;
  int step = 1;
  int size = 0;
  bool drops = false;
  std::optional<array> positions;
};

// An index resolved against an array's shape.
struct Plan {
  std::vector<Item> items;
  bool has_positions = false;
  // Where a range's or the positions' axes are in what `a[index]` gives: the positions'
  // shape `broadcast` stands first unless they are one run of adjacent items.
  Shape shape;
  Shape broadcast;
  int positions_at = 0; // in `shape`
  int ranges_before = 0; // of the ranges, where the positions are adjacent
  std::optional<array> mask; // a boolean array alone: what `a[mask] = values` assigns to
};

[[noreturn]] inline void fail(const std::string& message) {
  throw std::invalid_argument(message);
}

inline bool is_int(nb::handle value) {
  return PyIndex_Check(value.ptr()) && !PyBool_Check(value.ptr()) &&
      !nb::isinstance<array>(value);
}

inline int int32_of(nb::handle value) {
  const nb::object number = nb::steal(PyNumber_Index(value.ptr()));
  if (!number.is_valid()) {
    throw nb::python_error();
  }
  int overflow = 0;
  const long long integer = PyLong_AsLongLongAndOverflow(number.ptr(), &overflow);
  if (overflow != 0 || integer < std::numeric_limits<int>::min() ||
      integer > std::numeric_limits<int>::max()) {
    fail("Slice indices must be 32-bit integers.");
  }
  return static_cast<int>(integer);
}

// An int index of an axis, from its end if negative.
inline int position_of(nb::handle value, int size, int axis) {
  const int position = int32_of(value);
  if (position < -size || position >= size) {
    throw std::out_of_range(
        "index " + std::to_string(position) + " is out of bounds for axis " +
        std::to_string(axis) + " with size " + std::to_string(size));
  }
  return position < 0 ? position + size : position;
}

inline Item range_of(nb::handle slice, int axis_size) {
  const auto* object = reinterpret_cast<PySliceObject*>(slice.ptr());
  PyObject* members[3] = {object->start, object->stop, object->step};
  Py_ssize_t bounds[3] = {0, PY_SSIZE_T_MAX, 1};
  for (int i = 0; i < 3; ++i) {
    if (members[i] == Py_None) {
      continue;
    }
    if (!PyLong_Check(members[i])) {
      fail("Slice indices must be integers or None.");
    }
    bounds[i] = int32_of(members[i]);
  }
  if (bounds[2] == 0) {
    fail("slice step cannot be zero");
  }
  if (bounds[2] < 0) { // a member left out is then the end, and the start, of the axis
    bounds[0] = members[0] == Py_None ? PY_SSIZE_T_MAX : bounds[0];
    bounds[1] = members[1] == Py_None ? PY_SSIZE_T_MIN : bounds[1];
  }
  const Py_ssize_t size = PySlice_AdjustIndices(axis_size, &bounds[0], &bounds[1], bounds[2]);
  Item item{Item::Kind::range, static_cast<int>(bounds[0]), static_cast<int>(bounds[2])};
  item.size = static_cast<int>(size);
  return item;
}

inline Plan plan(const array& a, const nb::object& index) {
  const bool tuple = nb::isinstance<nb::tuple>(index);
  std::vector<nb::object> written;
  if (tuple) {
    for (nb::handle item : nb::borrow<nb::tuple>(index)) {
      written.push_back(nb::borrow(item));
    }
  } else {
    written.push_back(index);
  }
  int axes = 0;
  std::optional<std::size_t> ellipsis;
  for (std::size_t i = 0; i < written.size(); ++i) {
    const nb::object& item = written[i];
    if (item.is(nb::ellipsis())) {
      if (ellipsis) {
        fail("An index can only have a single ellipsis (...)");
      }
      ellipsis = i;
    } else if (!item.is_none()) {
      const bool known = nb::isinstance<nb::slice>(item) || nb::isinstance<array>(item) ||
          nb::isinstance<nb::list>(item) || is_int(item);
      if (!known) {
        fail(tuple ? "Cannot index mlx array using the given type yet"
                   : "Cannot index mlx array using the given type.");
      }
      ++axes;
    }
  }
  const int ndim = static_cast<int>(a.ndim());
  if (!tuple && axes == 1 && ndim == 0) {
    fail("too many indices for array: array is 0-dimensional");
  }
  if (axes > ndim) {
    fail("Too many indices for array with " + std::to_string(ndim) + " dimensions.");
  }
  Plan out;
  int axis = 0;
  auto whole = [&]() {
    Item item{Item::Kind::range, 0, 1, a.shape(axis++)};
    out.items.push_back(item);
  };
  for (std::size_t i = 0; i < written.size(); ++i) {
    const nb::object& item = written[i];
    if (ellipsis && i == *ellipsis) {
      for (int n = 0; n < ndim - axes; ++n) {
        whole();
      }
    } else if (item.is_none()) {
      out.items.push_back(Item{});
    } else if (nb::isinstance<nb::slice>(item)) {
      out.items.push_back(range_of(item, a.shape(axis++)));
    } else if (is_int(item)) {
      const int position = position_of(item, a.shape(axis), axis);
      ++axis;
      out.items.push_back(Item{Item::Kind::range, position, 1, 1, true});
    } else {
      array positions = nb::isinstance<array>(item)
          ? nb::cast<array>(item)
          : nb::cast<array>(nb::module_::import_("mlx.core").attr("array")(item));
      if (positions.dtype() == mlx::core::bool_ && !tuple) {
        out.mask = positions;
        return out;
      }
      Item entry{Item::Kind::positions};
      entry.positions = positions;
      entry.size = a.shape(axis++);
      out.items.push_back(entry);
      out.has_positions = true;
    }
  }
  if (!ellipsis) {
    while (axis < ndim) {
      whole();
    }
  }
  if (!out.has_positions) {
    for (const Item& item : out.items) {
      if (item.kind == Item::Kind::new_axis || !item.drops) {
        out.shape.push_back(item.kind == Item::Kind::new_axis ? 1 : item.size);
      }
    }
    return out;
  }
  // With an array among them, an int is positions too: a 0-d array.
  std::vector<array> all_positions;
  int first = -1;
  int last = -1;
  int before = 0;
  for (int i = 0; i < static_cast<int>(out.items.size()); ++i) {
    Item& item = out.items[i];
    if (item.kind == Item::Kind::range && item.drops) {
      item = Item{Item::Kind::positions, 0, 1, item.size, false, array(item.start)};
    }
    if (item.kind == Item::Kind::positions) {
      first = first < 0 ? i : first;
      last = i;
      all_positions.push_back(*item.positions);
    } else if (first < 0) {
      ++before;
      out.ranges_before += item.kind == Item::Kind::range;
    }
  }
  bool adjacent = true;
  for (int i = first; i <= last; ++i) {
    adjacent = adjacent && out.items[i].kind == Item::Kind::positions;
  }
  out.broadcast = all_positions[0].shape();
  for (std::size_t i = 1; i < all_positions.size(); ++i) {
    out.broadcast = mlx::core::broadcast_shapes(out.broadcast, all_positions[i].shape());
  }
  out.positions_at = adjacent ? before : 0;
  out.ranges_before = adjacent ? out.ranges_before : 0;
  bool placed = false;
  for (int i = 0; i <= static_cast<int>(out.items.size()); ++i) {
    if (!placed && static_cast<int>(out.shape.size()) == out.positions_at &&
        (!adjacent || i == first)) {
      out.shape.insert(out.shape.end(), out.broadcast.begin(), out.broadcast.end());
      placed = true;
    }
    if (i < static_cast<int>(out.items.size()) &&
        out.items[i].kind != Item::Kind::positions) {
      const Item& item = out.items[i];
      out.shape.push_back(item.kind == Item::Kind::new_axis ? 1 : item.size);
    }
  }
  return out;
}

// The arguments of mlx::core::slice for the plan's ranges, over every axis of `a`.
struct Bounds {
  Shape start;
  Shape stop;
  Shape step;
  Shape region; // the shape of the slice they give
  bool whole = true;
};

inline Bounds bounds(const array& a, const Plan& plan) {
  Bounds out;
  int axis = 0;
  for (const Item& item : plan.items) {
    if (item.kind == Item::Kind::new_axis) {
      continue;
    }
    const int size = a.shape(axis++);
    if (item.kind == Item::Kind::positions || (item.step == 1 && item.start == 0 &&
                                               item.size == size)) {
      out.start.push_back(0);
      out.stop.push_back(size);
      out.step.push_back(1);
      out.region.push_back(size);
      continue;
    }
    out.whole = false;
    const int start = item.size == 0 ? 0 : item.start;
    const int step = item.size == 0 ? 1 : item.step;
    int stop = start + item.size * step;
    out.start.push_back(start);
    out.stop.push_back(stop < 0 ? -size - 1 : stop); // a negative step down past 0
    out.step.push_back(step);
    out.region.push_back(item.size);
  }
  return out;
}

// `a` reshaped, unless it has the shape already.
inline array shaped(const array& a, const Shape& shape) {
  return a.shape() == shape ? a : mlx::core::reshape(a, shape);
}

inline array get(const array& a, const nb::object& index) {
  if (nb::isinstance<array>(index) && a.ndim() > 0) { // MLX's `take` along the first axis
    const auto& positions = nb::cast<const array&>(index);
    if (positions.dtype() != mlx::core::bool_) {
      return mlx::core::take(a, positions, 0);
    }
  }
  const Plan p = plan(a, index);
  if (p.mask) {
    fail("boolean indices are not yet supported");
  }
  const Bounds b = bounds(a, p);
  array sliced = b.whole ? a : mlx::core::slice(a, b.start, b.stop, b.step);
  if (p.has_positions) {
    std::vector<array> positions;
    std::vector<int> axes;
    Shape sizes = sliced.shape();
    Shape kept(p.broadcast);
    int axis = 0;
    for (const Item& item : p.items) {
      if (item.kind == Item::Kind::positions) {
        positions.push_back(*item.positions);
        axes.push_back(axis);
        sizes[axis] = 1;
      } else if (item.kind == Item::Kind::range) {
        kept.push_back(item.size);
      }
      axis += item.kind != Item::Kind::new_axis;
    }
    if (positions.size() > 1) {
      positions = mlx::core::broadcast_arrays(positions);
    }
    sliced = shaped(mlx::core::gather(sliced, positions, axes, sizes), kept);
    // The positions' axes go after the ranges before them when they are adjacent.
    const int count = static_cast<int>(p.broadcast.size());
    if (p.ranges_before > 0 && count > 0) {
      std::vector<int> order;
      for (int i = 0; i < p.ranges_before; ++i) {
        order.push_back(count + i);
      }
      for (int i = 0; i < count; ++i) {
        order.push_back(i);
      }
      for (int i = count + p.ranges_before; i < static_cast<int>(kept.size()); ++i) {
        order.push_back(i);
      }
      sliced = mlx::core::transpose(sliced, order);
    }
  }
  return shaped(sliced, p.shape);
}

enum class Update { set, add, subtract, multiply, divide, maximum, minimum };

// `old` and `values` combined elementwise, as `how` says (`set`: `values`).
inline array combined(Update how, const array& old, const array& values) {
  switch (how) {
    case Update::set:
      return values;
    case Update::add:
      return mlx::core::add(old, values);
    case Update::subtract:
      return mlx::core::subtract(old, values);
    case Update::multiply:
      return mlx::core::multiply(old, values);
    case Update::divide:
      return mlx::core::divide(old, values);
    case Update::maximum:
      return mlx::core::maximum(old, values);
    case Update::minimum:
      return mlx::core::minimum(old, values);
  }
  return values;
}

// `a` with `values` (in `a`'s dtype, of the shape `a[index]` has) scattered at `positions`
// along its first axes, which broadcast to `shape`; the last `whole` axes are taken whole.
inline array scattered(
    const array& a,
    const std::vector<array>& positions,
    const Shape& shape,
    int whole,
    array values,
    Update how) {
  const int ndim = static_cast<int>(a.ndim());
  Shape update_shape(shape);
  update_shape.insert(update_shape.end(), ndim - whole, 1);
  update_shape.insert(update_shape.end(), a.shape().end() - whole, a.shape().end());
  values = shaped(values, update_shape);
  std::vector<int> axes(positions.size());
  std::iota(axes.begin(), axes.end(), 0);
  switch (how) {
    case Update::add:
      return mlx::core::scatter_add(a, positions, values, axes);
    case Update::multiply:
      return mlx::core::scatter_prod(a, positions, values, axes);
    case Update::maximum:
      return mlx::core::scatter_max(a, positions, values, axes);
    case Update::minimum:
      return mlx::core::scatter_min(a, positions, values, axes);
    default:
      return mlx::core::scatter(a, positions, values, axes);
  }
}

// `values` as an update of `a`: in `a`'s dtype, its leading axes of one element dropped
// (NumPy's `a[0] = [[1, 2]]`), broadcast to `shape` (but a scalar put `into_slice`, which
// MLX's slice updates broadcast themselves); subtracting is adding the negative, dividing
// multiplying by the reciprocal.
inline array prepared(
    const array& a, array values, Update& how, const Shape& shape, bool into_slice = false) {
  if (how == Update::subtract) {
    values = mlx::core::negative(values);
    how = Update::add;
  } else if (how == Update::divide) {
    values = mlx::core::reciprocal(values);
    how = Update::multiply;
  }
  if (values.dtype() != a.dtype()) {
    values = mlx::core::astype(values, a.dtype());
  }
  if (into_slice && values.ndim() == 0) {
    return values;
  }
  const Shape& given = values.shape();
  const auto ones = std::find_if(given.begin(), given.end(), [](int n) { return n != 1; });
  values = shaped(values, Shape(ones, given.end()));
  return values.shape() == shape ? values : mlx::core::broadcast_to(values, shape);
}

// `a` with `values` (of the slice's shape, or a scalar) put into the slice `b` names, as
// `how` says.
inline array sliced(const array& a, array values, const Bounds& b, Update how) {
  if (values.ndim() > 0) {
    values = shaped(values, b.region);
  }
  switch (how) {
    case Update::add:
      return mlx::core::slice_update_add(a, values, b.start, b.stop, b.step);
    case Update::multiply:
      return mlx::core::slice_update_prod(a, values, b.start, b.stop, b.step);
    case Update::maximum:
      return mlx::core::slice_update_max(a, values, b.start, b.stop, b.step);
    case Update::minimum:
      return mlx::core::slice_update_min(a, values, b.start, b.stop, b.step);
    default:
      return mlx::core::slice_update(a, values, b.start, b.stop, b.step);
  }
}

inline array update(const array& a, const nb::object& index, array values, Update how) {
  if (index.is(nb::ellipsis())) {
    return combined(how, a, mlx::core::broadcast_to(values, a.shape()));
  }
  const int ndim = static_cast<int>(a.ndim());
  if (nb::isinstance<array>(index) && ndim > 0) { // positions along the first axis
    const auto& positions = nb::cast<const array&>(index);
    if (positions.dtype() != mlx::core::bool_) {
      Shape shape(positions.shape());
      shape.insert(shape.end(), a.shape().begin() + 1, a.shape().end());
      values = prepared(a, values, how, shape);
      return scattered(a, {positions}, positions.shape(), ndim - 1, values, how);
    }
  }
  if (is_int(index) && ndim > 0) { // one position of the first axis: a slice
    const int at = position_of(index, a.shape(0), 0);
    Bounds b{Shape(ndim, 0), a.shape(), Shape(ndim, 1), a.shape()};
    b.start[0] = at;
    b.stop[0] = at + 1;
    b.region[0] = 1;
    values = prepared(a, values, how, Shape(a.shape().begin() + 1, a.shape().end()), true);
    return sliced(a, values, b, how);
  }
  const Plan p = plan(a, index);
  if (p.mask) {
    if (how != Update::set) {
      fail("boolean indices are not yet supported");
    }
    return mlx::core::masked_scatter(a, *p.mask, mlx::core::astype(values, a.dtype()));
  }
  const Bounds b = bounds(a, p);
  values = prepared(a, values, how, p.shape, !p.has_positions && !b.whole);
  // Ranges are updated as a slice, positions by a scatter, as MLX does: its gradients
  // are then MLX's (where a value and its update are equal, both have the largest's).
  if (!p.has_positions) {
    if (b.whole) {
      return mlx::core::astype(combined(how, a, shaped(values, b.region)), a.dtype());
    }
    return sliced(a, values, b, how);
  }
  // One array of positions per axis of `a`, all broadcasting to the shape of `a[index]`
  // (an int's a scalar), but for the trailing axes taken whole: the scatter's slices.
  int whole = 0;
  for (auto item = p.items.rbegin(); item != p.items.rend() && whole < ndim - 1; ++item) {
    const bool kept = item->kind == Item::Kind::range && !item->drops && item->start == 0 &&
        item->step == 1 && item->size == a.shape(ndim - 1 - whole);
    if (!kept) {
      break;
    }
    ++whole;
  }
  const int rank = static_cast<int>(p.shape.size()) - whole;
  std::vector<array> positions;
  int dim = p.positions_at == 0 ? static_cast<int>(p.broadcast.size()) : 0;
  bool placed = p.positions_at == 0;
  for (std::size_t i = 0; i + whole < p.items.size(); ++i) {
    const Item& item = p.items[i];
    if (!placed && dim == p.positions_at && item.kind == Item::Kind::positions) {
      dim += static_cast<int>(p.broadcast.size());
      placed = true;
    }
    if (item.kind == Item::Kind::new_axis) {
      ++dim;
      continue;
    }
    Shape form(rank, 1);
    array along{0};
    if (item.drops) {
      along = shaped(array(item.start), form);
    } else if (item.kind == Item::Kind::positions) {
      const int at = p.positions_at;
      std::copy(p.broadcast.begin(), p.broadcast.end(), form.begin() + at);
      along = *item.positions;
      if (along.shape() != p.broadcast) {
        along = mlx::core::broadcast_to(along, p.broadcast);
      }
      along = shaped(along, form);
    } else {
      form[dim++] = item.size;
      const int stop = item.start + item.size * item.step;
      along = shaped(mlx::core::arange(item.start, stop, item.step), form);
    }
    positions.push_back(along);
  }
  return scattered(a, positions, Shape(p.shape.begin(), p.shape.begin() + rank), whole, values, how);
}

} // namespace opgen_mlx::indexing

namespace opgen_mlx {

inline mlx::core::array Index::get(const mlx::core::array& a) const {
  return indexing::get(a, object);
}

#define OPGEN_MLX_INDEX_UPDATE(name)                                              \
  inline mlx::core::array Index::name(                                           \
      const mlx::core::array& a, const mlx::core::array& values) const {         \
    return indexing::update(a, object, values, indexing::Update::name);          \
  }
OPGEN_MLX_INDEX_UPDATE(set)
OPGEN_MLX_INDEX_UPDATE(add)
OPGEN_MLX_INDEX_UPDATE(subtract)
OPGEN_MLX_INDEX_UPDATE(multiply)
OPGEN_MLX_INDEX_UPDATE(divide)
OPGEN_MLX_INDEX_UPDATE(maximum)
OPGEN_MLX_INDEX_UPDATE(minimum)
#undef OPGEN_MLX_INDEX_UPDATE

} // namespace opgen_mlx
