"""The tuner: an honest HGEMM benchmark (eval_one_file.sh), a learning search agent over the kernel config space,
summaries, tuned tables for the dispatcher, and the workers that spread tuning over GPUs.

Importing `tuner` (and every module but the GPU-side ones when called) needs neither a GPU nor the kernel library."""
