//! meshrun kernels: CPU implementations of local ops (CUDA later).
