"""Dynamics algorithms: numba kernels and their thin public wrappers."""
