// PEP 740 attestations for an upload. A distribution's attestation is the file
// `<distribution>.publish.attestation` beside it (what `pypi-attestations sign` and PyPA's publish
// action write): one Attestation object (version 1, `verification_material` with the Sigstore
// certificate and transparency log entries, `envelope` with the base64 in-toto statement and its
// signature). The registry checks the signature against its trusted publisher; what is checked
// here, before anything is sent, is that the file is one attestation of that shape whose
// statement names exactly this distribution, by file name and sha256: the mistakes that would
// otherwise surface as a registry's refusal after upload (an attestation of the unlabelled file
// uploaded under a label, of an older build, or of another file).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "util/expected.h"

namespace sagebuild::registry {

// Where the attestation of `distribution` is: beside it, else in the first of `also_in` that
// holds `<file name>.publish.attestation` (a labelled copy is made in a temporary folder; its
// attestation was made of the copy --delivered-dir kept, or put beside the inputs). Beside it
// when none is found anywhere.
std::filesystem::path attestation_path(const std::filesystem::path& distribution,
                                       const std::vector<std::filesystem::path>& also_in = {});

// The value of the upload's `attestations` form field (a JSON array holding the one attestation)
// for `distribution`, whose sha256 is `sha256_hex` (looked for as attestation_path() does); an
// error saying what is wrong with the file, or that it is missing, otherwise.
Expected<std::string> attestations_field(const std::filesystem::path& distribution,
                                         const std::string& sha256_hex,
                                         const std::vector<std::filesystem::path>& also_in = {});

}  // namespace sagebuild::registry
