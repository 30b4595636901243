"""The tuner: an honest HGEMM benchmark (eval_one_file.sh), a learning search agent over the kernel config space,
summaries, tuned tables for the dispatcher, and the workers that spread tuning over GPUs.

Importing `tuner` (and every module but the GPU-side ones when called) needs neither a GPU nor the kernel library."""

import os as _os

# The agent's linear algebra is on ~300x300 matrices: a few BLAS threads are plenty. Left alone, OpenBLAS starts one
# thread per core it sees, and on the H200 host (a container given 16-32 of many more cores) that oversubscription
# made every factorisation take ~1 s instead of ~10 ms: tuning ran at a quarter of its speed. Set before numpy loads
# (a caller's own setting wins).
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_name, "4")
