# cpu ranks with 256 MiB of memory each
# Lab 9 (model parallelism): devices too small for fmnist-large's parameters,
# gradients and momentum (3 x 147 MB) on one device.
# Compute as the cpu-loopback preset (sim/cluster.c: one core's OpenBLAS
# SGEMM, ~48 GFLOP/s); what differs from it is said above.
name = cpu ranks with 256 MiB of memory each
flops_per_s = 48000000000
mem_bw_bytes_per_s = 10000000000
op_overhead_s = 2e-06
mem_bytes = 268435456
devices_per_node = 1
intra_latency_s = 5e-07
intra_bw_bytes_per_s = 5000000000
inter_latency_s = 5e-07
inter_bw_bytes_per_s = 5000000000
