# cpu ranks over a WAN (5 ms, 5 GB/s links)
# Lab 11 (network): latency 10^4 times the LAN's, the same bandwidth: every
# message costs 5 ms, however small (geo-distributed or federated training).
# Compute as the cpu-loopback preset (sim/cluster.c: one core's OpenBLAS
# SGEMM, ~48 GFLOP/s); what differs from it is said above.
name = cpu ranks over a WAN (5 ms, 5 GB/s links)
flops_per_s = 48000000000
mem_bw_bytes_per_s = 10000000000
op_overhead_s = 2e-06
mem_bytes = 8589934592
devices_per_node = 1
intra_latency_s = 5e-03
intra_bw_bytes_per_s = 5000000000
inter_latency_s = 5e-03
inter_bw_bytes_per_s = 5000000000
