#!/usr/bin/env python3
"""Check that ziggurat's sources respect its layers.

Layers, lowest first: base, matrix, io, ops, solver, tuning, automatic, distributed, app (the
application layer, its own target ziggurat::app: the runs the clients share). Public headers live
in include/ziggurat/<layer>/, sources and internal headers in lib/<layer>/. The rules:
  * a file may include headers of its own layer and of the layers below it, never above;
  * a file of a layer never includes a file of a client (tools/, bench/, python/): the CLI's
    presentation (options, tables, pictures) stays above the application layer;
  * nothing in lib/ or include/ziggurat/<layer>/ includes the umbrella header ziggurat/ziggurat.hpp;
  * include/ziggurat/ holds only ziggurat.hpp and layer folders, lib/ only CMakeLists.txt and
    layer folders;
  * clients (tools/, bench/, python/) include public headers ziggurat/<layer>/... of any layer,
    never a file of lib/, and neither do public headers (installed users have no lib/);
  * no include cycle between modules; a module is a layer and a file stem, e.g. tuning/calibration
    is include/ziggurat/tuning/calibration.hpp plus lib/tuning/calibration.{cpp,hpp};
  * the capability map of docs/architecture.md names only what exists: every `layer/stem` module,
    every path from the root, every `ziggurat::namespace` and every `ziggurat.name` of the Python
    package (its stubs, python/ziggurat/__init__.pyi).
tests/ are exempt. An include "X" (or <ziggurat/...>) is the public header include/X if X starts
with ziggurat/, else dirname(file)/X if that exists, else lib/X if that exists, else external
(ignored).

Usage: check-layers.py [ROOT]    (ROOT defaults to the repository holding this script)
       check-layers.py --self-test
Exit status: 0 clean, 1 violations (or no library file found), 2 ROOT is not a ziggurat tree.
"""
import posixpath
import re
import sys
import tempfile
from pathlib import Path

LAYERS = {name: rank for rank, name in
          enumerate(["base", "matrix", "io", "ops", "solver", "tuning", "automatic", "distributed", "app"])}
UMBRELLA = "include/ziggurat/ziggurat.hpp"
CLIENTS = ("tools", "bench", "python")
SOURCE = re.compile(r"\.(c|cc|cpp|cxx|h|hh|hpp|cl)(\.in)?$")  # .in: templates, e.g. version.hpp.in
INCLUDE = re.compile(r'^\s*#\s*include\s*(?:"([^"]+)"|<(ziggurat/[^>]+)>)')


def layer_of(rel):
    """The layer of a repository path under lib/<layer>/ or include/ziggurat/<layer>/, else None."""
    parts = rel.split("/")
    inner = parts[1:] if parts[0] == "lib" else parts[2:] if parts[:2] == ["include", "ziggurat"] \
        else []
    return inner[0] if len(inner) > 1 and inner[0] in LAYERS else None


def module_of(rel):
    """'layer/stem' for a file of a layer, else None."""
    layer = layer_of(rel)
    return layer and f"{layer}/{posixpath.basename(rel).split('.')[0]}"


def placement(root):
    """Violations for files of include/ziggurat/ and lib/ that are not in a layer folder."""
    for top, allowed in (("include/ziggurat", "ziggurat.hpp"), ("lib", "CMakeLists.txt")):
        for path in sorted((root / top).rglob("*")):
            inner = path.relative_to(root / top).parts
            if not path.is_file() or inner == (allowed,) or (len(inner) > 1 and inner[0] in LAYERS):
                continue
            where = (path.relative_to(root).as_posix(), 1)
            yield where, f"not in a layer folder of {top}/ ({', '.join(LAYERS)}): put it in one"


def sources(root):
    """(path, kind) of every file the include rules apply to; kind is 'lib' or 'client'."""
    tops = [("include/ziggurat", "lib"), ("lib", "lib")] + [(top, "client") for top in CLIENTS]
    for top, kind in tops:
        for path in sorted((root / top).rglob("*")):
            if path.is_file() and SOURCE.search(path.name):
                yield path.relative_to(root).as_posix(), kind


def resolve(root, rel, target):
    """The repository path that `#include "target"` in file rel names, or None if external."""
    if target.startswith("ziggurat/"):
        return "include/" + target
    for candidate in (posixpath.join(posixpath.dirname(rel), target), "lib/" + target):
        candidate = posixpath.normpath(candidate)
        if (root / candidate).is_file():
            return candidate
    return None


def check_file(root, rel, kind, edges):
    """Violations among the includes of one file; records module edges as edges[a][b] = where."""
    own = layer_of(rel)
    text = (root / rel).read_text(encoding="utf-8", errors="replace")
    for num, line in enumerate(text.splitlines(), 1):
        match = INCLUDE.match(line)
        dest = match and resolve(root, rel, match.group(1) or match.group(2))
        if not dest:
            continue
        target, where = match.group(1) or match.group(2), (rel, num)
        layer = layer_of(dest)
        if dest == UMBRELLA:
            if kind == "lib" and rel != UMBRELLA:
                yield where, f"includes the umbrella header {target}: include the headers it needs"
        elif dest.startswith("include/") and layer is None:
            yield where, f"includes {target}, which is not in a layer ({', '.join(LAYERS)})"
        elif kind == "lib" and dest.split("/")[0] in CLIENTS:
            yield where, (f"includes {target} ({dest}), a file of a client: the library and its "
                          "application layer use nothing of the CLI, the benchmarks or the bindings")
        elif dest.startswith("lib/") and (kind == "client" or rel.startswith("include/")):
            yield where, (f"includes {target} ({dest}), a library internal: "
                          f"{'clients' if kind == 'client' else 'public headers'} may include only "
                          "public headers ziggurat/<layer>/...")
        elif kind == "lib" and own and layer:
            if LAYERS[layer] > LAYERS[own]:
                yield where, (f"includes {target} ({layer}, rank {LAYERS[layer]}) from {own} "
                              f"(rank {LAYERS[own]}): a layer may use only the layers below it")
            if module_of(dest) != module_of(rel):
                edges.setdefault(module_of(rel), {}).setdefault(module_of(dest), where)


def shortest_cycle(edges, start):
    """Breadth-first search for a shortest include path start -> ... -> start, or None."""
    parent, todo = {}, [start]
    for node in todo:  # todo grows while we walk it: a queue
        for nxt in sorted(edges.get(node, {})):
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if nxt not in parent:
                parent[nxt] = node
                todo.append(nxt)
    return None


MAP_DOC, MAP_HEADING, STUBS = "docs/architecture.md", "## Capability map", "python/ziggurat/__init__.pyi"
CODE = re.compile(r"`([^`]+)`")


def map_entry_missing(root, token):
    """Why a backticked token of the capability map names nothing of the tree, or None."""
    if token.startswith("ziggurat::"):
        declared = re.compile(rf"^namespace {re.escape(token)} {{", re.M)
        headers = (root / "include/ziggurat").rglob("*.hpp")
        return None if any(declared.search(h.read_text(errors="replace")) for h in headers) \
            else f"no public header declares namespace {token}"
    if token.startswith("ziggurat."):
        name = token.split(".", 1)[1]
        stubs = root / STUBS
        found = stubs.is_file() and re.search(rf"^(def|class) {re.escape(name)}\b",
                                                stubs.read_text(errors="replace"), re.M)
        return None if found else f"{STUBS} has no {name}"
    parts = token.split("/")
    if len(parts) == 2 and parts[0] in LAYERS and "." not in parts[1]:
        layer, stem = parts
        found = (root / f"include/ziggurat/{layer}/{stem}.hpp").is_file() or \
            any((root / "lib" / layer).glob(f"{stem}.*"))
        return None if found else f"no module {token} (include/ziggurat/{token}.hpp, lib/{token}.*)"
    if "/" in token and " " not in token:
        return None if (root / token).exists() else f"no file {token}"
    return None  # prose: a command line, a method name


def capability_map(root):
    """Violations of the capability map: a section of docs/architecture.md naming what exists."""
    doc = root / MAP_DOC
    lines = doc.read_text(encoding="utf-8").splitlines() if doc.is_file() else []
    if MAP_HEADING not in lines:
        yield (MAP_DOC, 1), f"no '{MAP_HEADING}' section: the capabilities and their files go there"
        return
    start = lines.index(MAP_HEADING) + 1
    for num, line in enumerate(lines[start:], start + 1):
        if line.startswith("## "):
            break
        for token in CODE.findall(line):
            missing = map_entry_missing(root, token)
            if missing:
                yield (MAP_DOC, num), f"the capability map names `{token}`: {missing}"


def cycles(edges):
    """A violation per cycle, until every module that lies on a cycle has been named in one."""
    named = set()
    for start in sorted(edges):
        path = start not in named and shortest_cycle(edges, start)
        if path:
            named.update(path)
            yield edges[path[0]][path[1]], "cycle: " + " -> ".join(path)


def check(root):
    """All violations of the tree at root, the number of files checked and of library files."""
    violations, edges, files = list(placement(root)), {}, list(sources(root))
    for rel, kind in files:
        violations += check_file(root, rel, kind, edges)
    violations += cycles(edges)
    violations += capability_map(root)
    return violations, len(files), sum(kind == "lib" for _, kind in files)


def run(root, out=print):
    """Check the tree at root, report through out, return the exit status."""
    root = Path(root)
    if not (root / "lib").is_dir() or not (root / "include/ziggurat").is_dir():
        out(f"layers: {root} has no lib/ or include/ziggurat/: not a ziggurat source tree")
        return 2
    violations, checked, library = check(root)
    for (rel, num), what in violations:
        out(f"{rel}:{num}: {what}")
    out(f"layers: {checked} files checked, {len(violations)} violations")
    if library == 0:
        out("layers: no library file found under lib/ or include/ziggurat/")
        return 1
    return 1 if violations else 0


GOOD_TREE = {
    "lib/CMakeLists.txt": "",
    UMBRELLA: '#include "ziggurat/base/error.hpp"\n#include "ziggurat/tuning/a.hpp"\n',
    "include/ziggurat/base/error.hpp": "#pragma once\n",
    "include/ziggurat/base/version.hpp.in": "#pragma once\n",
    "include/ziggurat/ops/spmm.hpp": '#pragma once\n#include "ziggurat/base/error.hpp"\n',
    "include/ziggurat/tuning/a.hpp": "#pragma once\n",
    "include/ziggurat/tuning/b.hpp": "#pragma once\n",
    "lib/base/file_io.hpp": '#include "ziggurat/base/error.hpp"\n',
    "lib/base/file_io.cpp": '#include "file_io.hpp"\n#include <vector>\n#include "CL/opencl.hpp"\n',
    "lib/ops/spmm.cpp": '#include "ziggurat/ops/spmm.hpp"\n#  include <ziggurat/base/version.hpp>\n'
                        '#include "base/file_io.hpp"\n#include "embedded_kernels.cpp"\n',
    "lib/ops/spmm.cl": "kernel void spmm() {}\n",
    "lib/tuning/a.cpp": '#include "ziggurat/tuning/a.hpp"\n#include "ziggurat/ops/spmm.hpp"\n',
    "lib/tuning/b.cpp": '#include "ziggurat/tuning/b.hpp"\n#include "ziggurat/tuning/a.hpp"\n',
    "include/ziggurat/app/report.hpp": '#pragma once\n#include "ziggurat/tuning/b.hpp"\n',
    "lib/app/report.cpp": '#include "ziggurat/app/report.hpp"\n#include "ziggurat/ops/spmm.hpp"\n',
    "tools/cli/main.cpp": '#include "ziggurat/ziggurat.hpp"\n#include "helper.hpp"\n'
                          '#include "ziggurat/app/report.hpp"\n',
    "tools/cli/helper.hpp": '#include <ziggurat/tuning/b.hpp>\n',
    "tests/host/test.cpp": '#include "base/file_io.hpp"\n#include "ziggurat/ziggurat.hpp"\n',
    "include/ziggurat/ops/sparse.hpp": "#pragma once\nnamespace ziggurat::sparse {\n}\n",
    "python/ziggurat/__init__.pyi": "def spmm(a): ...\nclass DeviceMatrix: ...\n",
    MAP_DOC: "# Architecture\n\n## Capability map\n\n- **spmm**: namespace `ziggurat::sparse`; files\n"
             "  `ops/spmm`, `tuning/a`, `tools/cli/main.cpp`, `tests/host/`; CLI `ziggurat spmm`;\n"
             "  Python `ziggurat.spmm`, `ziggurat.DeviceMatrix`.\n\n## Next\n\n`ops/gone`\n",
}

PLANTED = [  # (what, files added or replaced, expected message)
    ("an ops file including a tuning header",
     {"lib/ops/spmm.cpp": '#include "ziggurat/tuning/a.hpp"\n'},
     "lib/ops/spmm.cpp:1: includes ziggurat/tuning/a.hpp (tuning, rank 5) from ops (rank 3)"),
    ("a lib file including the umbrella header",
     {"lib/base/file_io.cpp": '#include "ziggurat/ziggurat.hpp"\n'},
     "lib/base/file_io.cpp:1: includes the umbrella header"),
    ("a tool including a library internal",
     {"tools/cli/main.cpp": '#include "base/file_io.hpp"\n'},
     "tools/cli/main.cpp:1: includes base/file_io.hpp (lib/base/file_io.hpp), a library internal"),
    ("a cycle between two tuning modules",
     {"lib/tuning/a.cpp": '#include "ziggurat/tuning/b.hpp"\n'},
     "cycle: tuning/a -> tuning/b -> tuning/a"),
    ("a public header including a library internal",
     {"include/ziggurat/ops/spmm.hpp": '#include "base/file_io.hpp"\n'},
     "include/ziggurat/ops/spmm.hpp:1: includes base/file_io.hpp (lib/base/file_io.hpp), a library internal: "
     "public headers"),
    ("a tuning file including an application-layer header",
     {"lib/tuning/b.cpp": '#include "ziggurat/app/report.hpp"\n'},
     "lib/tuning/b.cpp:1: includes ziggurat/app/report.hpp (app, rank 8) from tuning (rank 5)"),
    ("an application-layer file including the CLI's presentation",
     {"lib/app/report.cpp": '#include "../../tools/cli/helper.hpp"\n'},
     "lib/app/report.cpp:1: includes ../../tools/cli/helper.hpp (tools/cli/helper.hpp), a file of a client"),
    ("a capability map naming a module that is gone",
     {MAP_DOC: GOOD_TREE[MAP_DOC].replace("`tuning/a`", "`tuning/c`")},
     "docs/architecture.md:6: the capability map names `tuning/c`: no module tuning/c"),
    ("a capability map naming a file that is gone",
     {MAP_DOC: GOOD_TREE[MAP_DOC].replace("tools/cli/main.cpp", "tools/cli/old.cpp")},
     "docs/architecture.md:6: the capability map names `tools/cli/old.cpp`: no file"),
    ("a capability map naming a Python function the package lacks",
     {MAP_DOC: GOOD_TREE[MAP_DOC].replace("ziggurat.spmm", "ziggurat.multiply")},
     "docs/architecture.md:7: the capability map names `ziggurat.multiply`: "
     "python/ziggurat/__init__.pyi has no multiply"),
    ("a capability map naming a namespace no header declares",
     {MAP_DOC: GOOD_TREE[MAP_DOC].replace("ziggurat::sparse", "ziggurat::fem")},
     "the capability map names `ziggurat::fem`: no public header declares namespace ziggurat::fem"),
    ("an architecture document without its capability map",
     {MAP_DOC: "# Architecture\n"},
     "docs/architecture.md:1: no '## Capability map' section"),
    ("a stray header in include/ziggurat/",
     {"include/ziggurat/stray.hpp": "#pragma once\n"},
     "include/ziggurat/stray.hpp:1: not in a layer folder of include/ziggurat/"),
]


def run_on(files):
    """Write files into a temporary tree, check it, return (exit status, output lines)."""
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            (Path(root) / rel).parent.mkdir(parents=True, exist_ok=True)
            (Path(root) / rel).write_text(text)
        lines = []
        return run(root, lines.append), lines


def self_test():
    status, lines = run_on(GOOD_TREE)
    if status != 0:
        print("self-test: the correct tree fails:", *lines, sep="\n  ")
        return 1
    for what, planted, expected in PLANTED:
        status, lines = run_on({**GOOD_TREE, **planted})
        if status != 1 or not any(expected in line for line in lines):
            print(f"self-test: missed {what} (exit {status}, expected '{expected}'):", *lines,
                  sep="\n  ")
            return 1
    if run_on({"README.md": ""})[0] != 2:
        return print("self-test: a root without lib/ and include/ziggurat/ was not refused") or 1
    print(f"self-test: {len(PLANTED)} planted violations caught")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
        sys.exit(__doc__)
    sys.exit(run(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
