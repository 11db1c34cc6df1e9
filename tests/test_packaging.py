"""The wheel holds every package of the source tree (pyproject.toml lists them by hand, since
shaders/ and assets/ ship under other names)."""

import tomllib

from tests.paths import REPO


def test_every_package_is_in_the_wheel():
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
                 ["tool"]["setuptools"]["packages"])
    for top in ("physics", "app"):
        for init in (REPO / top).glob("**/__init__.py"):
            package = init.parent.relative_to(REPO).as_posix().replace("/", ".")
            assert package in listed, f"pyproject.toml misses the package {package}"
