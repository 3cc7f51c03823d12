#!/usr/bin/env bash
# `pip install .` into a fresh virtual environment, without network access, then the
# installed package's tests from outside the source tree (ctest's python_pip_install).
#
#   pip_install_check.sh SOURCE_DIR WORK_DIR PYTHON
#
# The venv sees the system's site-packages (Debian's numpy, torch, pytest); `strata` must
# come from the venv. STRATA_BUILD_DIR (set by ctest) points the build backend at the
# already built tree.
set -euo pipefail
src=$1
work=$2
python=$3
rm -rf "$work"
mkdir -p "$work"
"$python" -m venv --system-site-packages "$work/venv"
# No index: whatever pip would need from the network makes this fail.
(cd "$src" && PIP_NO_INDEX=1 "$work/venv/bin/pip" install --no-cache-dir --disable-pip-version-check \
  --no-input . 2>&1 | tail -n 3)
cd "$work"
location=$("$work/venv/bin/python" -c 'import strata, os; print(os.path.dirname(strata.__file__))')
case "$location" in
  "$work/venv/"*) echo "pip_install_check: strata imported from $location" ;;
  *) echo "pip_install_check: strata came from $location, not the venv" >&2; exit 1 ;;
esac
"$work/venv/bin/python" -m pytest -q -p no:cacheprovider \
  "$src/python/tests/test_stubs.py" "$src/python/tests/test_client.py::test_write_match_read_numpy"
