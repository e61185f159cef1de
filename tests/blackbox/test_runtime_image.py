"""The container's runtime stage matches the built binary, checked on the host because no
Docker engine runs here:

- every shared library the release binary and the staged Swift runtime libraries link directly (NEEDED) is
  owned by a Debian package that the runtime stage installs (or by the base image's essentials);
- every package the runtime stage installs is needed (except the documented extras);
- every library `ldd` resolves (transitively) belongs to one of those packages or their dependencies;
- scripts/build-release.sh --stage puts every Swift runtime library next to the binary, and the staged binary
  runs from there with the toolchain hidden.
- the HEALTHCHECK script answers 0 against a live server and 1 when nothing listens.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness import ROOT, free_port, portcullis_bin

DOCKERFILE = ROOT / "Dockerfile"
# In every debian:12-slim image (Essential/Required); not listed in the Dockerfile.
BASE_IMAGE = {"libc6", "libgcc-s1"}
# Installed on purpose though no binary links them: TLS roots for libcurl's https to GCS/S3/key URLs.
EXTRAS = {"ca-certificates"}
SWIFT_DIR = re.compile(r"/lib/swift/linux/")


def runtime_packages() -> set[str]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    stages = re.split(r"^FROM\s", text, flags=re.MULTILINE)
    runtime = stages[-1]
    packages: set[str] = set()
    for match in re.finditer(r"apt-get install ([^&;]+)", runtime):
        packages |= {word for word in match[1].split() if not word.startswith("-")}
    return packages


def ldd(path: str) -> dict[str, str]:
    out = subprocess.run(["ldd", path], capture_output=True, text=True, check=True).stdout
    libs = {}
    for line in out.splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if match:
            libs[match[1]] = match[2]
    return libs


def needed(path: str) -> list[str]:
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True, check=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", out)


def owning_package(library_path: str) -> str:
    real = os.path.realpath(library_path)
    candidates = {library_path, real}
    for path in list(candidates):
        if path.startswith("/lib/"):
            candidates.add("/usr" + path)
        if path.startswith("/usr/lib/"):
            candidates.add(path[len("/usr"):])
    for path in candidates:
        result = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if result.returncode == 0:
            return result.stdout.split(":")[0].strip()
    raise AssertionError(f"no Debian package owns {library_path}")


def depends_closure(packages: set[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(packages)
    while todo:
        package = todo.pop()
        if package in seen:
            continue
        seen.add(package)
        result = subprocess.run(["dpkg-query", "-W", "-f=${Depends}, ${Pre-Depends}", package],
                                capture_output=True, text=True)
        for alternative in result.stdout.split(","):
            for choice in alternative.split("|"):
                name = choice.strip().split(" ")[0].split(":")[0]
                if name:
                    todo.append(name)
    return seen


@pytest.fixture(scope="module")
def staged(tmp_path_factory) -> Path:
    stage = tmp_path_factory.mktemp("stage")
    subprocess.run([str(ROOT / "scripts" / "build-release.sh"), "--stage", str(stage)], cwd=ROOT, check=True,
                   capture_output=True, timeout=900)
    return stage


def test_runtime_stage_lists_exactly_the_needed_packages(staged: Path) -> None:
    binary = portcullis_bin()
    resolved = ldd(binary)
    elf_files = [binary] + [path for path in resolved.values() if SWIFT_DIR.search(path)]
    direct: set[str] = set()
    for elf in elf_files:
        for soname in needed(elf):
            path = resolved.get(soname) or ldd(elf).get(soname)
            if soname.startswith("ld-linux") or path is None:
                continue
            if SWIFT_DIR.search(path):
                continue  # copied from the build stage, not a Debian package
            direct.add(owning_package(path))
    listed = runtime_packages()
    assert listed, "no apt-get install in the runtime stage"
    missing = direct - listed - BASE_IMAGE
    assert not missing, f"runtime stage lacks packages for linked libraries: {sorted(missing)}"
    unneeded = listed - direct - EXTRAS
    assert not unneeded, f"runtime stage installs packages nothing links: {sorted(unneeded)}"

    closure = depends_closure(listed | BASE_IMAGE)
    for soname, path in resolved.items():
        if SWIFT_DIR.search(path):
            continue
        package = owning_package(path)
        assert package in closure, f"{soname} ({package}) is not pulled in by the runtime packages"


def test_stage_holds_every_swift_library_and_runs_without_toolchain(staged: Path) -> None:
    swift_libs = {Path(p).name for p in ldd(portcullis_bin()).values() if SWIFT_DIR.search(p)}
    assert swift_libs, "expected Swift runtime libraries to be linked dynamically"
    assert swift_libs <= {p.name for p in staged.iterdir()}
    for name in swift_libs:
        original = next(p for p in ldd(portcullis_bin()).values() if p.endswith("/" + name))
        assert (staged / name).read_bytes() == Path(original).read_bytes(), name
    # LD_LIBRARY_PATH is searched before RUNPATH: with it pointing at the stage, every Swift library (including
    # those the libraries themselves load) must resolve inside the stage, as it will in the image.
    env = {**os.environ, "LD_LIBRARY_PATH": str(staged)}
    out = subprocess.run(["ldd", str(staged / "portcullis")], env=env, capture_output=True, text=True).stdout
    for line in out.splitlines():
        match = re.match(r"\s*(\S+) => (\S+)", line)
        if match and SWIFT_DIR.search(match[2]):
            raise AssertionError(f"{match[1]} resolved outside the stage: {match[2]}")
    version = subprocess.run([str(staged / "portcullis"), "--version"], env=env, capture_output=True, text=True,
                             timeout=30)
    assert version.returncode == 0, version.stderr


def test_healthcheck_script(start_server) -> None:
    script = ROOT / "scripts" / "healthcheck.sh"
    server = start_server()
    ok = subprocess.run([str(script)], env={**os.environ, "PORTCULLIS_LISTEN": f"0.0.0.0:{server.port}"},
                        capture_output=True, timeout=10)
    assert ok.returncode == 0, ok.stderr
    down = subprocess.run([str(script)], env={**os.environ, "PORTCULLIS_LISTEN": f"0.0.0.0:{free_port()}"},
                          capture_output=True, timeout=10)
    assert down.returncode != 0
