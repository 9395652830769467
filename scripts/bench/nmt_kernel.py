"""The BLAS kernel nmt runs, given to PyTorch too (imported by the bench
scripts and the experiments that run PyTorch beside nmt).

Debian's PyTorch does its products in the same OpenBLAS (the generic BLAS,
libblas.so.3). On a CPU that OpenBLAS does not know it falls back to its
Prescott kernel; nmt notices and runs itself again with OPENBLAS_CORETYPE
(src/cli/cli_blas.c), PyTorch does not. same_kernel() asks nmt which kernel
it runs and sets OPENBLAS_CORETYPE in this process's environment when nmt
chose it (and the caller did not set it), so that every later child, nmt and PyTorch alike, runs that
kernel and a ratio compares like with like. Python 3 standard library only.
"""
import os
import re
import subprocess


def kernel_line(nmt):
    """nmt info's kernel line: "SkylakeX (OpenBLAS chose Prescott; ...)"."""
    out = subprocess.run([nmt, "info"], capture_output=True, text=True).stdout
    m = re.search(r"^kernel\s+(.*)$", out, re.M)
    return m.group(1).strip() if m else "unknown"


def same_kernel(nmt):
    """Sets OPENBLAS_CORETYPE to the kernel nmt chose, if it chose one and
    the caller did not set the variable; returns nmt's kernel line (what a
    benchmark reports beside its figures)."""
    line = kernel_line(nmt)
    m = re.search(r"nmt set OPENBLAS_CORETYPE=(\S+?)\)", line)
    # NMT_TEST_BLAS_FALLBACK=1: the variable stands for OpenBLAS's own choice
    theirs = os.environ.get("NMT_TEST_BLAS_FALLBACK") == "1"
    if m and ("OPENBLAS_CORETYPE" not in os.environ or theirs):
        os.environ["OPENBLAS_CORETYPE"] = m.group(1)
    return line
