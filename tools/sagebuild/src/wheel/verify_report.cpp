#include <fmt/format.h>

#include "util/text.h"
#include "wheel/verify.h"

namespace sagebuild::wheel {

namespace {

nlohmann::ordered_json skipped_json(const WheelReport& r) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [id, reason] : r.skipped) {
    const CheckInfo* check = find_check(id);
    out.push_back({{"check", id}, {"name", check ? check->name : ""}, {"reason", reason}});
  }
  return out;
}

}  // namespace

nlohmann::ordered_json report_to_json(const WheelReport& r) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const Finding& f : r.findings) {
    const CheckInfo* check = find_check(f.check);
    findings.push_back({{"check", f.check},
                        {"name", check ? check->name : ""},
                        {"where", f.where},
                        {"message", f.message},
                        {"fix", check ? check->fix : ""}});
  }
  nlohmann::ordered_json doc = {{"wheel", r.file_name},
                                {"path", r.path},
                                {"ok", r.ok()},
                                {"checks", r.checks_run},
                                {"skipped", skipped_json(r)},
                                {"findings", findings},
                                {"torch", r.torch},
                                {"cuda", r.cuda},
                                {"sass", r.sass},
                                {"ptx", r.ptx},
                                {"min_glibc", r.min_glibc},
                                {"manylinux", r.manylinux},
                                {"external_libraries", r.external_libraries},
                                {"import_test", r.import_test},
                                {"entries", r.entries},
                                {"size", r.file_size},
                                {"inflated", r.inflated},
                                {"seconds", r.seconds}};
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const auto& f : r.files)
    files.push_back({{"name", f.name}, {"size", f.size}, {"sha256", f.sha256}});
  doc["files"] = files;
  doc["files_not_listed"] = r.files_not_listed;
  doc["findings_not_listed"] = r.findings_not_listed;
  doc["requires_dist"] = r.requires_dist;
  doc["provenance"] =
      r.provenance ? nlohmann::ordered_json(r.provenance->to_json()) : nlohmann::ordered_json();
  return doc;
}

std::string format_report(const WheelReport& r) {
  std::string out;
  const double mb = static_cast<double>(r.file_size) / 1e6;
  const std::string skipped =
      r.skipped.empty() ? "" : fmt::format(", {} skipped", r.skipped.size());
  if (r.ok()) {
    out += fmt::format("ok    {} ({} check{} passed{}, {} entries, {:.1f} MB in {:.2f} s)\n",
                       r.file_name, r.checks_run.size(), r.checks_run.size() == 1 ? "" : "s",
                       skipped, r.entries, mb, r.seconds);
  } else {
    out += fmt::format("FAIL  {} ({} problem{} in {} checks{})\n", r.file_name, r.problems(),
                       r.problems() == 1 ? "" : "s", r.checks_run.size(), skipped);
    for (const Finding& f : r.findings) {
      const CheckInfo* check = find_check(f.check);
      out += fmt::format("  {} {}: {}{}\n", f.check, check ? check->name : "",
                         f.where.empty() ? "" : f.where + ": ", f.message);
      if (check) out += fmt::format("        fix: {}\n", check->fix);
    }
    if (r.findings_not_listed) {
      out += fmt::format("  ... and {} more, not listed (a report lists the first {})\n",
                         r.findings_not_listed, kMaxFindings);
    }
  }
  if (!r.torch.empty()) out += fmt::format("      torch {}, CUDA {}\n", r.torch, r.cuda);
  if (!r.sass.empty() || !r.ptx.empty()) {
    out += fmt::format("      SASS {}{}\n", r.sass.empty() ? "none" : text::join(r.sass, " "),
                       r.ptx.empty() ? "" : ", PTX " + text::join(r.ptx, " "));
  }
  if (!r.min_glibc.empty()) out += fmt::format("      needs glibc >= {}\n", r.min_glibc);
  if (!r.import_test.empty()) out += fmt::format("      import test {}\n", r.import_test);
  for (const auto& [id, reason] : r.skipped) {
    if (id != "I001") out += fmt::format("      skipped {}: {}\n", id, reason);
  }
  if (r.provenance) {
    const Provenance& p = *r.provenance;
    out += fmt::format("      built by sagebuild {} from {}{}{}\n", p.sagebuild_version,
                       p.commit.empty() ? "an unknown commit" : p.commit.substr(0, 12),
                       p.dirty ? " (dirty tree)" : "", p.entry.empty() ? "" : ", entry " + p.entry);
  }
  return out;
}

}  // namespace sagebuild::wheel
