"""The CANN-side families of the knowledge base (error code classes, HCCL/HCCP, runtime/ACL,
AI CPU, GE/TBE/ATB) on real lines: a message entry wins over its code's entry, and a real
plog excerpt is led by the line that locates its first cause. Every entry's own samples are
tested in test_signatures.py; these are lines the entries were not written from."""

from __future__ import annotations

import pytest

from ascend_env.explain.match import default_matcher

# The code entries (CANN's error code table) rank 50; a line whose message has its own entry
# must go to that entry, and a code line without one to the code's entry.
LINES = [
    # https://github.com/hicann/hccl/blob/7076f76a733493cd2fc8b5521aad8703f2488f19/docs/en/user_guide/fault_diagnosis/param_link_stage.md
    ("[PID: 2103452] 2025-11-03-20:18:46.447.213 Resource_Error_Insufficient_Device_Memory"
     "(EI0011): Failed to allocate [size: [0.25MB, 3MB], Affected by QP depth configuration.] "
     "bytes of NPU memory.", "hccl.qp-depth-memory"),
    ("EI0005: 2024-04-24-06:32:27.781.599 The arguments for collective communication are "
     "inconsistent between ranks:parameter count, local end 16512, remote end 8320",
     "hccl.ei0005-inconsistent-args"),
    # https://github.com/hicann/hccl/blob/bf07f6e5c76b263f36264e439f29c6a0581cae1e/docs/en/user_guide/fault_diagnosis/cluster_info_nego.md
    ("[PID: 2267203] 2025-11-21-11:38:29.575.404 Communication_Error_Bind_IP_Port(EI0019): "
     "Failed to enable listening for the host network adapter socket.Reason: The IP address "
     "192.168.1.100 and port 50001 have already been bound.", "hccl.ei0019-host-listen"),
    ("[ERROR] HCCL(1041081,all_reduce_test):2025-11-21-01:20:01.624.966 "
     "[topoinfo_exchange_server.cc:314] [1041362][InitGroupStage][RanktableDetect]topo "
     "exchange server get socket timeout! timeout[120 s]", "hccl.topo-server-socket-timeout"),
    # https://www.hiascend.com/doc_center/source/zh/CANNCommunityEdition/81RC1beta1/hccl/hcclug/hcclug_000037.html
    ("EI0008: The CANN versions are inconsistent: tag [HcomAllReduce_6629421139219749105_0], "
     "local_version [1.83.T10.0.B206], remote_version [1.83.T10.0.B207]",
     "hccl.ei0008-version-mismatch"),
    # https://github.com/verl-project/verl/pull/332
    ("(TaskRunner pid=467613) EJ0001: [PID: 468348] 2025-04-24-16:14:56.975.866 Failed to "
     "initialize the HCCP process. Reason: Maybe the last training process is running.",
     "hccp.ej0001-start"),
    # https://github.com/vllm-project/vllm-ascend/issues/1815 (the title)
    ("RuntimeError: EJ0002: [PID: 38079] 2025-07-15-12:45:31.202.787 The network port is "
     "down.", "hccp.ej0002-port-down"),
    # https://github.com/hw-native-sys/PTOAS/pull/763
    ("       The extend info: errcode:(0x4000000000000000, 0, 0) errorStr: VEC instruction "
     "error: the ub address out of bounds. fixp_error0 info: 0x6000022, fixp_error1 info: "
     "0x8b, fsmId:0, tslot:3, thread:0, ctxid:0, blk:0, sublk:0, subErrType:4.[FUNC:"
     "PrintCoreInfo][FILE:device_error_core_proc.cc][LINE:658]", "runtime.vec-ub-out-of-bounds"),
    ("[ERROR] aclrtSynchronizeStream(stream) failed: 507035 (/home/zhongxuan/ptoas-board-"
     "monitor/runtime/runs/20260609_095805_merged_pr763/npu_validation/Rowmax/rowmax/main.cpp"
     ":92)", "runtime.vector-core-507035"),
    # https://github.com/vllm-project/vllm-ascend/issues/2105
    ("EH9999: [PID: 56178] 2025-07-30-06:16:22.730.302 wait for compute device to finish "
     "failed, runtime result = 507018.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]",
     "aicpu.exception-507018"),
]


@pytest.mark.parametrize(("line", "expected"), LINES, ids=[e for _, e in LINES])
def test_a_real_line_goes_to_its_most_specific_entry(line: str, expected: str) -> None:
    best = default_matcher().best(line)
    assert best is not None and best.id == expected


def test_hccp_port_down_leads_the_rdma_and_listen_failures_it_causes() -> None:
    # The plog of https://github.com/vllm-project/vllm-ascend/issues/1815: the device's
    # network answered -67 (port down), so RDMA init and the port listen failed after it.
    log = (
        "[ERROR] HCCP(38011,python):2025-07-15-12:45:32.997.682 [ra_hdc_rdma.c:1199]tid:38011,"
        "ra_hdc_rdev_init(1199) : [init][ra_hdc_rdev]ra hdc message process failed ret(-67) "
        "phy_id(0)\n"
        "[ERROR] HCCL(38011,python):2025-07-15-12:45:32.997.778 [adapter_hccp.cc:647] [38011]"
        "[Init][RaRdma]errNo[0x0000000005000013] rdma init fail. return: ret[328004]\n"
        "[ERROR] HCCL(38011,python):2025-07-15-12:45:32.997.787 [hccl_socket.cc:100] [38011]"
        "[HcclSocket][Listen] socket type[1], listen on ip[192.168.20.148] and specific port"
        "[16666] fail. Please check the port status and whether the port is been using by "
        "other process.\n")
    scan = default_matcher().scan([("plog", log)])
    (chain,) = scan.chains
    assert chain.lead.signature.id == "hccp.npu-down-before-task"
    assert {e.signature.id for e in chain.echoes} == {"hccl.rdma-init", "hccl.listen-port-busy"}
    assert scan.unknown == []


def test_the_probed_pair_leads_a_link_setup_timeout() -> None:
    # hccl's own guide (param_link_stage.md, link above): the socket wait times out first,
    # then HCCL's probe names the pair that cannot connect; the pair is what to look at.
    log = (
        "[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.113.403 [hccl_socket_manager.cc:797] "
        "[18744][Wait][LinkEstablish]wait socket establish timeout, role[1] rank[1] "
        "timeout[120 s]\n"
        "[ERROR] HCCL(17528,python3):2026-03-18-10:33:52.114.027 [transport_manager.cc:1252] "
        "[18744][CreateLink][InitChannelStage][Timeout]SetMachinePara error.\n"
        "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.141.966 [detect_connect_anomalies.cc"
        ":132] [18744]This node (server 192.168.200.100, device ID 1) detects that srcRank "
        "(server 192.168.200.100, device ID 1) fails to connect to dstRank (server "
        "192.168.200.100, device ID 0). Continue to analyze the fault based on the logs of "
        "srcRank and dstRank.\n"
        "[ERROR] HCCL(17528,python3):2026-03-18-10:34:43.142.108 [hccl_communicator_host.cc:"
        "6370] [18111][AllocAlgResource]Alloc transports failed, tag[HcomAllReduce_"
        "6629421139219749105_0_device]\n")
    scan = default_matcher().scan([("plog", log)])
    (chain,) = scan.chains
    assert chain.lead.signature.id == "hccl.connect-detect-result"
    assert {e.signature.id for e in chain.echoes} == {
        "hccl.wait-socket-establish", "hccl.init-channel-timeout", "hccl.alloc-transports-failed"}


def test_every_cann_family_is_present() -> None:
    families = {s.family for s in default_matcher().signatures}
    assert {"cann", "hccl", "hccp", "runtime", "acl", "aicpu", "compilers", "ge", "atb"} <= families
