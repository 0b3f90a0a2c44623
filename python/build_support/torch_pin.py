"""dynamic-metadata provider: pins the wheel's torch requirement to the torch it is built
against, as torch==X.Y.* (docs/matrix.md says why the minor release). Used by pyproject.toml;
runs in the build environment, so the build must see the intended torch (--no-build-isolation,
or SAGEATTENTION_TORCH_VERSION to state it)."""
import os


def _torch_version():
    stated = os.environ.get("SAGEATTENTION_TORCH_VERSION")
    if stated:
        return stated
    import torch  # the torch the binding compiles against

    return torch.__version__.split("+")[0]


def dynamic_metadata(settings, project):
    major, minor = _torch_version().split(".")[:2]
    return {"dependencies": [f"torch=={major}.{minor}.*"]}


def get_requires_for_dynamic_metadata(settings):
    return []
