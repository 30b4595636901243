"""The HGEMM kernel library: variants described as data (config, space), generated (codegen), built (build),
loaded and launched (runtime). Importing it needs no GPU, no nvcc and nothing built: GPU work is lazy."""
