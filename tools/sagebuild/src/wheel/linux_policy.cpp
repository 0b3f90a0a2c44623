#include "wheel/linux_policy.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "util/glob.h"
#include "util/version.h"
#include "wheel/zip_archive.h"

namespace sagebuild::wheel {
namespace {

// From auditwheel's manylinux-policy.json (x86_64), newest version per family.
// clang-format off
const std::vector<LinuxPolicy> kPolicies = {
  {"manylinux_2_5",  5,  "2.5",  "3.4.8",  "1.3.1",  "4.2.0",  "",    "",        false, false, false, false},
  {"manylinux_2_12", 12, "2.12", "3.4.13", "1.3.3",  "4.3.0",  "",    "1.2.2.4", false, true,  false, false},
  {"manylinux_2_17", 17, "2.17", "3.4.19", "1.3.7",  "4.8.0",  "",    "1.2.5.2", false, true,  false, false},
  {"manylinux_2_24", 24, "2.24", "3.4.22", "1.3.10", "4.8.0",  "1.2", "1.2.5.2", true,  true,  false, true},
  {"manylinux_2_26", 26, "2.26", "3.4.22", "1.3.10", "4.8.0",  "1.2", "1.2.5.2", true,  true,  false, true},
  {"manylinux_2_27", 27, "2.27", "3.4.24", "1.3.11", "7.0.0",  "1.2", "1.2.9",   true,  true,  false, true},
  {"manylinux_2_28", 28, "2.28", "3.4.24", "1.3.11", "7.0.0",  "1.2", "1.2.9",   true,  true,  false, true},
  {"manylinux_2_31", 31, "2.31", "3.4.28", "1.3.12", "7.0.0",  "1.2", "1.2.9",   true,  true,  false, true},
  {"manylinux_2_34", 34, "2.34", "3.4.29", "1.3.13", "7.0.0",  "1.2", "1.2.9",   true,  true,  false, true},
  {"manylinux_2_35", 35, "2.35", "3.4.30", "1.3.13", "12.0.0", "1.2", "1.2.9",   true,  true,  false, true},
  {"manylinux_2_36", 36, "2.36", "3.4.30", "1.3.13", "12.0.0", "1.2", "1.2.9",   true,  true,  true,  true},
  {"manylinux_2_37", 37, "2.36", "3.4.30", "1.3.13", "12.0.0", "1.2", "1.2.12",  true,  true,  true,  true},
  {"manylinux_2_38", 38, "2.38", "3.4.30", "1.3.13", "12.0.0", "1.2", "1.2.12",  true,  true,  true,  true},
  {"manylinux_2_39", 39, "2.39", "3.4.33", "1.3.15", "14.0.0", "1.2", "1.2.12",  true,  true,  true,  true},
  {"manylinux_2_40", 40, "2.40", "3.4.33", "1.3.15", "14.0.0", "1.2", "1.2.12",  true,  true,  true,  true},
  {"manylinux_2_41", 41, "2.41", "3.4.33", "1.3.15", "14.0.0", "1.2", "1.2.12",  true,  true,  true,  true},
};
// clang-format on

// The libraries every manylinux system has (manylinux_2_17's list; libexpat is missing from
// manylinux_2_5's, libmvec joins at manylinux_2_24).
constexpr std::string_view kPolicyLibraries[] = {
    "libgcc_s.so.1",       "libstdc++.so.6",      "libm.so.6",        "libdl.so.2",
    "librt.so.1",          "libc.so.6",           "libnsl.so.1",      "libutil.so.1",
    "libpthread.so.0",     "libresolv.so.2",      "libX11.so.6",      "libXext.so.6",
    "libXrender.so.1",     "libICE.so.6",         "libSM.so.6",       "libGL.so.1",
    "libgobject-2.0.so.0", "libgthread-2.0.so.0", "libglib-2.0.so.0", "libanl.so.1",
    "libatomic.so.1",      "libexpat.so.1",       "libz.so.1"};

// manylinux_2_17 forbids these glibc symbols although their versions are old enough.
constexpr std::pair<std::string_view, std::string_view> kBlacklist2_17[] = {
    {"libc.so.6", "__cxa_thread_atexit_impl"},
    {"libc.so.6", "__issignaling"},
    {"libc.so.6", "__issignalingf"},
    {"libc.so.6", "__issignalingl"},
    {"libc.so.6", "pthread_getattr_default_np"},
    {"libc.so.6", "pthread_setattr_default_np"},
    {"libm.so.6", "__issignaling"},
    {"libm.so.6", "__issignalingf"},
    {"libm.so.6", "__issignalingl"},
    {"libpthread.so.0", "pthread_getattr_default_np"},
    {"libpthread.so.0", "pthread_setattr_default_np"}};

// The dynamic loader's own version needs are not judged (auditwheel skips them too).
bool is_loader(std::string_view library) {
  return library.starts_with("ld-linux") || library.starts_with("ld64.so");
}

bool on_policy_list(std::string_view library, const LinuxPolicy& policy) {
  if (is_loader(library)) return true;  // the dynamic loader itself is every system's
  if (library == "libmvec.so.1") return policy.libmvec;
  if (library == "libexpat.so.1") return policy.libexpat;
  return std::find(std::begin(kPolicyLibraries), std::end(kPolicyLibraries), library) !=
         std::end(kPolicyLibraries);
}

// "GLIBC_2.34" -> ("GLIBC", "2.34"); families the policies know, else nothing.
std::optional<std::pair<std::string, std::string>> split_version(std::string_view version) {
  for (const char* family : {"GLIBCXX", "GLIBC", "CXXABI", "GCC", "LIBATOMIC", "ZLIB"}) {
    const std::string prefix = std::string(family) + "_";
    if (version.starts_with(prefix))
      return std::pair{family, std::string(version.substr(prefix.size()))};
  }
  return std::nullopt;
}

std::string_view newest_allowed(const LinuxPolicy& p, std::string_view family) {
  if (family == "GLIBC") return p.glibc;
  if (family == "GLIBCXX") return p.glibcxx;
  if (family == "CXXABI") return p.cxxabi;
  if (family == "GCC") return p.gcc;
  if (family == "LIBATOMIC") return p.libatomic;
  return p.zlib;
}

// Whether `policy` allows version `number` ("2.34", "FLOAT128") of `family`.
bool allows(const LinuxPolicy& policy, std::string_view family, std::string_view number) {
  if (family == "CXXABI" && number == "TM_1") return true;
  if (family == "CXXABI" && number == "FLOAT128") return policy.cxxabi_float128;
  if (family == "GLIBC" && number == "ABI_DT_RELR") return policy.glibc_dt_relr;
  const std::string_view newest = newest_allowed(policy, family);
  if (newest.empty()) return false;
  const auto v = Version::parse(number);
  const auto limit = Version::parse(newest);
  return v && limit && !(*limit < *v);
}

}  // namespace

const std::vector<LinuxPolicy>& linux_policies() {
  return kPolicies;
}

const LinuxPolicy* policy_for_tag(std::string_view tag) {
  // PEP 513, 571 and 599's names for manylinux_2_5, _2_12 and _2_17.
  for (const auto& [alias, name] :
       {std::pair{"manylinux1_", "manylinux_2_5"}, std::pair{"manylinux2010_", "manylinux_2_12"},
        std::pair{"manylinux2014_", "manylinux_2_17"}}) {
    if (tag.starts_with(alias)) tag = name;
  }
  if (tag == "manylinux_2_5" || tag == "manylinux_2_12" || tag == "manylinux_2_17") {
    for (const LinuxPolicy& p : kPolicies) {
      if (p.name == tag) return &p;
    }
  }
  for (const LinuxPolicy& p : kPolicies) {
    if (tag.starts_with(p.name) && tag.size() > p.name.size() && tag[p.name.size()] == '_') {
      return &p;
    }
  }
  return nullptr;
}

bool provided_by_torch_or_driver(std::string_view library) {
  for (const char* pattern : {"libtorch.so", "libtorch_*.so", "libc10.so", "libc10_*.so",
                              "libshm.so", "libcudart.so.*", "libcuda.so.1"}) {
    if (glob::matches(pattern, library)) return true;
  }
  return false;
}

std::vector<PolicyViolation> policy_violations(const ElfInfo& elf, const LinuxPolicy& policy,
                                               const std::vector<std::string>& in_wheel) {
  std::vector<PolicyViolation> out;
  using Kind = PolicyViolation::Kind;
  for (const std::string& library : elf.needed) {
    if (on_policy_list(library, policy) || provided_by_torch_or_driver(library) ||
        std::find(in_wheel.begin(), in_wheel.end(), library) != in_wheel.end()) {
      continue;
    }
    out.push_back(
        {Kind::library, fmt::format("needs {}, which is not on {}'s list, not in the wheel and not "
                                    "provided by torch or the driver",
                                    library, policy.name)});
  }
  // Versions over the policy, each with the symbols that ask for it (at most a few named).
  std::map<std::string, std::vector<std::string>> over;  // "GLIBC_2.34" -> symbols
  for (const SymbolNeed& need : elf.undefined) {
    if (need.version.empty() || is_loader(need.library)) continue;
    const auto split = split_version(need.version);
    if (!split || allows(policy, split->first, split->second)) continue;
    over[need.version].push_back(need.symbol);
  }
  // A version needed by no listed symbol (a Verneed record alone) still counts.
  for (const auto& [library, version] : elf.version_needs) {
    if (is_loader(library)) continue;
    const auto split = split_version(version);
    if (split && !allows(policy, split->first, split->second)) over[version];
  }
  for (auto& [version, symbols] : over) {
    const auto split = split_version(version);
    std::sort(symbols.begin(), symbols.end());
    symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
    std::string named;
    for (std::size_t i = 0; i < symbols.size() && i < 4; ++i)
      named += (i ? ", " : "") + symbols[i];
    if (symbols.size() > 4) named += fmt::format(" and {} more", symbols.size() - 4);
    const std::string_view newest = newest_allowed(policy, split->first);
    out.push_back({Kind::symbol,
                   fmt::format("needs {}{}; {} allows {}", version,
                               named.empty() ? "" : " (" + named + ")", policy.name,
                               newest.empty() ? "no " + split->first + " version"
                                              : fmt::format("{} up to {}", split->first, newest))});
  }
  if (policy.glibc_minor <= 17) {
    for (const SymbolNeed& need : elf.undefined) {
      for (const auto& [library, symbol] : kBlacklist2_17) {
        if (need.library == library && need.symbol == symbol) {
          out.push_back({Kind::symbol, fmt::format("uses {} from {}, which {} forbids", symbol,
                                                   library, policy.name)});
        }
      }
    }
  }
  return out;
}

std::optional<std::string> symbol_policy(const std::vector<const ElfInfo*>& binaries) {
  for (const LinuxPolicy& policy : kPolicies) {
    const bool met = std::all_of(binaries.begin(), binaries.end(), [&](const ElfInfo* elf) {
      return std::all_of(elf->version_needs.begin(), elf->version_needs.end(), [&](const auto& n) {
        if (is_loader(n.first)) return true;
        const auto split = split_version(n.second);
        return !split || allows(policy, split->first, split->second);
      });
    });
    if (met) return std::string(policy.name);
  }
  return std::nullopt;
}

std::vector<std::string> external_libraries(const std::vector<const ElfInfo*>& binaries,
                                            const std::vector<std::string>& in_wheel) {
  std::set<std::string> out;
  const LinuxPolicy& newest = kPolicies.back();
  for (const ElfInfo* elf : binaries) {
    for (const std::string& library : elf->needed) {
      if (!on_policy_list(library, newest) &&
          std::find(in_wheel.begin(), in_wheel.end(), library) == in_wheel.end()) {
        out.insert(library);
      }
    }
  }
  return {out.begin(), out.end()};
}

bool is_binary_name(std::string_view name) {
  const std::string_view base = name.substr(name.rfind('/') + 1);
  return base.ends_with(".so") || base.find(".so.") != std::string_view::npos ||
         base.ends_with(".pyd") || base.ends_with(".dll");
}

Expected<std::vector<std::string>> wheel_policy_violations(const std::filesystem::path& wheel,
                                                           const LinuxPolicy& policy) {
  auto archive = ZipArchive::open(wheel);
  if (!archive) return archive.error();
  std::vector<std::string> in_wheel;
  for (const ZipEntry& e : archive->entries())
    in_wheel.push_back(e.name.substr(e.name.rfind('/') + 1));
  std::vector<std::string> out;
  auto stream = archive->open_stream();
  std::vector<std::uint8_t> data, scratch;
  for (const ZipEntry& e : archive->entries()) {
    if (e.is_directory() || !is_binary_name(e.name)) continue;
    if (auto error = archive->read(stream, e, data, scratch)) {
      return Error{fmt::format("{}: {}", e.name, error->message)};
    }
    auto elf = read_elf(data);
    if (!elf) continue;  // not an ELF: verification says so (B001)
    for (const PolicyViolation& v : policy_violations(*elf, policy, in_wheel))
      out.push_back(e.name + ": " + v.message);
  }
  return out;
}

}  // namespace sagebuild::wheel
