// The last steps every build backend shares: a wheel that a build produced is renamed to the
// convention (build tag, version), gets its provenance (RECORD rewritten), is verified with every
// verify-wheel check, and only then is moved into dist/ (a rename on one file system). A wheel
// that fails verification stays in the work directory, never in dist/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

#include "matrix/expand.h"
#include "wheel/identity.h"
#include "wheel/naming.h"
#include "wheel/provenance.h"
#include "wheel/verify.h"

namespace sagebuild::backend {

struct WheelToFinish {
  std::filesystem::path produced;  // what the build command wrote
  std::filesystem::path work;      // where the re-packed wheel is made
  std::filesystem::path dist;
  std::string build_tag;  // "2110.130"
  std::string version;    // the package version the wheel gets
  wheel::WheelTags tags;  // the tags it is published under
  std::int64_t source_date_epoch = 315532800;
  wheel::Provenance provenance;
  wheel::ExpectedBuild expected;           // what verification holds it to
  wheel::ImportTester import_tester = {};  // set: verification installs and imports it
};

struct FinishedWheel {
  enum class Outcome { moved, repack_failed, verification_failed, move_failed } outcome;
  std::string message;
  std::filesystem::path wheel;  // in dist/ when moved, else in `work` (if it was made)
  std::string sha256;
  std::uint64_t size = 0;
  std::size_t checks = 0;
  std::string findings;  // one line per finding, when verification failed
};

// The identity of a matrix entry's wheel (wheel/identity.h): the one place an entry's facts
// become a name, tags, a torch pin and a glibc floor.
wheel::WheelIdentity identity_of(const matrix::Entry& e);

// What verification holds a matrix entry's wheel to.
wheel::ExpectedBuild expected_build(const matrix::Entry& e);

// Writes the verification report to `report`, which the caller keeps with the entry's log.
FinishedWheel finish_wheel(const WheelToFinish& request, std::ostream& report);

// The second half of finish_wheel, for a wheel that is already named and recorded (the Docker
// backend's, made by sagebuild inside the container): verify it, then move it into `dist`.
FinishedWheel verify_and_move(const std::filesystem::path& wheel, const std::filesystem::path& dist,
                              const wheel::ExpectedBuild& expected,
                              const wheel::ImportTester& import_tester, std::ostream& report);

}  // namespace sagebuild::backend
