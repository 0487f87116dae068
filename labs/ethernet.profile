# cpu ranks on a 4 Gb/s network (50 us, 500 MB/s links)
# Lab 12 (DDP buckets): a network slow enough that the all-reduce of
# fmnist-large's 147 MB of gradients takes about as long as the backward.
# Compute as the cpu-loopback preset (sim/cluster.c: one core's OpenBLAS
# SGEMM, ~48 GFLOP/s); what differs from it is said above.
name = cpu ranks on a 4 Gb/s network (50 us, 500 MB/s links)
flops_per_s = 48000000000
mem_bw_bytes_per_s = 10000000000
op_overhead_s = 2e-06
mem_bytes = 8589934592
devices_per_node = 1
intra_latency_s = 5e-05
intra_bw_bytes_per_s = 500000000
inter_latency_s = 5e-05
inter_bw_bytes_per_s = 500000000
