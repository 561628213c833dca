// nearfield.Tree: the Z-order tree of a set of positions (tree/tree.h) as numpy arrays, and
// force calls at its level and domain whose prepared methods it keeps (python/forces.h).
#include <map>
#include <mutex>

#include <pybind11/numpy.h>

#include "core/numbers.h"
#include "methods/auto_level.h"
#include "python/arrays.h"
#include "python/forces.h"
#include "tree/box_rule.h"
#include "tree/tree.h"

namespace nf::python {

namespace {

// A read-only numpy view of a vector the tree owns; `owner` (the Python Tree) keeps it alive.
template <class T>
py::array_t<T> view(const std::vector<T>& v, const py::object& owner) {
  py::array_t<T> a({static_cast<py::ssize_t>(v.size())}, {static_cast<py::ssize_t>(sizeof(T))}, v.data(), owner);
  a.attr("setflags")(py::arg("write") = false);
  return a;
}

class PyTree {
 public:
  PyTree(const py::object& pos, const py::object& level, const py::object& domain, const py::object& dense) {
    points_ = points_from_array(pos, "pos");
    const std::optional<Domain> d = domain_of(domain, points_, "pos");
    const Domain dom = d ? *d : default_domain(points_);
    int k = level_of(level);
    const bool want_dense = bool_or(dense, false, "dense");
    py::gil_scoped_release free;
    if (k == kAutoLevel) {
      // The near-field rule, over the levels whose dense layout fits when one is asked for
      // (`nearfield tree --level auto`).
      const LevelChoice c = choose_level(points_, dom, deepest_auto_level(points_.dim, want_dense));
      note_ = describe(c);
      k = c.level;
    }
    // Dense layout: when asked, or by default where the paper's arrays are small (at most the
    // level --level auto would allow a dense-tree kernel).
    const bool dense_layout = dense.is_none() ? k <= deepest_auto_level(points_.dim, true) : want_dense;
    check_level(points_.dim, k, points_.size(), ~0ull, "memory", dense_layout);
    tree_ = build_tree(points_, k, dom, dense_layout);
  }

  const Particles& points() const { return points_; }
  const Tree& tree() const { return tree_; }
  const std::string& note() const { return note_; }

  // forces on the tree's positions with masses m: a method prepared once per kernel and
  // settings (and masses) is evaluated again.
  py::object forces(const py::object& m, const ForceOptions& o, bool return_info) {
    Particles p = points_;
    p.m = masses_from_array(m, p.size(), "pos");
    const Resolved r = resolve(o, p, std::make_pair(tree_.level, tree_.domain));
    // Doubles in full (format_double): std::to_string's %f wrote every value below 5e-7 as 0.000000,
    // so a kept method of another softening or accuracy was reused.
    const std::string key = r.kernel->name + "|" + to_string(r.setup.precision) + "|" + format_double(r.setup.softening) +
                            "|" + std::to_string(r.setup.order) + "|" + format_double(r.setup.accuracy) + "|" +
                            r.setup.near + "|" + to_string(r.setup.mask) + "|" + std::to_string(r.gpus) + "|" +
                            std::to_string(r.setup.leaf_size) + "|" + std::to_string(r.setup.order_sample);
    RunResult result;
    {
      py::gil_scoped_release free;
      const std::lock_guard<std::mutex> lock(mutex_);  // one call at a time uses a kept method
      Kept& kept = methods_[key];
      if (!kept.method || kept.masses != p.m) {
        kept.method.reset();
        kept.method = prepared_method(r, p);
        kept.masses = p.m;
      }
      kept.method->evaluate();
      result = result_of(r, *kept.method);
    }
    check_finite_accelerations(result.acc, p, r.setup.precision);
    return result_object(std::move(result), p, return_info);
  }

 private:
  Particles points_;
  Tree tree_;
  std::string note_;
  struct Kept {
    std::vector<double> masses;
    std::unique_ptr<ForceMethod> method;
  };
  std::map<std::string, Kept> methods_;
  std::mutex mutex_;
};

// Offsets and ids of neighbor lists as two numpy views.
py::tuple lists(const NeighborLists& l, const py::object& owner) {
  return py::make_tuple(view(l.offset, owner), view(l.ids, owner));
}

}  // namespace

py::object forces_of(const py::object& pos, const py::object& m, const ForceOptions& o, const py::object& tree,
                     bool return_info) {
  if (!py::isinstance<PyTree>(tree))
    throw py::type_error("tree: expected a nearfield.Tree, got " + py::str(py::type::of(tree)).cast<std::string>());
  PyTree& t = tree.cast<PyTree&>();
  const Particles p = points_from_array(pos, "pos");
  if (p.dim != t.points().dim || p.x != t.points().x || p.y != t.points().y || p.z != t.points().z)
    throw py::value_error("pos: not the positions the tree was built from (tree=: the same values)");
  return t.forces(m, o, return_info);
}

void bind_tree(py::module_& mod) {
  using namespace pybind11::literals;
  py::class_<PyTree>(mod, "Tree", R"(The Z-order quadtree (2D) / octree (3D) of positions pos at a level.

Tree(pos, level="auto", *, domain=None, dense=None). Particles are sorted by box (Morton key, x in
the lowest bit); `order` maps a sorted position to its input row. The compact layout (always):
`box_key`, `box_first` and the neighbor lists `near_full`, `near_half` over non-empty boxes. The
dense layout (the paper's; dense=None builds it where --level auto would allow a dense-tree
kernel): `box_start` (boxIdx, nbox + 1 offsets), `particle_box`, `nonempty`, `full`, `half`.
Neighbor lists are (offset, ids) pairs. Arrays are read-only views the tree owns.
tree.forces(m, ...) takes forces()'s keywords at the tree's level and domain and keeps each
prepared method (per kernel, settings and masses), so a repeated call only evaluates.)")
      .def(py::init<const py::object&, const py::object&, const py::object&, const py::object&>(), "pos"_a,
           "level"_a = "auto", py::kw_only(), "domain"_a = py::none(), "dense"_a = py::none())
      .def_property_readonly("dim", [](const PyTree& t) { return t.tree().dim; })
      .def_property_readonly("level", [](const PyTree& t) { return t.tree().level; })
      .def_property_readonly("note", [](const PyTree& t) { return t.note(); }, "the line --level auto printed")
      .def_property_readonly("domain",
                             [](const PyTree& t) {
                               const Domain& d = t.tree().domain;
                               py::list v;
                               for (int a = 0; a < t.tree().dim; ++a) v.append(d.origin[a]);
                               v.append(d.side);
                               return py::tuple(v);
                             },
                             "(x0, y0[, z0], side)")
      .def_property_readonly("nbox", [](const PyTree& t) { return t.tree().nbox; }, "4^K or 8^K boxes")
      .def_property_readonly("dense", [](const PyTree& t) { return t.tree().dense; })
      .def("__len__", [](const PyTree& t) { return t.tree().particles(); })
      .def_property_readonly("positions", [](const PyTree& t) { return positions_array(t.points()); })
      .def_property_readonly("order", [](const py::object& self) { return view(self.cast<PyTree&>().tree().order, self); })
      .def_property_readonly("box_key",
                             [](const py::object& self) { return view(self.cast<PyTree&>().tree().box_key, self); })
      .def_property_readonly("box_first",
                             [](const py::object& self) { return view(self.cast<PyTree&>().tree().box_first, self); })
      .def_property_readonly("near_full", [](const py::object& self) { return lists(self.cast<PyTree&>().tree().near_full, self); })
      .def_property_readonly("near_half", [](const py::object& self) { return lists(self.cast<PyTree&>().tree().near_half, self); })
      .def_property_readonly("box_start",
                             [](const py::object& self) { return view(self.cast<PyTree&>().tree().box_start, self); })
      .def_property_readonly("particle_box",
                             [](const py::object& self) { return view(self.cast<PyTree&>().tree().particle_box, self); })
      .def_property_readonly("nonempty",
                             [](const py::object& self) { return view(self.cast<PyTree&>().tree().nonempty, self); })
      .def_property_readonly("full", [](const py::object& self) { return lists(self.cast<PyTree&>().tree().full, self); })
      .def_property_readonly("half", [](const py::object& self) { return lists(self.cast<PyTree&>().tree().half, self); })
      .def(
          "forces",
          [](PyTree& t, const py::object& m, double softening, const std::string& kernel, const std::string& precision,
             const py::object& order, const py::object& near, const py::object& accuracy,
             const py::object& leaf_size, const std::string& mask, int gpus, bool return_info,
             const py::object& order_sample) {
            return t.forces(m,
                            force_options(softening, kernel, py::str("auto"), precision, order, near, accuracy, leaf_size,
                                          mask, py::none(), gpus, order_sample),
                            return_info);
          },
          "m"_a, py::kw_only(), "softening"_a, "kernel"_a = "auto", "precision"_a = "float", "order"_a = py::none(),
          "near"_a = py::none(), "accuracy"_a = py::none(), "leaf_size"_a = py::none(), "mask"_a = "all", "gpus"_a = 1,
          "return_info"_a = false, "order_sample"_a = py::none(),
          "forces() on the tree's positions at its level and domain");
}

}  // namespace nf::python
