# ruff: noqa: E501  (verbatim vendor output wider than the line limit)
"""Verbatim npu-smi outputs from public sources (named at each sample).

Whole samples come from tests/data (one copy, shared with the parser tests); the heads below
are the parts of longer outputs that those sources show.
"""

from tests.vendor_samples import sample

# vllm-ascend #198: Atlas A2 (910B3), HDK 23.0.7. 910 board query: docs/en/faultdiag/user_guide/03_collecting_logs.md
# of https://github.com/Ascend/mind-cluster. Health: npusmi_027/028 of
# https://www.hiascend.com/document/detail/zh/Atlas%20200I%20A2/2520/re/npu/ and the alarm capture (tab-indented)
# component/ascend-faultdiag/test/st_module_testcase/kg_parse/npu_info_after.txt of mind-cluster.
INFO_910B = sample("npu_smi_info", "910b3-23.0.7")
BOARD_910 = sample("npu_smi_board", "910-mc-logs")
HEALTH_NPU = sample("npu_smi_health", "npu-level-200i-a2")
HEALTH_CHIP_OK = sample("npu_smi_health", "chip-ok")
HEALTH_CHIP_ALARM = sample("npu_smi_health", "chip-alarm-tabs")


# vllm-ascend #1047: first-generation 910 (910ProB), HDK 24.1.0, NPUs 0-1 (no process
# table in the quoted excerpt).
INFO_910_HEAD = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 24.1.0                   Version: 24.1.0                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910ProB             | OK            | 78.0        38                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           2387 / 13553      18   / 32768         |
+===========================+===============+====================================================+
| 1     910ProB             | OK            | 75.8        38                0    / 0             |
| 0                         | 0000:81:00.0  | 0           1840 / 15665      8    / 32768         |
+===========================+===============+====================================================+"""

# Syllo/nvtop #421: Atlas 300I Duo (310P3), HDK 25.2.0, NPU 2 with its two chips.
INFO_310P_HEAD = """\
+--------------------------------------------------------------------------------------------------------+
| npu-smi 25.2.0                                   Version: 25.2.0                                       |
+-------------------------------+-----------------+------------------------------------------------------+
| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |
| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |
+===============================+=================+======================================================+
| 2       310P3                 | OK              | NA           45                0     / 0             |
| 0       0                     | 0000:01:00.0    | 0            1529 / 44280                            |
+-------------------------------+-----------------+------------------------------------------------------+
| 2       310P3                 | OK              | NA           43                0     / 0             |
| 1       1                     | 0000:01:00.0    | 0            1412 / 43693                            |
+===============================+=================+======================================================+"""

# `npu-smi info -l`, "Total Count" form (two of the sixteen records of
# https://github.com/ascend-ai-coding/awesome-ascend-skills/issues/78).
LIST_HEAD = """\
        Total Count                    : 16

        NPU ID                         : 0
        Chip Count                     : 1

        NPU ID                         : 1
        Chip Count                     : 1"""




