#include <algorithm>

#include "wheel/verify.h"

namespace sagebuild::wheel {
namespace {

// clang-format off
constexpr CheckInfo kChecks[] = {
  {"N001", "filename", "the file name follows PEP 427 (as packaging.utils.parse_wheel_filename reads it)",
   "rename the file to {name}-{version}[-{build}]-{python}-{abi}-{platform}.whl"},
  {"N002", "build-tag", "the build tag decodes to exactly one known torch release and CUDA toolkit",
   "name the wheel with its entry's build tag ({torch digits}.{cuda digits}, e.g. 280.129)"},
  {"N003", "expected-entry", "the wheel is the one a matrix entry expects (--expect-entry/--expect-profile)",
   "build the entry with `sagebuild build --entry ID`, or check the profile"},
  {"A001", "zip-structure", "the archive's records are consistent and readable, and give each member one name on every CPython (no Unicode Path field naming it otherwise)",
   "rebuild the wheel; the archive is damaged"},
  {"A002", "unsafe-path", "entry names are safe and portable: no absolute paths, '..', backslashes, drive letters, '.' or empty segments, nothing but printable ASCII, within PATH_MAX and 64 folders",
   "rebuild the wheel from a clean tree; never write such names"},
  {"A003", "special-entry", "no symlinks, devices, FIFOs, encrypted entries or compression other than stored and deflate",
   "replace links by the files they point to"},
  {"A004", "duplicate-entry", "no name occurs twice (also not differing only in case), no file is also a directory, and no two members install to one path (.data/purelib, platlib)",
   "rebuild the wheel; each file must be written once"},
  {"A005", "outside-package", "every entry is in the package, its .libs, .dist-info or .data, nothing installs a .pth or another distribution's files, and entry_points.txt reads alike to every installer, naming only the project's commands",
   "move stray files into the package or drop them from the wheel"},
  {"A006", "crc", "every entry's CRC-32 matches its data", "rebuild the wheel; the archive is corrupt"},
  {"A007", "size-bounds", "declared and actual sizes agree and stay within limits (zip bombs)",
   "rebuild the wheel; never publish an archive that inflates beyond its declared sizes"},
  {"R001", "record-present", "RECORD exists and parses", "regenerate RECORD (sagebuild build does it)"},
  {"R002", "record-hash", "every RECORD hash matches the file", "regenerate RECORD after changing files"},
  {"R003", "record-size", "every RECORD size matches the file", "regenerate RECORD after changing files"},
  {"R004", "record-unlisted", "every file in the archive is listed in RECORD", "regenerate RECORD"},
  {"R005", "record-missing-file", "every file RECORD lists is in the archive", "regenerate RECORD"},
  {"R006", "record-duplicate", "no file is listed twice in RECORD", "regenerate RECORD"},
  {"R007", "record-hash-format", "hashes are sha256=<urlsafe base64 without padding>, sizes decimal",
   "regenerate RECORD with sha256"},
  {"R008", "record-self-row", "RECORD's own row has no hash and no size", "regenerate RECORD"},
  {"H001", "wheel-file", "WHEEL exists, parses, and says Wheel-Version 1.0", "regenerate the WHEEL file"},
  {"H002", "root-is-purelib", "Root-Is-Purelib is false for a platform wheel",
   "set Root-Is-Purelib: false (the build backend does this for binary wheels)"},
  {"H003", "wheel-tags", "the Tag lines equal the file name's expanded tags",
   "make the file name and the WHEEL Tag lines agree (rename or rebuild)"},
  {"H004", "wheel-build", "the Build line equals the file name's build tag",
   "write 'Build: <tag>' into WHEEL when renaming (sagebuild build does it)"},
  {"M001", "metadata-file", "METADATA exists and parses", "rebuild the wheel"},
  {"M002", "name-version", "METADATA Name and Version equal the file name's",
   "rename the file or fix the version's one source"},
  {"M003", "torch-pin", "Requires-Dist pins torch once, unconditionally, to the release the build tag names (torch==X.Y.*)",
   "pin torch at build time (sagebuild build writes the pin)"},
  {"M004", "requires-python", "Requires-Python admits the Python of the cp tag",
   "widen requires-python in pyproject.toml or build for a Python it admits"},
  {"B001", "binary-format", "each compiled module is an ELF/PE for the platform's machine and Python",
   "build on (or for) the platform the wheel is tagged for"},
  {"B002", "needed-libraries", "each binary needs only libraries of the platform's allow-list or the wheel, and searches only $ORIGIN-relative paths inside site-packages",
   "link the dependency statically, or vendor it into the wheel; give RPATH/RUNPATH only $ORIGIN-relative paths"},
  {"B003", "symbol-versions", "the binaries' symbol versions (GLIBC, GLIBCXX, CXXABI, GCC) fit the manylinux tag",
   "build on an older distribution (the manylinux_2_28 builder), link the newer parts statically, or raise the tag"},
  {"B004", "cuda-archs", "the binaries contain SASS for every listed architecture (PTX where asked)",
   "build with the entry's TORCH_CUDA_ARCH_LIST"},
  {"B005", "no-libpython", "a wheel for every Python (py3-none, abi3) needs no libpython and no CPython API symbols",
   "build the binding without Python headers (torch.ops.load_library loads it), or tag the wheel for one CPython"},
  {"P001", "provenance", "the wheel records how it was built (dist-info/sagebuild.json)",
   "build the wheel with sagebuild build"},
  {"P002", "provenance-consistent", "the recorded provenance agrees with the name and metadata",
   "rebuild; the wheel was renamed or edited after it was built"},
  {"I001", "import", "the wheel installs into a fresh venv with its torch and imports (--import-test)",
   "read the import error; usually a missing library or a torch ABI mismatch"},
};
// clang-format on

}  // namespace

std::span<const CheckInfo> check_catalog() {
  return kChecks;
}

const CheckInfo* find_check(std::string_view key) {
  for (const CheckInfo& c : kChecks) {
    if (c.id == key || c.name == key) return &c;
  }
  return nullptr;
}

bool is_selected(std::string_view id, const VerifyOptions& options) {
  const CheckInfo* check = find_check(id);
  auto matches = [&](const std::string& key) {
    return id.starts_with(key) || (check && check->name == key);
  };
  if (!options.select.empty() &&
      std::none_of(options.select.begin(), options.select.end(), matches)) {
    return false;
  }
  return std::none_of(options.ignore.begin(), options.ignore.end(), matches);
}

}  // namespace sagebuild::wheel
