// An entry's interpreter and CUDA toolkit, found as the build finds them. One definition for the
// build's toolchain phase, --dry-run's plan and `sagebuild doctor`, so that what the plan and the
// doctor say can build here is what the build then builds.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "backend/build_options.h"
#include "matrix/expand.h"
#include "matrix/model.h"
#include "toolchain/cuda.h"
#include "util/expected.h"

namespace sagebuild::backend {

// The Pythons an entry can build with, in order of preference: its own, and for a stable-ABI
// entry (whose wheel serves every Python) the other Pythons its torch release was published
// for, newest first, so that a machine with only some of them still builds it.
std::vector<Version> candidate_pythons(const matrix::Matrix& m, const matrix::Entry& e);

struct EntryPython {
  std::filesystem::path python;
  Version version;            // the one found: the entry's, or another for a stable-ABI entry
  bool existing_env = false;  // an existing environment's (--python-env, --env current)
};

// An existing environment's interpreter of one of the entry's Pythons first, else the first of
// them this machine has (toolchain/python.h). The error is the entry's own Python's.
Expected<EntryPython> find_entry_python(const matrix::Matrix& m, const matrix::Entry& e,
                                        const BuildOptions& o);

// Whether matrix.yaml declares the entry's CUDA, or --cuda-path gives it.
bool toolkit_declared(const matrix::Matrix& m, const matrix::Entry& e, const BuildOptions& o);

// The entry's toolkit: --cuda-path, matrix.yaml's toolchains, the usual places, the cache; with
// `provision`, installed from PyPI when missing (else the error says it would be). A toolkit
// given with --cuda-path that matrix.yaml does not declare (the current environment's) is taken
// as it is.
Expected<toolchain::CudaToolkitPath> find_entry_toolkit(
    const matrix::Matrix& m, const matrix::Entry& e, const BuildOptions& o,
    const std::filesystem::path& python, bool provision,
    const std::function<void(const std::string&)>& note = {});

}  // namespace sagebuild::backend
