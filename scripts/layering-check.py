#!/usr/bin/env python3
"""Layering check: the #includes, the CMake DEPS and the architecture map agree.

A module is a folder whose CMakeLists.txt defines at least one target
(src/codec, src/codec/model, src/sink/mysql, proto, tests, ...). Targets are
read from the project's wrappers (sluice_library, sluice_test, sluice_binary,
sluice_bench, sluice_fuzzer, see cmake/SluiceHelpers.cmake), plain
add_library/add_executable, and target_link_libraries/target_sources calls.

The check enforces three rules:

A. Declared dependencies. A file may include a header of another module only
   if one of its module's targets links (transitively) a target of that
   module. Library code is held to the DEPS of its module's libraries; test
   code (tests, fakes, fixtures, benchmark helpers) may use anything any
   target of its module links. An include that nothing links compiles today
   only because the include path is shared, and breaks (or links by luck)
   as soon as the target graph changes. Quoted includes resolve as the
   compiler resolves them (the file's folder, then src/, then the folders
   targets add); generated "*.pb.h" headers belong to proto/.

B. No cycles. The graph "module of a library -> module of each of its DEPS"
   is acyclic, so the folders can be read, built and tested bottom-up.

C. The map lists every folder. docs/architecture.md mentions each folder
   directly under src/ as `src/<name>`.

Usage: layering-check.py [--root DIR]. Prints one line per violation and
exits 1, or prints a summary and exits 0.
"""

import argparse
import collections
import fnmatch
import os
import re
import sys
from dataclasses import dataclass, field

# Folders (relative to the root) whose CMakeLists.txt define targets.
TARGET_DIRS = ("src", "tests", "apps", "bench", "fuzz", "proto")

# Quoted includes are resolved against this folder (every target adds it).
INCLUDE_ROOT = "src"

# Generated protobuf headers ("cdcpb.pb.h", "etcd/rpc.grpc.pb.h") belong here.
PROTO_MODULE = "proto"

ARCHITECTURE_DOC = "docs/architecture.md"

# Only project targets count as dependencies; third-party ones are ignored.
PROJECT_TARGET_PREFIX = "sluice_"

SOURCE_EXTENSIONS = (".h", ".cc")

# Names of test-side files, whatever target builds them.
TEST_FILE_PATTERNS = (
    "*_test.cc",
    "*_test_util.*",
    "*test_util*",
    "*_testing*",
    "fake_*",
    "*_fixture.h",
    "*_bench*",
)

# The project's wrappers: command -> (kind, keywords of its argument lists).
WRAPPERS = {
    "sluice_library": ("library", ("SRCS", "DEPS")),
    "sluice_test": ("test", ("SRCS", "DEPS", "LABELS", "TIMEOUT")),
    "sluice_binary": ("binary", ("SRCS", "DEPS")),
    "sluice_bench": ("bench", ("SRCS", "DEPS")),
    "sluice_fuzzer": ("fuzzer", ("SRCS", "DEPS")),
}

ADD_LIBRARY_KEYWORDS = {"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "UNKNOWN",
                        "EXCLUDE_FROM_ALL"}
ADD_EXECUTABLE_KEYWORDS = {"WIN32", "MACOSX_BUNDLE", "EXCLUDE_FROM_ALL"}
SCOPE_KEYWORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE",
                  "LINK_INTERFACE_LIBRARIES", "SYSTEM", "BEFORE", "AFTER"}

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.MULTILINE)


@dataclass
class Target:
    name: str
    folder: str  # the directory of its CMakeLists.txt, relative to the root
    kind: str  # "library", "test", "binary", "bench" or "fuzzer"
    srcs: list = field(default_factory=list)  # paths relative to the root
    deps: list = field(default_factory=list)  # project targets, direct

    @property
    def is_library(self):
        return self.kind == "library"


@dataclass
class Project:
    root: str
    targets: dict  # name -> Target
    modules: dict  # folder -> [Target]
    include_dirs: list  # extra include directories, relative to the root


# ---------------------------------------------------------------- CMake parsing


def _skip_bracket(text, i):
    """If text[i:] opens a bracket argument/comment ([[, [=[, ...), return the
    index after its closing bracket; otherwise return None."""
    m = re.match(r"\[(=*)\[", text[i:])
    if not m:
        return None
    close = "]" + m.group(1) + "]"
    end = text.find(close, i + m.end())
    return len(text) if end < 0 else end + len(close)


def cmake_commands(text):
    """Yield (command name in lower case, [arguments]) for every command
    invocation in a CMake file. Comments are dropped, quoted arguments are
    unquoted, nested parentheses are flattened away."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = _skip_bracket(text, i + 1)
            if end is None:
                end = text.find("\n", i)
                end = n if end < 0 else end
            i = end
        elif c.isalpha() or c == "_":
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_]*[ \t]*\(").match(text, i)
            if not m:
                i += 1
                continue
            name = m.group(0).split("(")[0].strip().lower()
            args, i = _cmake_arguments(text, m.end())
            yield name, args
        else:
            i += 1


def _cmake_arguments(text, i):
    """Parse arguments from just after a command's '(' to its matching ')'.
    Return (arguments, index after the ')')."""
    args, token, depth, n = [], [], 1, len(text)

    def flush():
        if token:
            args.append("".join(token))
            token.clear()

    while i < n:
        c = text[i]
        if c == "#":
            flush()
            end = _skip_bracket(text, i + 1)
            if end is None:
                end = text.find("\n", i)
                end = n if end < 0 else end
            i = end
            continue
        if c == '"':
            flush()
            j, value = i + 1, []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    value.append(text[j:j + 2])
                    j += 2
                else:
                    value.append(text[j])
                    j += 1
            args.append("".join(value))
            i = j + 1
            continue
        if c == "[" and not token:
            end = _skip_bracket(text, i)
            if end is not None:
                args.append(text[i:end])
                i = end
                continue
        if c == "(":
            flush()
            depth += 1
        elif c == ")":
            flush()
            depth -= 1
            if depth == 0:
                return args, i + 1
        elif c.isspace():
            flush()
        else:
            token.append(c)
        i += 1
    flush()
    return args, n


def _keyword_sections(args, keywords):
    """Split wrapper arguments (after the name) into {keyword: [values]}."""
    sections, current = collections.defaultdict(list), None
    for arg in args:
        if arg in keywords:
            current = arg
        elif current is not None:
            sections[current].append(arg)
    return sections


def _resolve_path(folder, value):
    """Resolve a source or directory argument to a path relative to the root,
    or None if it depends on a variable we do not know."""
    for var, base in (("${CMAKE_CURRENT_SOURCE_DIR}", folder),
                      ("${CMAKE_CURRENT_LIST_DIR}", folder),
                      ("${PROJECT_SOURCE_DIR}", ""),
                      ("${CMAKE_SOURCE_DIR}", "")):
        if value == var:
            return os.path.normpath(base) if base else "."
        if value.startswith(var + "/"):
            return os.path.normpath(os.path.join(base, value[len(var) + 1:]))
    if "$" in value or os.path.isabs(value):
        return None
    return os.path.normpath(os.path.join(folder, value))


def _project_deps(values):
    return [v for v in values if v.startswith(PROJECT_TARGET_PREFIX)]


def _paths(folder, values):
    return [p for p in (_resolve_path(folder, v) for v in values) if p]


def parse_cmake_file(folder, text):
    """Return (targets defined here, [(target, deps)], [(target, srcs)],
    include dirs) for one CMakeLists.txt in `folder`."""
    targets, links, sources, include_dirs = [], [], [], []
    for name, args in cmake_commands(text):
        if not args:
            continue
        if name in WRAPPERS:
            kind, keywords = WRAPPERS[name]
            sections = _keyword_sections(args[1:], keywords)
            targets.append(Target(args[0], folder, kind, _paths(folder, sections["SRCS"]),
                                  _project_deps(sections["DEPS"])))
        elif name in ("add_library", "add_executable"):
            if "IMPORTED" in args or "ALIAS" in args:
                continue
            skip = ADD_LIBRARY_KEYWORDS if name == "add_library" else ADD_EXECUTABLE_KEYWORDS
            kind = "library" if name == "add_library" else "binary"
            srcs = _paths(folder, [a for a in args[1:] if a not in skip])
            targets.append(Target(args[0], folder, kind, srcs, []))
        elif name == "target_link_libraries":
            links.append((args[0], _project_deps(args[1:])))
        elif name == "target_sources":
            sources.append((args[0], _paths(folder, [a for a in args[1:]
                                                     if a not in SCOPE_KEYWORDS])))
        elif name == "target_include_directories":
            include_dirs += _paths(folder, [a for a in args[1:] if a not in SCOPE_KEYWORDS])
    return targets, links, sources, include_dirs


def _walk(root, top):
    """Yield (directory relative to root, file names) under root/top, sorted,
    skipping hidden directories."""
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        yield os.path.relpath(dirpath, root), sorted(filenames)


def load_project(root):
    """Read every CMakeLists.txt under TARGET_DIRS."""
    targets, links, sources, include_dirs = {}, [], [], []
    for top in TARGET_DIRS:
        for folder, files in _walk(root, top):
            if "CMakeLists.txt" not in files:
                continue
            with open(os.path.join(root, folder, "CMakeLists.txt"), encoding="utf-8") as f:
                defined, l, s, d = parse_cmake_file(folder, f.read())
            for t in defined:
                targets[t.name] = t
            links += l
            sources += s
            include_dirs += d
    for name, deps in links:
        if name in targets:
            targets[name].deps += [d for d in deps if d not in targets[name].deps]
    for name, srcs in sources:
        if name in targets:
            targets[name].srcs += srcs
    modules = collections.defaultdict(list)
    for t in targets.values():
        modules[t.folder].append(t)
    dirs = sorted({d for d in include_dirs if d != INCLUDE_ROOT})
    return Project(root, targets, dict(modules), dirs)


# ------------------------------------------------------------------- modules


def module_of_path(project, path):
    """The module whose folder is the longest prefix of `path` (relative to
    the root), or None."""
    parts = path.split("/")
    for k in range(len(parts), 0, -1):
        folder = "/".join(parts[:k])
        if folder in project.modules:
            return folder
    return None


def resolve_include(project, including_file, header):
    """The file (relative to the root) an include "header" in
    `including_file` names, searched like the compiler does: the including
    file's folder first, then src/, then the folders targets add to the
    include path. None if it is not in the tree."""
    candidates = [os.path.dirname(including_file), INCLUDE_ROOT] + project.include_dirs
    for base in candidates:
        path = os.path.normpath(os.path.join(base, header))
        if os.path.isfile(os.path.join(project.root, path)):
            return path
    return None


def module_of_include(project, including_file, header):
    """The module an include "header" in `including_file` refers to, or None.
    Generated protobuf headers belong to proto/; a header found nowhere in
    the tree is taken as relative to src/."""
    if header.endswith(".pb.h"):
        return PROTO_MODULE if PROTO_MODULE in project.modules else None
    path = resolve_include(project, including_file, header)
    if path is None:
        path = os.path.normpath(os.path.join(INCLUDE_ROOT, header))
    return module_of_path(project, path)


def reachable_modules(project, start_targets):
    """Modules of every target reachable from `start_targets` through DEPS,
    the start targets included."""
    seen, stack = set(), [t.name for t in start_targets]
    while stack:
        name = stack.pop()
        if name in seen or name not in project.targets:
            continue
        seen.add(name)
        stack += project.targets[name].deps
    return {project.targets[n].folder for n in seen}


def module_files(project, module):
    """The .h/.cc files of a module: those in its folder and in subfolders
    that are not modules of their own."""
    files = []
    for folder, names in _walk(project.root, module):
        if module_of_path(project, folder) != module:
            continue
        files += [os.path.join(folder, n) for n in names if n.endswith(SOURCE_EXTENSIONS)]
    return files


def _side_from_targets(project, module, path, users):
    """Return "test", "library", or None when no target decides. A file is test-side
    when named like a test file, when its module has no library, or when it
    (or, for a header, its .cc twin) is built only by non-library targets."""
    if any(fnmatch.fnmatch(os.path.basename(path), p) for p in TEST_FILE_PATTERNS):
        return "test"
    if not any(t.is_library for t in project.modules[module]):
        return "test"
    stem, ext = os.path.splitext(path)
    for candidate in ([stem + ".cc", path] if ext == ".h" else [path]):
        if users.get(candidate):
            return "library" if any(t.is_library for t in users[candidate]) else "test"
    return "library" if ext == ".cc" else None


def classify_files(project, files, includes):
    """Map each file to True when it is test-side code. `files` maps a path to
    its module, `includes` a path to the files it includes. A header that no
    target builds and that has no .cc twin (test_helpers.h, ...) is on the
    library side if a library-side file includes it, or if nothing does;
    otherwise it is test-side."""
    users = collections.defaultdict(list)
    for t in project.targets.values():
        for src in t.srcs:
            users[src].append(t)
    side = {path: _side_from_targets(project, module, path, users)
            for path, module in files.items()}
    included_by = collections.defaultdict(set)
    for path, included in includes.items():
        for header in included:
            included_by[header].add(path)
    undecided = {p for p, s in side.items() if s is None}
    for p in undecided:
        side[p] = "test" if included_by[p] else "library"
    changed = True
    while changed:  # a library-side includer pulls a header to the library side
        changed = False
        for p in undecided:
            if side[p] == "test" and any(side.get(i) == "library" for i in included_by[p]):
                side[p] = "library"
                changed = True
    return {p: s == "test" for p, s in side.items()}


# --------------------------------------------------------------------- rules


def check_includes(project):
    """Rule A. Return (violations, number of files checked)."""
    files, headers, includes = {}, {}, {}
    for module in sorted(project.modules):
        for path in module_files(project, module):
            files[path] = module
            with open(os.path.join(project.root, path), encoding="utf-8", errors="replace") as f:
                headers[path] = list(dict.fromkeys(INCLUDE_RE.findall(f.read())))
            includes[path] = {resolve_include(project, path, h) for h in headers[path]} - {None}
    test_side = classify_files(project, files, includes)

    reach = {}
    for module, targets in project.modules.items():
        library = reachable_modules(project, [t for t in targets if t.is_library]) | {module}
        reach[module] = (library, reachable_modules(project, targets))

    violations = []
    for path, module in files.items():
        allowed = reach[module][1] if test_side[path] else reach[module][0]
        for header in headers[path]:
            other = module_of_include(project, path, header)
            if other is None or other in allowed:
                continue
            violations.append(
                f'layering: {path}: includes "{header}" of {other} which {module} '
                f"does not link (declare it in DEPS or remove the include)")
    return violations, len(files)


def module_graph(project):
    """Module of each library -> modules of its direct project DEPS."""
    graph = collections.defaultdict(set)
    for t in project.targets.values():
        if not t.is_library:
            continue
        for dep in t.deps:
            if dep in project.targets and project.targets[dep].folder != t.folder:
                graph[t.folder].add(project.targets[dep].folder)
    return graph


def strongly_connected_components(graph):
    """Tarjan's algorithm; returns the components as sets of nodes."""
    index, low, on_stack, stack, components = {}, {}, set(), [], []
    nodes = sorted(set(graph) | {m for targets in graph.values() for m in targets})

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            components.append(component)

    for v in nodes:
        if v not in index:
            visit(v)
    return components


def _shortest_path(graph, nodes, src, dst):
    """Shortest path src -> dst inside `nodes` (breadth first), as a list."""
    previous, queue = {src: None}, collections.deque([src])
    while queue:
        v = queue.popleft()
        if v == dst:
            path = []
            while v is not None:
                path.append(v)
                v = previous[v]
            return path[::-1]
        for w in sorted(graph.get(v, ())):
            if w in nodes and w not in previous:
                previous[w] = v
                queue.append(w)
    return None


def find_cycles(graph):
    """Cycles covering every edge that lies on one: for each such edge u -> v,
    u -> v followed by the shortest way back from v to u. Each cycle is a
    list of modules starting and ending with its smallest one."""
    cycles, covered = [], set()
    for component in strongly_connected_components(graph):
        if len(component) < 2:
            continue
        for u in sorted(component):
            for v in sorted(graph[u] & component):
                if (u, v) in covered:
                    continue
                loop = [u] + _shortest_path(graph, component, v, u)[:-1]
                start = loop.index(min(loop))
                loop = loop[start:] + loop[:start]
                covered.update(zip(loop, loop[1:] + loop[:1]))
                cycle = loop + [loop[0]]
                if cycle not in cycles:
                    cycles.append(cycle)
    return sorted(cycles)


def check_cycles(project):
    """Rule B."""
    return ["layering: cycle: " + " -> ".join(c) for c in find_cycles(module_graph(project))]


def check_architecture_doc(project):
    """Rule C."""
    doc = os.path.join(project.root, ARCHITECTURE_DOC)
    if not os.path.isfile(doc):
        return [f"layering: {ARCHITECTURE_DOC} is missing"]
    with open(doc, encoding="utf-8") as f:
        text = f.read()
    src = os.path.join(project.root, INCLUDE_ROOT)
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d))
                     and not d.startswith(".")) if os.path.isdir(src) else []
    missing = []
    for name in folders:
        # `src/event` must not count as mentioned by `src/eventstore`.
        if not re.search(r"(?<![\w/])src/" + re.escape(name) + r"(?![\w.-])", text):
            missing.append(f"layering: {ARCHITECTURE_DOC} does not mention src/{name}")
    return missing


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."),
                        help="the repository to check (default: this one)")
    args = parser.parse_args(argv)
    project = load_project(os.path.abspath(args.root))

    include_violations, checked = check_includes(project)
    violations = include_violations + check_cycles(project) + check_architecture_doc(project)
    for line in violations:
        print(line)
    if violations:
        print(f"layering-check: {len(project.modules)} modules, {checked} files, "
              f"{len(violations)} violation(s)")
        return 1
    print(f"layering-check: {len(project.modules)} modules, {checked} files, no violations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
