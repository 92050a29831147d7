#!/usr/bin/env bash
# Installs the build tree, builds tests/install/consumer against it (find_package and pkg-config),
# runs it on the fixture database, and does the same look-up through the Python package installed
# with pip (no network). Every step must pass.
# usage: run_consumer.sh BUILD_DIR WORK_DIR CONSUMER_SRC PYTHON_SRC PYTHON3 DB EXPECTED VERSION
set -euo pipefail
build=$1 work=$2 src=$3 pysrc=$4 py=$5 db=$6 expected=$7 version=$8 examples=$9 cuda_inc=${10} cuda_lib=${11}
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/ktune/ktune.h include/ktune/ktune_runtime.h include/ktune/ktune.hpp include/ktune/version.h \
         lib/libktune_runtime.so lib/libktune.so bin/ktune lib/cmake/ktune/ktuneConfig.cmake \
         lib/cmake/ktune/ktuneConfigVersion.cmake lib/pkgconfig/ktune.pc; do
  [[ -e $prefix/$f ]] || { echo "not installed: $f"; exit 1; }
done

# The installed ktune reads the installed configs (share/ktune/configs), not the source tree's: a
# preset added only to the installed copy is among those it knows, and the quick preset loads.
for d in spaces presets shapes; do
  [[ -d $prefix/share/ktune/configs/$d ]] || { echo "not installed: share/ktune/configs/$d"; exit 1; }
done
cp "$prefix/share/ktune/configs/presets/quick.toml" "$prefix/share/ktune/configs/presets/installed_only.toml"
set +e
known=$(env -u KTUNE_CONFIGS_DIR "$prefix/bin/ktune" tune --preset no_such_preset --compile-only --arch sm_90 \
  --db "$work/presets.db" 2>&1)
set -e
grep -q "installed_only" <<< "$known" || { echo "the installed ktune does not read share/ktune/configs: $known"; exit 1; }

# Only ktune_-prefixed C symbols and ktune:: C++ symbols are exported, and the two libraries share none.
for lib in libktune_runtime.so libktune.so; do
  nm -D --defined-only "$prefix/lib/$lib" | awk '{print $3}' | c++filt | sort -u > "$work/$lib.symbols"
  if grep -v -E '^(ktune_|ktune::|typeinfo (name )?for ktune::|vtable for ktune::)' "$work/$lib.symbols"; then
    echo "$lib exports symbols outside ktune_ / ktune::"; exit 1
  fi
done
if comm -12 "$work/libktune_runtime.so.symbols" "$work/libktune.so.symbols" | grep .; then
  echo "libktune_runtime.so and libktune.so export the same symbols"; exit 1
fi

cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"
gpu=$(sed -n 's/^gpu=//p' "$expected")
shape=$(sed -n 's/^exact_shape=//p' "$expected")
config=$(sed -n 's/^exact_config=//p' "$expected")
out=$("$work/build/consumer" "$db" "$gpu" "$shape")
echo "$out"
grep -q "\"config_name\":\"$config\"" <<< "$out"
grep -q "runtime library $version" <<< "$out"

[[ $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion ktune) == "$version" ]]
cc $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags ktune) -x c - -o "$work/pc_consumer" \
  $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs ktune) <<'C'
#include <stdio.h>
#include "ktune/ktune_runtime.h"
#include "ktune/version.h"
int main(void) { printf("%s %s\n", ktune_runtime_version(), KTUNE_VERSION_STRING); return 0; }
C
# No LD_LIBRARY_PATH: the run path from ktune.pc finds the installed libraries.
env -u LD_LIBRARY_PATH "$work/pc_consumer" | grep -q "^$version $version$"

# The examples are users' programs: the installed header, pkg-config and the CUDA runtime only.
for ex in gemm_example ops_example; do
  c++ -std=c++20 $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags ktune) -I"$cuda_inc" \
    "$examples/$ex.cpp" -o "$work/$ex" $(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs ktune) \
    -L"$cuda_lib" -lcudart_static -ldl -lpthread -lrt
  if command -v nvidia-smi > /dev/null && nvidia-smi > /dev/null 2>&1; then continue; fi  # a GPU: run by the gpu suites
  set +e
  said=$(env -u LD_LIBRARY_PATH "$work/$ex" 2>&1)
  rc=$?
  set -e
  [[ $rc == 3 ]] || { echo "$ex without a GPU: exit $rc (expected 3): $said"; exit 1; }
  grep -qi "gpu\|driver\|device" <<< "$said" || { echo "$ex does not say why: $said"; exit 1; }
done

# The Python package that `cmake --install` lays out finds the installed libraries by itself (no
# KTUNE_LIBRARY), run from outside the checkout so that no build tree is near.
site=$(ls -d "$prefix"/lib/python3.*/site-packages)
[[ -f $site/ktune/__init__.py ]] || { echo "not installed: lib/python3.X/site-packages/ktune"; exit 1; }
(cd "$work" && env -u KTUNE_LIBRARY PYTHONPATH="$site" "$py" -c "
import ktune
got = ktune.query('gemm', '$shape', 'bf16', gpu='$gpu', db='$db')
assert got['config_name'] == '$config', got
assert ktune.version() == '$version', ktune.version()
print('installed python package:', got['config_name'])
")

# The Python package, installed without network into a folder, uses the installed libraries.
cp -r "$pysrc" "$work/python-src"
"$py" -m pip install --quiet --no-index --no-build-isolation --target "$work/site" "$work/python-src"
(cd "$work" && PYTHONPATH="$work/site" KTUNE_LIBRARY="$prefix/lib/libktune_runtime.so" "$py" -c "
import ktune, sys
got = ktune.query('gemm', '$shape', 'bf16', gpu='$gpu', db='$db')
assert got['config_name'] == '$config', got
assert ktune.version() == '$version', ktune.version()
print('python package:', got['config_name'])
")
echo "install consumer: ok"
