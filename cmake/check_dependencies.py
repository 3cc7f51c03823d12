#!/usr/bin/env python3
"""strata_dependency_check: the module graph of docs/architecture.md, checked.

docs/architecture.md holds a table (between the markers "<!-- dependency rules -->" and
"<!-- end of dependency rules -->") with one row per module folder:

    | `folder` | folders it may use | folders its tests may also use | vendors it may include |

("—" for none; `base` and the standard library and Abseil are always allowed). This
checks both ways a folder can depend on another:

  includes  every #include of every .h/.cc/.cu file is resolved to the header it names
            and the folder that owns that header (the most specific folder of the table
            that contains it); the owner must be the file's own folder or one it may use.
            Vendor headers (gRPC, UCX, CUDA, ...) may be included only by folders whose
            row names the vendor.
  links     (--links FILE, written by CMake: "target|folder|kind|lib lib ...") every
            strata library a target links must belong to its folder or one it may use,
            and every vendor library to a vendor its folder may use; test targets may also
            use their row's test folders and test-support targets.
  test-only the headers of base/testing/ and tests/testing/ (strata::testing,
            strata::testing_node) may be included, and those libraries linked, only by
            tests, test helpers and benchmarks.

Prints every violation and exits 1 if there is one; with --report, prints each folder's
actual dependencies instead.
"""
import argparse
import os
import re
import sys

VENDOR_INCLUDES = {
    "cuda": re.compile(r"^(cuda_runtime|cuda\.h|cuda_|cuda/|cub/|thrust/|nvml)"),
    "ucx": re.compile(r"^(ucp|uct|ucs)/"),
    "liburing": re.compile(r"^liburing"),
    "openssl": re.compile(r"^openssl/"),
    "rocksdb": re.compile(r"^rocksdb/"),
    "grpc": re.compile(r"^(grpcpp/|grpc/|google/protobuf/|strata/v1/)"),
    "httplib": re.compile(r"^httplib\.h$"),
    "libmicrohttpd": re.compile(r"^microhttpd\.h$"),
    "png": re.compile(r"^png\.h$"),
    "cairo": re.compile(r"^cairo"),
    "benchmark": re.compile(r"^benchmark/"),
    "gtest": re.compile(r"^(gtest|gmock)/"),
    "pybind11": re.compile(r"^(pybind11/|Python\.h$|dlpack/)"),
}
VENDOR_LINKS = {
    "cuda": re.compile(r"^CUDA::"),
    "ucx": re.compile(r"UCX"),
    "liburing": re.compile(r"(?i)uring"),
    "openssl": re.compile(r"^OpenSSL::"),
    "rocksdb": re.compile(r"^RocksDB::"),
    "grpc": re.compile(r"^(gRPC::|protobuf::)"),
    "httplib": re.compile(r"(?i)httplib"),
    "libmicrohttpd": re.compile(r"^PkgConfig::MHD$"),
    "png": re.compile(r"(?i)png"),
    "cairo": re.compile(r"(?i)cairo"),
    "benchmark": re.compile(r"^benchmark::"),
    "gtest": re.compile(r"^GTest::"),
    "pybind11": re.compile(r"^pybind11::"),
}
ALWAYS = {"base"}
# Test-only libraries (strata::testing in base/testing, strata::testing_node in tests/testing):
# their headers may be included, and their targets linked, by tests, test helpers and
# benchmarks only.
TEST_ONLY_DIRS = ("base/testing/", "tests/testing/")
TEST_ONLY_TARGETS = {"strata_testing", "strata_testing_node"}
# Tests and benchmarks may always use their frameworks.
TEST_VENDORS = {"gtest", "benchmark"}
SOURCE_SUFFIXES = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')


def parse_rules(doc_path):
    text = open(doc_path, encoding="utf-8").read()
    m = re.search(r"<!-- dependency rules -->(.*?)<!-- end of dependency rules -->", text, re.S)
    if not m:
        sys.exit(f"{doc_path}: no dependency rules table between the markers")
    rules = {}
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        names = [re.findall(r"`([^`]+)`", c) for c in cells]
        folder = names[0][0]
        rules[folder] = {"uses": set(names[1]) | ALWAYS, "tests": set(names[2]),
                         "vendors": set(names[3])}
    if not rules:
        sys.exit(f"{doc_path}: the dependency rules table has no rows")
    for folder, rule in rules.items():
        for used in rule["uses"] | rule["tests"]:
            if used not in rules and used != "*":
                sys.exit(f"{doc_path}: row {folder} names unknown folder {used}")
        for vendor in rule["vendors"]:
            if vendor not in VENDOR_INCLUDES:
                sys.exit(f"{doc_path}: row {folder} names unknown vendor {vendor}")
    return rules


def owner(path, folders):
    """The most specific folder of the table containing `path` (root-relative)."""
    best = None
    for f in folders:
        if path == f or path.startswith(f + "/"):
            if best is None or len(f) > len(best):
                best = f
    return best


def source_files(root, folders):
    for f in sorted(folders):
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, f)):
            dirnames[:] = [d for d in dirnames if d != "build" and not d.startswith(".")]
            for name in filenames:
                if name.endswith(SOURCE_SUFFIXES):
                    rel = os.path.relpath(os.path.join(dirpath, name), root)
                    if owner(rel, folders) == f:
                        yield rel


def header_index(files, folders):
    """include name -> owning folder, for headers included as <folder>/include/NAME or
    by their root-relative path; and the set of include names of test-only headers."""
    index = {}
    test_only = set()
    for rel in files:
        if not rel.endswith((".h", ".cuh")):
            continue
        f = owner(rel, folders)
        names = [rel]
        parts = rel.split("/")
        if "include" in parts:
            i = parts.index("include")
            names.append("/".join(parts[i + 1:]))
        for name in names:
            index.setdefault(name, f)
            if rel.startswith(TEST_ONLY_DIRS):
                test_only.add(name)
    return index, test_only


def allowed(rule, is_test):
    uses = set(rule["uses"])
    if is_test:
        uses |= rule["tests"]
    return uses


def may_use(rule, is_test, own, other):
    """Whether a file or target of folder `own` (row `rule`) may use folder `other`."""
    uses = allowed(rule, is_test)
    return "*" in uses or other == own or other in uses


def vendor_of(name, patterns, rule, is_test, seen):
    """The vendor `name` (an include or a link library) belongs to, when the row does not
    allow it; None when it is allowed or no vendor's. Records the vendor in `seen`."""
    for vendor, pattern in patterns.items():
        if pattern.search(name):
            seen.add("vendor:" + vendor)
            if (vendor in TEST_VENDORS and is_test) or vendor in rule["vendors"] or \
                    "*" in rule["uses"]:
                return None
            return vendor
    return None


def check_includes(root, rules):
    folders = set(rules)
    files = list(source_files(root, folders))
    index, test_only = header_index(files, folders)
    problems = []
    seen = {f: set() for f in folders}
    for rel in files:
        f = owner(rel, folders)
        rule = rules[f]
        is_test = re.search(r"(_test|_tests|test_|testing|_fuzz|bench)", os.path.basename(rel)) or \
            "/testing/" in rel or f.startswith("tests/") or "/bench/" in rel
        here = os.path.dirname(rel)
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as src:
            for lineno, line in enumerate(src, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(2)
                target = index.get(name)
                if target is None and m.group(1) == '"':
                    target = index.get(os.path.normpath(os.path.join(here, name)))
                if target is not None:
                    seen[f].add(target)
                    if name in test_only and not is_test:
                        problems.append(f"{rel}:{lineno}: includes {name}, a test-only header, "
                                        f"outside a test")
                    if not may_use(rule, is_test, f, target):
                        problems.append(f"{rel}:{lineno}: includes {name} of {target}/, which "
                                        f"{f}/ may not use")
                    continue
                vendor = vendor_of(name, VENDOR_INCLUDES, rule, is_test, seen[f])
                if vendor:
                    problems.append(f"{rel}:{lineno}: includes {name} ({vendor}), which {f}/ "
                                    f"may not include")
    return problems, seen


def check_links(links_path, rules):
    folders = set(rules)
    targets = {}
    for line in open(links_path, encoding="utf-8"):
        line = line.rstrip("\n")
        if not line:
            continue
        name, folder, kind, libs = line.split("|", 3)
        targets[name] = (folder, kind, libs.split())
    problems = []
    seen = {f: set() for f in folders}
    for name, (folder, kind, libs) in sorted(targets.items()):
        f = owner(folder, folders)
        if f is None:
            problems.append(f"target {name} is in {folder}/, which the table does not list")
            continue
        rule = rules[f]
        is_test = (kind == "test" or "test" in name or "bench" in name or
                   f.startswith("tests/"))
        for lib in libs:
            lib = re.sub(r"^\$<LINK_ONLY:(.*)>$", r"\1", lib)
            dep = re.sub(r"^strata::", "strata_", lib)
            if dep in targets:
                dep_folder = owner(targets[dep][0], folders)
                support = targets[dep][1] == "test" or "testing" in dep or \
                    dep in ("strata_compile_options", "strata_bench_main")
                seen[f].add(dep_folder)
                if dep in TEST_ONLY_TARGETS and not is_test:
                    problems.append(f"target {name} ({f}/) links {lib}, a test-only library, "
                                    f"outside a test")
                    continue
                if (support and is_test) or dep == "strata_compile_options" or \
                        may_use(rule, is_test, f, dep_folder):
                    continue
                problems.append(f"target {name} ({f}/) links {lib} of {dep_folder}/, which "
                                f"{f}/ may not use")
                continue
            vendor = vendor_of(lib, VENDOR_LINKS, rule, is_test, seen[f])
            if vendor:
                problems.append(f"target {name} ({f}/) links {lib} ({vendor}), which {f}/ "
                                f"may not use")
    return problems, seen


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", required=True)
    parser.add_argument("--links", help="target file written by CMake")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args()
    rules = parse_rules(os.path.join(args.root, "docs/architecture.md"))
    problems, seen = check_includes(args.root, rules)
    if args.links:
        link_problems, link_seen = check_links(args.links, rules)
        problems += link_problems
        for f, s in link_seen.items():
            seen[f] |= s
    if args.report:
        for f in sorted(seen):
            print(f"{f}: " + " ".join(sorted(x for x in seen[f] if x and x != f)))
    for p in problems:
        print(p)
    print(f"dependency check: {len(rules)} folders, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
