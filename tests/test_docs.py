"""The documentation lives in the repository and the code points into it: every reference of
the form ``docs/<file>.md#<anchor>`` in the code, the scenes and the README names an existing
file and one of its headings (GitHub's anchor for it), and nothing points at notes outside the
repository (planning notes, issue numbers, source-note numbers)."""

import re

import pytest

from tests.paths import REPO

SOURCES = [p for pattern in ("physics/**/*.py", "app/**/*.py", "tests/**/*.py", "bench/*.py",
                             "assets/**/*.py", "assets/**/*.toml", "shaders/*.glsl", ".ci/*")
           for p in REPO.glob(pattern)] + [REPO / "README.md", REPO / "pyproject.toml"]
REFERENCE = re.compile(r"docs/([\w-]+\.md)#([a-z0-9-]+)")
# what the comments used to cite: files that are not in the repository, issue and seed numbers
OUTSIDE = re.compile(r"(?<!docs/)\b(?:physics|design)\.md\b|\b[Ii]ssue \d+|\b[Ss]eeds? 0\d\d")


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors of the headings: lower case, punctuation dropped, spaces → hyphens."""
    out = set()
    for line in markdown.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return out


def references() -> list[tuple[str, int, str, str]]:
    found = []
    for path in SOURCES:
        if path.name == "test_docs.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in REFERENCE.finditer(line):
                found.append((str(path.relative_to(REPO)), number, *match.groups()))
    return found


def test_the_code_points_into_the_docs():
    assert len(references()) >= 40  # the code cites them; a broken pattern would find none


@pytest.mark.parametrize("where, line, name, anchor", references(),
                         ids=lambda v: str(v) if isinstance(v, (int, str)) else None)
def test_every_reference_resolves_to_a_heading(where, line, name, anchor):
    path = REPO / "docs" / name
    assert path.is_file(), f"{where}:{line}: docs/{name} does not exist"
    assert anchor in anchors(path.read_text(encoding="utf-8")), (
        f"{where}:{line}: docs/{name} has no heading with the anchor #{anchor}")


def test_nothing_points_outside_the_repository():
    outside = []
    for path in SOURCES:
        if path.name == "test_docs.py":
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if OUTSIDE.search(line):
                outside.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert not outside, "\n".join(outside)


def test_the_docs_link_to_each_other_and_their_anchors_exist():
    for doc in (REPO / "docs").glob("*.md"):
        text = doc.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(([\w-]*\.md)?#?([a-z0-9-]*)\)", text):
            linked = REPO / "docs" / target if target else doc
            assert linked.is_file(), f"{doc.name} links to missing {target}"
            if anchor:
                assert anchor in anchors(linked.read_text(encoding="utf-8")), (
                    f"{doc.name} links to {target}#{anchor}, which is not a heading")


def test_the_readme_layout_names_the_real_packages():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    layout = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    packages = [p.parent.relative_to(REPO).as_posix()
                for top in ("physics", "app") for p in (REPO / top).glob("**/__init__.py")]
    for package in packages:
        assert package.split("/")[-1] + "/" in layout, f"README's layout misses {package}/"
    assert "docs/" in layout
