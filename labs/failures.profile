# cpu ranks that fail (detect 20 ms, restart 50 ms)
# Lab 13 (failures): noticing a dead rank takes 20 ms (a heartbeat timeout),
# starting the ranks again 50 ms, as cheap as a short run needs to show the
# redone work; checkpoints go to a 1 GB/s disk.
# Compute as the cpu-loopback preset (sim/cluster.c: one core's OpenBLAS
# SGEMM, ~48 GFLOP/s); what differs from it is said above.
name = cpu ranks that fail (detect 20 ms, restart 50 ms)
flops_per_s = 48000000000
mem_bw_bytes_per_s = 10000000000
op_overhead_s = 2e-06
mem_bytes = 8589934592
devices_per_node = 1
intra_latency_s = 5e-07
intra_bw_bytes_per_s = 5000000000
inter_latency_s = 5e-07
inter_bw_bytes_per_s = 5000000000
ckpt_write_bw_bytes_per_s = 1e9
ckpt_read_bw_bytes_per_s = 1e9
detect_s = 0.02
restart_s = 0.05
