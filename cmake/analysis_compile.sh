#!/usr/bin/env bash
# The compile rule of the analysis-only build (STRATA_ANALYSIS_ONLY):
#   analysis_compile.sh OBJECT COMPILER ARGS... -o OBJECT -c SOURCE
# A precompiled header (its arguments carry -emit-pch) is compiled for real, so that the
# files of its target can load it; every other file is compiled with -fsyntax-only
# (parsed, analysed, every diagnostic, nothing generated) and OBJECT is an empty stamp.
set -euo pipefail
object=$1
shift
for arg in "$@"; do
  [[ "$arg" == -emit-pch ]] && exec "$@"
done
args=()
skip=0
for arg in "$@"; do
  if ((skip)); then
    skip=0
    continue
  fi
  case "$arg" in
    -o) skip=1 ;;
    -c) ;;
    *) args+=("$arg") ;;
  esac
done
"${args[@]}" -fsyntax-only
: >"$object"
