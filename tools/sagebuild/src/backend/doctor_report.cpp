#include "backend/doctor_report.h"

#include <algorithm>

namespace sagebuild::backend {

std::size_t DoctorReport::ready() const {
  return static_cast<std::size_t>(
      std::count_if(entries.begin(), entries.end(), [](const auto& e) { return e.ready; }));
}

const char* health_name(Health h) {
  switch (h) {
    case Health::ok:
      return "ok";
    case Health::warning:
      return "warning";
    case Health::problem:
      return "problem";
  }
  return "?";
}

}  // namespace sagebuild::backend
