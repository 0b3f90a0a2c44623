#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "util/glob.h"
#include "util/text.h"
#include "wheel/linux_policy.h"
#include "wheel/verifier.h"

namespace sagebuild::wheel {
namespace {

// Libraries a Linux CUDA extension may need from outside the wheel: the C/C++ runtime that
// every manylinux system has, the CUDA driver and runtime, and torch's own libraries (which the
// torch wheel the pin names provides).
constexpr std::string_view kLinuxAllowedLibraries[] = {
    "libc.so.6",
    "libm.so.6",
    "libdl.so.2",
    "librt.so.1",
    "libpthread.so.0",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
    "libstdc++.so.6",
    "libgcc_s.so.1",
    "libatomic.so.1",
    "libcuda.so.1",
    "libcudart.so.*",
    "libc10.so",
    "libc10_cuda.so",
    "libtorch.so",
    "libtorch_cpu.so",
    "libtorch_cuda.so",
    "libtorch_python.so",
    "libshm.so",
};

// The Windows counterpart: the system and C runtime DLLs every Windows has (or the VC++
// redistributable that Python itself needs), the CUDA driver and runtime, torch's DLLs, and the
// Python DLL an extension module may import. Compared case-insensitively.
constexpr std::string_view kWindowsAllowedLibraries[] = {
    "kernel32.dll",
    "advapi32.dll",
    "user32.dll",
    "ucrtbase.dll",
    "api-ms-win-crt-*.dll",
    "api-ms-win-core-*.dll",
    "vcruntime140.dll",
    "vcruntime140_1.dll",
    "msvcp140.dll",
    "msvcp140_1.dll",
    "msvcp140_2.dll",
    "vcomp140.dll",
    "nvcuda.dll",
    "cudart64_*.dll",
    "c10.dll",
    "c10_cuda.dll",
    "torch.dll",
    "torch_cpu.dll",
    "torch_cuda.dll",
    "torch_python.dll",
    "shm.dll",
    "python3*.dll",
};

constexpr std::uint16_t kMachineX86_64 = 62;
constexpr std::uint16_t kMachineAarch64 = 183;

}  // namespace

// Why a library search path of the binary at `binary` (its path in the wheel) is unsafe, or
// nothing. The policy, after auditwheel's: an element starts with $ORIGIN and, resolved from
// where the binary installs, stays inside site-packages. An absolute path (/tmp, the build
// machine's /usr/local/cuda) loads whatever lies there on the user's machine; an empty element
// is the process's working directory; one that climbs out of site-packages reaches the
// environment's or the user's files.
std::optional<std::string> unsafe_search_path(const std::string& binary,
                                              const std::string& search_path) {
  std::string_view rest = search_path;
  if (rest.starts_with("${ORIGIN}")) {
    rest.remove_prefix(9);
  } else if (rest.starts_with("$ORIGIN")) {
    rest.remove_prefix(7);
  } else {
    return std::string(search_path.empty()
                           ? "an empty element searches the working directory"
                           : "not relative to $ORIGIN: it loads whatever lies at that path on "
                             "the user's machine");
  }
  if (!rest.empty() && rest.front() != '/') return std::string("$ORIGIN followed by a name");
  if (rest.find('$') != std::string_view::npos) {
    return std::string(
        "a second dynamic string token ($LIB, $PLATFORM) the verifier cannot resolve");
  }
  // Where the binary installs, relative to site-packages: .data/purelib|platlib/ lose their
  // prefix; everything else installs as it is named.
  std::vector<std::string> at = text::split(binary, '/');
  at.pop_back();  // the file itself
  if (at.size() >= 2 && at[0].ends_with(".data") && (at[1] == "purelib" || at[1] == "platlib")) {
    at.erase(at.begin(), at.begin() + 2);
  }
  for (const std::string& part : text::split(rest, '/')) {
    if (part.empty() || part == ".") continue;
    if (part != "..") {
      at.push_back(part);
    } else if (at.empty()) {
      return std::string("climbs out of site-packages");
    } else {
      at.pop_back();
    }
  }
  return std::nullopt;
}

// ---- B001-B004: the compiled modules ----
// Without a valid file name the platform is unknown: the binaries are still read (their
// architectures and glibc needs are reported) but not judged against a platform.
void Verifier::check_binaries(const ZipArchive& archive) {
  std::string platform;
  if (name_) {
    for (const Tag& t : name_->tags)
      platform = t.platform;
  }
  const bool windows = platform.starts_with("win");
  const bool any = platform == "any";
  const std::uint16_t machine = platform.ends_with("aarch64") ? kMachineAarch64 : kMachineX86_64;
  std::set<std::string> in_wheel;
  for (const ZipEntry& e : archive.entries())
    in_wheel.insert(e.name.substr(e.name.rfind('/') + 1));
  const LinuxPolicy* policy = policy_for_tag(platform);
  std::vector<std::string> wheel_libraries(in_wheel.begin(), in_wheel.end());
  std::vector<const ElfInfo*> elves;
  std::set<std::string> sass, ptx;
  int binaries = 0;
  Version newest_glibc = *Version::parse("0");
  for (std::size_t i = 0; i < archive.entries().size(); ++i) {
    const EntryReading& r = results_[i];
    const std::string& path = archive.entries()[i].name;
    if (!r.binary || r.error) continue;
    ++binaries;
    auto collect = [&](const std::vector<FatbinImage>& images) {
      for (const FatbinImage& image : images) {
        (image.kind == FatbinImage::Kind::sass ? sass : ptx).insert(image.name());
      }
    };
    if (!name_) {
      if (r.elf && *r.elf) collect(r.elf->value().fatbin);
      if (r.pe && *r.pe) collect(r.pe->value().fatbin);
      continue;
    }
    check_extension_suffix(path);
    if (r.pe) {
      if (!*r.pe) {
        fail("B001", path, r.pe->error().message);
        continue;
      }
      const PeInfo& pe = r.pe->value();
      if (!windows) {
        fail("B001", path, "a Windows PE binary in a wheel for " + platform);
      } else if (pe.machine != 0x8664) {
        fail("B001", path, fmt::format("PE machine {:#x}, not AMD64", pe.machine));
      }
      for (const std::string& dll : pe.imports) {
        const std::string lower = text::ascii_lower(dll);
        const bool allowed =
            std::any_of(in_wheel.begin(), in_wheel.end(),
                        [&](const std::string& f) { return text::ascii_lower(f) == lower; }) ||
            std::any_of(std::begin(kWindowsAllowedLibraries), std::end(kWindowsAllowedLibraries),
                        [&](std::string_view p) { return glob::matches(p, lower); });
        if (!allowed) {
          fail("B002", path,
               fmt::format("imports {}, which is neither allowed nor in the wheel", dll));
        }
      }
      collect(pe.fatbin);
      continue;
    }
    if (!r.elf || !*r.elf) {
      fail("B001", path, r.elf ? r.elf->error().message : "not a binary");
      continue;
    }
    const ElfInfo& elf = r.elf->value();
    if (windows)
      fail("B001", path, "an ELF binary in a Windows wheel");
    else if (elf.machine != machine)
      fail("B001", path, fmt::format("ELF machine {} does not match {}", elf.machine, platform));
    elves.push_back(&elf);
    if (policy) {
      for (const PolicyViolation& v : policy_violations(elf, *policy, wheel_libraries))
        fail(v.kind == PolicyViolation::Kind::library ? "B002" : "B003", path, v.message);
    } else {
      for (const std::string& library : elf.needed) {
        const bool allowed =
            in_wheel.count(library) ||
            std::any_of(std::begin(kLinuxAllowedLibraries), std::end(kLinuxAllowedLibraries),
                        [&](std::string_view p) { return glob::matches(p, library); });
        if (!allowed)
          fail("B002", path,
               fmt::format("needs {}, which is neither allowed nor in the wheel", library));
      }
    }
    for (const std::string& search_path : elf.search_paths) {
      if (auto why = unsafe_search_path(path, search_path)) {
        fail("B002", path, fmt::format("RPATH/RUNPATH '{}': {}", search_path, *why));
      }
    }
    for (const auto& [library, version] : elf.version_needs) {
      if (!version.starts_with("GLIBC_")) continue;
      if (const auto v = Version::parse(version.substr(6)); v && *v > newest_glibc)
        newest_glibc = *v;
    }
    if (for_every_python()) check_no_libpython(path, elf);
    for (const FatbinImage& image : elf.fatbin) {
      (image.kind == FatbinImage::Kind::sass ? sass : ptx).insert(image.name());
    }
  }
  if (newest_glibc.major() > 0) report_.min_glibc = newest_glibc.str();
  if (!elves.empty() && !windows) {
    report_.manylinux = symbol_policy(elves).value_or("");
    report_.external_libraries = external_libraries(elves, wheel_libraries);
  }
  report_.sass.assign(sass.begin(), sass.end());
  report_.ptx.assign(ptx.begin(), ptx.end());
  if (!name_) return;
  if (!any && binaries == 0) fail("B001", "", "a platform wheel without any compiled module");

  std::vector<std::string> archs = expected_archs_;
  if (archs.empty() && report_.provenance) archs = report_.provenance->archs;
  if (archs.empty()) {
    if (!any)
      fail("B004", "",
           "no list of architectures to check: no provenance and no matrix entry builds this "
           "file");
    return;
  }
  for (const std::string& arch : archs) {
    const auto number = arch_number(arch);
    if (!number) {
      fail("B004", "", fmt::format("cannot read architecture '{}'", arch));
      continue;
    }
    const std::string want = fmt::format("sm_{}{}", number->first, number->second);
    if (!sass.count(want)) {
      fail("B004", "",
           fmt::format("no SASS for {} (listed as '{}'); the binaries hold {}", want, arch,
                       sass.empty() ? "no SASS at all" : text::join(report_.sass, ", ")));
    }
    if (arch.ends_with("+PTX") &&
        !ptx.count(fmt::format("compute_{}{}", number->first, number->second))) {
      fail("B004", "",
           fmt::format("no PTX for compute_{}{} (listed as '{}')", number->first, number->second,
                       arch));
    }
  }
}

// A wheel whose tags take every Python 3 (py3-none, cp3X-abi3): its binaries must not need
// one Python's library or API.
bool Verifier::for_every_python() const {
  return name_ && std::all_of(name_->tags.begin(), name_->tags.end(), [](const Tag& t) {
           return t.abi == "abi3" || (t.abi == "none" && t.interpreter.starts_with("py"));
         });
}

// ---- B005: no libpython, no CPython API ----
void Verifier::check_no_libpython(const std::string& path, const ElfInfo& elf) {
  for (const std::string& library : elf.needed) {
    if (library.starts_with("libpython")) {
      fail("B005", path, fmt::format("needs {}: it works with that one Python only", library));
    }
  }
  if (name_ && std::any_of(name_->tags.begin(), name_->tags.end(),
                           [](const Tag& t) { return t.abi == "abi3"; })) {
    return;  // the limited API's symbols are what abi3 binaries may use
  }
  std::vector<std::string> api;
  for (const SymbolNeed& need : elf.undefined) {
    if (need.symbol.starts_with("Py") || need.symbol.starts_with("_Py")) api.push_back(need.symbol);
  }
  if (!api.empty()) {
    fail("B005", path,
         fmt::format("uses the CPython API ({}{}) but is tagged for every Python", api.front(),
                     api.size() > 1 ? fmt::format(" and {} more", api.size() - 1) : ""));
  }
}

// "3.12" from a cp312 tag of the file name, or "" when it names no CPython.
std::string Verifier::cpython_version() const {
  for (const Tag& t : name_->tags) {
    if (t.interpreter.starts_with("cp") && t.interpreter.size() >= 4) {
      return t.interpreter.substr(2, 1) + "." + t.interpreter.substr(3);
    }
  }
  return "";
}

// A CPython extension named for one interpreter ("*.cpython-312-*.so") must match the cp tag.
void Verifier::check_extension_suffix(const std::string& path) {
  const std::size_t at = path.find(".cpython-");
  if (at == std::string::npos) return;
  const std::string version = path.substr(at + 9, path.find('-', at + 9) - at - 9);
  const bool match = std::any_of(name_->tags.begin(), name_->tags.end(),
                                 [&](const Tag& t) { return t.interpreter == "cp" + version; });
  if (!match)
    fail("B001", path,
         fmt::format("built for CPython {}, the wheel is tagged {}", version, name_->tag_text));
}

}  // namespace sagebuild::wheel
