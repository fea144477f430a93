"""Our Triton attention kernels. Nothing is imported here: Triton chooses between the CPU
interpreter and the GPU compiler when a kernel is defined, so TRITON_INTERPRET must be set before
the first import of `kernels`. Inside this package `import triton` is the real Triton package
(absolute imports); the package's own modules are imported relatively."""
