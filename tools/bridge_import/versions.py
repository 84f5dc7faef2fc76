"""Which Megatron-Bridge version each NeMo release shipped, and the trees a recipe is read from.

The map is read from the tree the importer is given, never written here (docs/bridge-import.md):
- docs/releases/software-versions.md: `## NeMo Framework 26.06` sections, each with a `| Megatron-Bridge | 0.5.0 |`
  row (the release's component table);
- docs/releases/known-issues.md: "Fixed in 26.02.01 (r0.3.1)" (a point release and its Bridge version);
- docs/versions1.json: the documentation site's version list, `"name": "0.5.1 (latest) · 26.06.01"`.
A release the component table names takes its version from there; the other two fill in the point releases and
the newest one. A release none of them names has no version (its rows are a named skip).
A Source is a folder (DirSource) or one git revision of a repository (GitSource, `git show REV:PATH`).
"""
import json
import os
import re
import subprocess

SOFTWARE_VERSIONS = "docs/releases/software-versions.md"
KNOWN_ISSUES = "docs/releases/known-issues.md"
DOCS_VERSIONS = "docs/versions1.json"
_SECTION = re.compile(r"^## NeMo Framework (\S+)\s*$")
_BRIDGE_ROW = re.compile(r"^\|\s*Megatron[- ]Bridge\s*\|\s*v?([0-9][0-9A-Za-z.]*)\s*\|")
_FIXED_IN = re.compile(r"\b(\d\d\.\d\d(?:\.\d\d)?) \(r(\d+\.\d+\.\d+[0-9A-Za-z]*)\)")
_DOCS_NAME = re.compile(r"^v?(\d+\.\d+\.\d+[0-9A-Za-z]*)(?: \([^)]*\))? · (\d\d\.\d\d(?:\.\d\d)?)$")


class InputError(Exception):
    """The user's input is wrong (exit 2): the message names the file or field."""


class DirSource:
    """A Megatron-Bridge tree on disk. Paths are repo-relative with '/'."""

    def __init__(self, root):
        self.root = root
        self.label = None

    def isfile(self, rel):
        return os.path.isfile(os.path.join(self.root, rel))

    def isdir(self, rel):
        return os.path.isdir(os.path.join(self.root, rel))

    def read(self, rel):
        with open(os.path.join(self.root, rel), encoding="utf-8") as f:
            return f.read()

    def show(self, rel):
        return os.path.join(self.root, rel)


class GitSource:
    """One revision (a tag) of a git repository: files are read with `git show`, nothing is checked out."""

    def __init__(self, gitdir, rev):
        self.gitdir, self.rev, self.label = gitdir, rev, rev
        listing = _git(gitdir, "ls-tree", "-r", "--name-only", "-z", rev)
        self.files = set(listing.split("\0")) - {""}
        self.dirs = {p.rsplit("/", i)[0] for p in self.files for i in range(1, p.count("/") + 1)}

    def isfile(self, rel):
        return rel in self.files

    def isdir(self, rel):
        return rel in self.dirs

    def read(self, rel):
        return _git(self.gitdir, "show", f"{self.rev}:{rel}")

    def show(self, rel):
        return f"{self.rev}:{rel}"


def _git(gitdir, *args):
    try:
        done = subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise InputError("git: not installed (needed by --git)") from None
    if done.returncode != 0:
        raise InputError(f"{gitdir}: git {' '.join(args[:2])} failed: "
                         f"{done.stderr.decode('utf-8', 'replace').strip()}")
    return done.stdout.decode("utf-8")


def tags(gitdir):
    """The repository's tag names; InputError if gitdir is not a git repository."""
    return set(_git(gitdir, "tag", "--list").split())


def has_commit(gitdir, commit):
    try:
        _git(gitdir, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}")
        return True
    except InputError:
        return False


def release_versions(source):
    """{release: (Bridge version, "file:line" that says so)} from the tree's release docs. Missing files give
    no entries; a file that is there but not readable is an InputError."""
    found = {}
    if source.isfile(SOFTWARE_VERSIONS):
        release = None
        for number, line in enumerate(_text(source, SOFTWARE_VERSIONS).splitlines(), 1):
            m = _SECTION.match(line)
            if m:
                release = m.group(1)
                continue
            m = _BRIDGE_ROW.match(line)
            if m and release is not None and release not in found:
                found[release] = (m.group(1), f"{SOFTWARE_VERSIONS}:{number}")
    if source.isfile(KNOWN_ISSUES):
        for number, line in enumerate(_text(source, KNOWN_ISSUES).splitlines(), 1):
            for release, version in _FIXED_IN.findall(line):
                found.setdefault(release, (version, f"{KNOWN_ISSUES}:{number}"))
    if source.isfile(DOCS_VERSIONS):
        try:
            entries = json.loads(_text(source, DOCS_VERSIONS))
        except json.JSONDecodeError as e:
            raise InputError(f"{source.show(DOCS_VERSIONS)}: not JSON ({e.msg}, line {e.lineno})") from None
        if not isinstance(entries, list):
            raise InputError(f"{source.show(DOCS_VERSIONS)}: expected a list of versions")
        for i, entry in enumerate(entries):
            m = _DOCS_NAME.match(entry.get("name", "")) if isinstance(entry, dict) and isinstance(
                entry.get("name", ""), str) else None
            if m:
                found.setdefault(m.group(2), (m.group(1), f"{DOCS_VERSIONS}: entry {i}"))
    return found


def _text(source, rel):
    try:
        return source.read(rel)
    except UnicodeDecodeError:
        raise InputError(f"{source.show(rel)}: not UTF-8 text") from None
