# The sources of backends/gpu, shared by backends/cuda and backends/hip so that the list exists once.
# Kernels (.cu) go through nvcc or hipcc; the rest is host C++ that only includes the runtime API.
set(PORTA_GPU_DIR ${CMAKE_CURRENT_LIST_DIR})
set(PORTA_GPU_KERNEL_SOURCES
  ops/matmul.cu ops/conv2d.cu ops/elementwise.cu ops/batchnorm.cu ops/pool.cu ops/softmax.cu ops/shape_ops.cu
  ops/fma_probe.cu ops/reduce.cu ops/norm.cu ops/backward.cu ops/attention.cu ops/index_ops.cu ops/cast.cu
  ops/logic.cu ops/dropout.cu)
set(PORTA_GPU_HOST_SOURCES
  backend.cpp runtime/check.cpp runtime/context.cpp runtime/buffer.cpp runtime/program.cpp runtime/node_launches.cpp)
list(TRANSFORM PORTA_GPU_KERNEL_SOURCES PREPEND ${PORTA_GPU_DIR}/)
list(TRANSFORM PORTA_GPU_HOST_SOURCES PREPEND ${PORTA_GPU_DIR}/)
