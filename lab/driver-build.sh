# lab/driver-build.sh, sourced by screen.sh and profile.sh: lab/driver.cu
# built for one kernel file into $W. The op and dtype come from the path
# (kernels/<op>/<backend>/<dtype>-NN-idea.cu), as in gpu-check.sh.
family_of() { basename "$(dirname "$(dirname "$1")")"; } # kernels/<family>/<backend>/<file>
driver_exe() { # file -> the driver's path
  echo "$W/drv-$(family_of "$1")-$(basename "${1%.*}")"
}
driver_build() { # file; 0 built, else says why on stdout
  local f=$1 fam base exe log
  fam=$(family_of "$f"); base=$(basename "${f%.*}")
  exe=$(driver_exe "$f") log=$W/build-$fam-$base.txt
  # LAB_REUSE=1: a driver this run already built from this source is kept
  # (a run script builds every driver at once, then screens and traces)
  [ -n "${LAB_REUSE:-}" ] && [ -x "$exe" ] && [ "$exe" -nt "$f" ] && [ "$exe" -nt lab/driver.cu ] && return 0
  rm -f "$exe" # a warm machine keeps $W: a failed build must not leave an older driver to be timed
  nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Iinclude \
    -DLAB_OP="LAB_$(echo "${fam}_${base%%-*}" | tr a-z A-Z)" lab/driver.cu "$f" -o "$exe" -lcupti >"$log" 2>&1 \
    || { echo "$f: build failed: $(tail -3 "$log")"; return 1; }
}
