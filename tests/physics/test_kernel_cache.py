"""The kernel cache check (physics/kernel_cache.py): a source edit drops the cached kernels of
the module and of every module importing it, and nothing else; numba alone would keep running a
kernel with a constant it read from an edited settings file."""

import os
import subprocess
import sys
import textwrap

from physics.kernel_cache import drop_stale_kernels


def write_package(root, files: dict[str, str]):
    package = root / "pkg"
    (package / "__pycache__").mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (package / name).write_text(textwrap.dedent(text))
    return package


def fake_caches(package, *stems):
    for stem in stems:
        for suffix in ("nbi", "1.nbc"):
            (package / "__pycache__" / f"{stem}.kernel-3.py311.{suffix}").write_text("x")


def cached_stems(package) -> set[str]:
    return {p.name.split(".")[0] for p in (package / "__pycache__").glob("*.nb[ic]")}


PACKAGE = {"__init__.py": "",
           "settings.py": "MARGIN = 1.0\n",
           "a.py": "from pkg.settings import MARGIN\n",
           "b.py": "from pkg import a\n",
           "c.py": "import math\n"}


def test_without_a_record_every_cached_kernel_goes(tmp_path):
    package = write_package(tmp_path, PACKAGE)
    fake_caches(package, "a", "b", "c")
    assert drop_stale_kernels(package) == ["pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.settings"]
    assert cached_stems(package) == set()


def test_an_edit_drops_the_module_and_its_importers_only(tmp_path):
    package = write_package(tmp_path, PACKAGE)
    drop_stale_kernels(package)
    fake_caches(package, "a", "b", "c")
    assert drop_stale_kernels(package) == []  # nothing changed: every cache kept
    assert cached_stems(package) == {"a", "b", "c"}
    (package / "settings.py").write_text("MARGIN = 2.0\n")
    assert drop_stale_kernels(package) == ["pkg.a", "pkg.b", "pkg.settings"]
    assert cached_stems(package) == {"c"}
    (package / "b.py").write_text("from pkg import a  # edited\n")
    fake_caches(package, "a", "b")
    assert drop_stale_kernels(package) == ["pkg.b"]
    assert cached_stems(package) == {"a", "c"}


KERNEL = """
    import numba
    from pkg.settings import MARGIN

    @numba.njit(cache=True)
    def margin():
        return MARGIN
    """

RUN = """
    import sys
    sys.path.insert(0, {root!r})
    if {check}:
        from physics.kernel_cache import drop_stale_kernels
        import pathlib
        drop_stale_kernels(pathlib.Path({root!r}) / "pkg")
    from pkg.kernel import margin
    print(margin())
    """


def margin_in_a_new_process(root, check: bool) -> float:
    code = textwrap.dedent(RUN.format(root=str(root), check=check))
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("NUMBA_CACHE_DIR", None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    return float(result.stdout)


def test_a_cached_kernel_sees_an_edited_setting_only_with_the_check(tmp_path):
    package = write_package(tmp_path, {**PACKAGE, "kernel.py": KERNEL})
    assert margin_in_a_new_process(tmp_path, check=True) == 1.0  # compiled and cached
    (package / "settings.py").write_text("MARGIN = 2.0\n")
    assert margin_in_a_new_process(tmp_path, check=False) == 1.0  # numba alone: stale
    assert margin_in_a_new_process(tmp_path, check=True) == 2.0
