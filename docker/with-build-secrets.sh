#!/bin/sh
# Runs a command with the build's BuildKit secrets, those that are mounted (each is optional;
# an absent one changes nothing):
#   ca-bundle      the CA bundle every TLS client in the build trusts (pip, uv, curl, git,
#                  Python's ssl): builders behind a TLS-intercepting proxy need it
#   ccache-remote  ccache's remote storage (CCACHE_REMOTE_STORAGE, e.g. redis://host:6379): the
#                  compile cache shared with native builds and other machines (docs/build.md)
# Secrets, not build arguments: they stay out of the image, its history and the layer cache's
# keys, and a URL with a password appears nowhere.
bundle=/run/secrets/ca-bundle
if [ -s "$bundle" ]; then
  export SSL_CERT_FILE="$bundle" PIP_CERT="$bundle" REQUESTS_CA_BUNDLE="$bundle" \
    CURL_CA_BUNDLE="$bundle" GIT_SSL_CAINFO="$bundle" UV_NATIVE_TLS=1
fi
remote=/run/secrets/ccache-remote
if [ -s "$remote" ]; then
  CCACHE_REMOTE_STORAGE=$(cat "$remote")
  export CCACHE_REMOTE_STORAGE
fi
exec "$@"
