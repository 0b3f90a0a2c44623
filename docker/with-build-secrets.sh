#!/bin/sh
# Runs a command with the build's CA bundle, when the BuildKit secret "ca-bundle" is mounted,
# as the one every TLS client in the build trusts (pip, uv, curl, git, Python's ssl). Builders
# behind a TLS-intercepting proxy need it; elsewhere the secret is absent and nothing changes.
bundle=/run/secrets/ca-bundle
if [ -s "$bundle" ]; then
  export SSL_CERT_FILE="$bundle" PIP_CERT="$bundle" REQUESTS_CA_BUNDLE="$bundle" \
    CURL_CA_BUNDLE="$bundle" GIT_SSL_CAINFO="$bundle" UV_NATIVE_TLS=1
fi
exec "$@"
