"""dynamic-metadata provider: the wheel's torch requirement (docs/build.md, "Universal wheels").

- A per-torch wheel (the binding on torch's C++ API) pins the torch it is built against, as
  torch==X.Y.* (docs/matrix.md says why the minor release).
- A stable-ABI wheel (SAGEATTENTION_TORCH_ABI=stable) loads in the torch it is built against and
  every later one: torch>=X.Y, no upper bound.

sagebuild states the requirement outright (SAGEATTENTION_TORCH_REQUIREMENT, from the matrix
entry). Otherwise it follows from the torch of the build environment, so the build must see the
intended torch (--no-build-isolation), or SAGEATTENTION_TORCH_VERSION must name it."""

import os


def _torch_version():
    stated = os.environ.get("SAGEATTENTION_TORCH_VERSION")
    if stated:
        return stated
    import torch  # the torch the binding compiles against

    return torch.__version__.split("+")[0]


def torch_requirement():
    stated = os.environ.get("SAGEATTENTION_TORCH_REQUIREMENT")
    if stated:
        return stated
    major, minor = _torch_version().split(".")[:2]
    if os.environ.get("SAGEATTENTION_TORCH_ABI", "per-torch") == "stable":
        return f"torch>={major}.{minor}"
    return f"torch=={major}.{minor}.*"


def dynamic_metadata(settings, project):
    return {"dependencies": [torch_requirement()]}


def get_requires_for_dynamic_metadata(settings):
    return []
