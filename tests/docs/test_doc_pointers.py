"""Every pointer into the docs from the source resolves: a `docs/NAME.md` a source file names
exists, a quoted section after it (`docs/measurement.md "Timing protocol"`) is one of that page's
headings, and a decision it cites (`docs/design.md D4`) is one design.md states. Run by ctest
(`ktune_doc_pointer_tests`, label unit)."""

import pathlib
import re
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = (".cpp", ".hpp", ".h", ".cu", ".cuh", ".py", ".sh", ".txt", ".cmake", ".toml")
POINTER = re.compile(r'docs/([\w./-]+?\.md)(?::?\s*\(?\s*"([^"\n]+?)(?:"|\n)|((?:,?\s*(?:and\s+)?D\d+)+))?')


def source_files():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        names = out.stdout.split()
    else:  # not a git checkout (an unpacked tarball): every file
        names = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
    skip = ("docs/", "build/", ".venv/", "tests/docs/")  # tests/docs: this test's own examples
    return [ROOT / n for n in names if n.endswith(SOURCES) and not n.startswith(skip)]


def headings(page):
    return [line.lstrip("#").strip() for line in page.read_text().splitlines() if line.startswith("#")]


def pointers():
    for path in source_files():
        text = path.read_text(errors="replace")
        for m in POINTER.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            yield f"{path.relative_to(ROOT)}:{line}", m.group(1), m.group(2), m.group(3)


def test_every_page_section_and_decision_a_source_names_exists():
    problems = []
    seen = 0
    for where, page_name, section, decisions in pointers():
        seen += 1
        page = ROOT / "docs" / page_name
        if not page.is_file():
            problems.append(f"{where}: docs/{page_name} does not exist")
            continue
        if section:
            # A quoted section may wrap onto the next comment line: compare its words only.
            words = " ".join(w for w in section.replace("///", " ").replace("//", " ").split())
            if not any(h.startswith(words) or words in h for h in headings(page)):
                problems.append(f"{where}: docs/{page_name} has no section \"{words}\"")
        if decisions and page_name == "design.md":
            stated = set(re.findall(r"\*\*(D\d+)\.", page.read_text()))
            for d in re.findall(r"D\d+", decisions):
                if d not in stated:
                    problems.append(f"{where}: docs/design.md states no decision {d}")
    assert seen > 50, f"only {seen} pointers found: the pattern no longer matches the sources"
    assert not problems, "\n".join(problems)


def test_every_raw_data_file_is_cited_by_a_record():
    pages = [p.read_text() for p in (ROOT / "docs").rglob("*.md") if "data" not in p.parts] + \
        [(ROOT / "README.md").read_text()]
    uncited = [p.name for p in sorted((ROOT / "docs" / "perf" / "data").iterdir())
               if not any(p.name in text for text in pages)]
    assert not uncited, f"raw data no record cites (cite it from its record or remove it): {uncited}"
