"""strata's PEP 517 build backend: `pip install .` builds the extension module with CMake.

In the tree (pyproject.toml's backend-path) and needing nothing from an index, so that
`pip install .` works without network access: it requires no build dependency (no
setuptools, no scikit-build), configures and builds the `strata_python` target of the
project's CMake build, and writes the wheel with the standard library's zipfile.

Where it builds:
  $STRATA_BUILD_DIR, or config setting build-dir (`pip install . -C build-dir=...`): an
      existing CMake build tree (the test command's build/release): only strata_python is
      brought up to date there;
  else build/pip under the source tree, configured once (Release, no tests or benchmarks)
      for the Python running pip.
The wheel holds the package python/strata (the connectors included) and the module. It
links the Debian shared libraries strata needs (gRPC, UCX, RocksDB, ...), so it is for
this machine's kind (Debian 12 with deploy/setup.sh's packages), not for PyPI.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile

NAME = "strata"
ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "strata"
SUMMARY = "strata: a tiered, distributed KV-cache store for LLM inference (libstrata bindings, vLLM and SGLang connectors)"


def _version() -> str:
    text = (ROOT / "CMakeLists.txt").read_text()
    match = re.search(r"project\(strata VERSION ([0-9.]+)", text)
    if not match:
        raise RuntimeError("CMakeLists.txt: no project(strata VERSION ...)")
    return match.group(1)


def _tag() -> str:
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def _metadata() -> str:
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nLicense: see the repository\n")


def _wheel_file() -> str:
    return (f"Wheel-Version: 1.0\nGenerator: strata_build_backend\nRoot-Is-Purelib: false\n"
            f"Tag: {_tag()}\n")


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _build_dir(config_settings) -> pathlib.Path:
    given = os.environ.get("STRATA_BUILD_DIR") or (config_settings or {}).get("build-dir")
    return pathlib.Path(given) if given else ROOT / "build" / "pip"


def _run(cmd: list) -> None:
    print("strata_build_backend:", " ".join(str(c) for c in cmd), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in cmd], check=True, stdout=sys.stderr)


def _build_module(config_settings) -> pathlib.Path:
    build = _build_dir(config_settings)
    if not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        # Unity batches, as the test command builds: a third of the compile time on 2 cores.
        _run(["cmake", "-S", ROOT, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release",
              "-DSTRATA_BUILD_TESTS=OFF", "-DSTRATA_BUILD_BENCHMARKS=OFF", "-DSTRATA_PYTHON=ON",
              "-DSTRATA_UNITY_BUILD=ON", f"-DPython3_EXECUTABLE={sys.executable}"])
    _run(["cmake", "--build", build, "--target", "strata_python", "-j", str(os.cpu_count() or 2)])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    module = build / "python" / "strata" / f"_strata{suffix}"
    if not module.exists():
        found = sorted((build / "python" / "strata").glob("_strata*"))
        raise RuntimeError(f"{build} built no _strata{suffix} for this Python ({sys.executable}); "
                           f"found {[f.name for f in found]}: build for this interpreter "
                           "(-DPython3_EXECUTABLE) or unset STRATA_BUILD_DIR")
    return module


def _package_files():
    for path in sorted(PACKAGE.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            if path.suffix in (".py", ".pyi", ".typed", ".md"):
                yield path, "strata/" + path.relative_to(PACKAGE).as_posix()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


# ------------------------------------------------------------------------ PEP 517 hooks

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = pathlib.Path(metadata_directory) / _dist_info()
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata())
    (info / "WHEEL").write_text(_wheel_file())
    return info.name


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    module = _build_module(config_settings)
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    records = []
    out = pathlib.Path(wheel_directory) / name
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as wheel:
        def add(arcname: str, data: bytes) -> None:
            wheel.writestr(arcname, data)
            records.append(_record_line(arcname, data))

        for path, arcname in _package_files():
            add(arcname, path.read_bytes())
        add(f"strata/{module.name}", module.read_bytes())
        add(f"{_dist_info()}/METADATA", _metadata().encode())
        add(f"{_dist_info()}/WHEEL", _wheel_file().encode())
        records.append(f"{_dist_info()}/RECORD,,")
        wheel.writestr(f"{_dist_info()}/RECORD", "\n".join(records) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files (git ls-files), as strata-VERSION.tar.gz."""
    base = f"{NAME}-{_version()}"
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], check=True,
                           capture_output=True).stdout.decode().split("\0")
    out = pathlib.Path(sdist_directory) / f"{base}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for f in filter(None, files):
            tar.add(ROOT / f, arcname=f"{base}/{f}", recursive=False)
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = _metadata().encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.name
