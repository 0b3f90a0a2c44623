#include "backend/registry.h"

#include <algorithm>
#include <string_view>

#include "backend/docker/docker_backend.h"
#include "backend/docker/docker_doctor.h"
#include "backend/msvc/msvc_backend.h"
#include "backend/native/native_backend.h"

namespace sagebuild::backend {
namespace {

// A new backend: its folder under backend/ and a row here.
constexpr BackendRow kRows[] = {
    {"native", "on this machine: g++ and nvcc, each entry's phases", true, &make_native_backend},
    {"docker", "in containers: one `docker buildx bake` of the generated Bake file", true,
     &make_docker_backend, &docker_availability},
    {"msvc", "Windows entries: planned here, built on a Windows runner", false, &make_msvc_backend},
};

const BackendRow& row_named(std::string_view name) {
  const auto it = std::find_if(std::begin(kRows), std::end(kRows),
                               [&](const BackendRow& r) { return name == r.name; });
  // The option's check admits only selectable names; the default is the first row.
  return it == std::end(kRows) ? kRows[0] : *it;
}

}  // namespace

std::span<const BackendRow> backend_rows() {
  return kRows;
}

std::vector<std::string> selectable_backend_names() {
  std::vector<std::string> names;
  for (const BackendRow& r : kRows) {
    if (r.selectable) names.emplace_back(r.name);
  }
  return names;
}

std::string selectable_backend_list() {
  const auto names = selectable_backend_names();
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i)
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return text;
}

std::unique_ptr<BuildBackend> make_backend(const BuildOptions& options,
                                           const std::vector<matrix::Entry>& entries) {
  const BackendRow& chosen = row_named(options.backend);
  const bool all_windows =
      !entries.empty() && std::all_of(entries.begin(), entries.end(),
                                      [](const matrix::Entry& e) { return e.os == "windows"; });
  if (&chosen == &kRows[0] && all_windows) return row_named("msvc").make();
  return chosen.make();
}

DoctorReport examine_backends(const matrix::Matrix& m, const std::vector<matrix::Entry>& entries,
                              const BuildOptions& options) {
  const BackendRow& chosen = row_named(options.backend);
  DoctorReport report = chosen.make()->examine(m, entries, options);
  for (const BackendRow& r : kRows) {
    if (&r == &chosen || r.availability == nullptr) continue;
    if (auto check = r.availability()) report.checks.push_back(std::move(*check));
  }
  return report;
}

}  // namespace sagebuild::backend
