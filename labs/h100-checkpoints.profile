# A cluster profile: the h100-nvlink-ib preset (sim/cluster.c says where each
# number comes from) plus what failures cost, for labs/llama3-failures.conf.
#
# ckpt_write/read: every device writes its own state to local NVMe at about
#   2 GB/s (a datacenter PCIe 4 SSD sustains 2-4 GB/s of sequential writes);
#   a shared file system's total bandwidth is not modelled.
# detect_s: a dead rank noticed within a minute (a collective's timeout, as
#   NCCL's watchdog or a heartbeat would).
# restart_s: five minutes to reschedule 16k processes, re-form NCCL's
#   communicators and warm up: an assumption of the right order, not a
#   measurement.
name = h100-nvlink-ib + checkpoints
flops_per_s = 247350000000000
mem_bw_bytes_per_s = 3015000000000
op_overhead_s = 5e-06
mem_bytes = 85899345920
devices_per_node = 8
intra_latency_s = 3e-06
intra_bw_bytes_per_s = 450000000000
inter_latency_s = 5e-06
inter_bw_bytes_per_s = 50000000000
ckpt_write_bw_bytes_per_s = 2e9
ckpt_read_bw_bytes_per_s = 2e9
detect_s = 60
restart_s = 300
