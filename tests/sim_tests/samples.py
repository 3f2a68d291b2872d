# ruff: noqa: E501  (verbatim vendor output wider than the line limit)
"""Verbatim npu-smi outputs from ascend-facts.md §4 (sources named there)."""

# §4.1, vllm-ascend #198: Atlas A2 (910B3), HDK 23.0.7, NPUs 0-1 and the process table head.
INFO_910B = """\
+------------------------------------------------------------------------------------------------+
| npu-smi 23.0.7                   Version: 23.0.7                                               |
+---------------------------+---------------+----------------------------------------------------+
| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|
| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |
+===========================+===============+====================================================+
| 0     910B3               | OK            | 102.8       55                0    / 0             |
| 0                         | 0000:C1:00.0  | 0           0    / 0          3338 / 65536         |
+===========================+===============+====================================================+
| 1     910B3               | OK            | 97.6        54                0    / 0             |
| 0                         | 0000:C2:00.0  | 0           0    / 0          3337 / 65536         |
+===========================+===============+====================================================+
+---------------------------+---------------+----------------------------------------------------+
| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |
+===========================+===============+====================================================+
| No running processes found in NPU 0                                                            |
+===========================+===============+====================================================+
| No running processes found in NPU 1                                                            |
+===========================+===============+====================================================+"""

# §4.2, vllm-ascend #1047: first-generation 910 (910ProB), HDK 24.1.0, NPUs 0-1 (no process
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

# §4.3, Syllo/nvtop #421: Atlas 300I Duo (310P3), HDK 25.2.0, NPU 2 with its two chips.
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

# §4.5 form A (two of sixteen records shown in the source).
LIST_HEAD = """\
        Total Count                    : 16

        NPU ID                         : 0
        Chip Count                     : 1

        NPU ID                         : 1
        Chip Count                     : 1"""

# §4.6, MC-LOGS: first-generation 910 board query.
BOARD_910 = """\
        NPU ID                         : 0
        Software Version               : 23.0.5
        Firmware Version               : 7.1.0.7.220
        Compatibility                  : OK
        Board ID                       : 0x02
        PCB ID                         : A
        BOM ID                         : 1
        PCIe Bus Info                  : 0000:61:00.0
        Slot ID                        : 0
        Class ID                       : NA
        PCI Vendor ID                  : 0x19e5
        PCI Device ID                  : 0xD801
        Subsystem Vendor ID            : 0x0200
        Subsystem Device ID            : 0x0100
        Chip Count                     : 1"""

# §4.7, NPUSMI-A2 npusmi_027 / npusmi_028.
HEALTH_NPU = """\
        NPU ID                         : 0
        Chip Count                     : 1

        Chip ID                        : 0
        Health                         : OK

        Health                         : OK
        Chip Name                      : MCU"""

HEALTH_CHIP_OK = """\
        Health Status                  : OK
        Error Code                     : NA
        Error Information              : NA"""

# §4.7, MC-FIX alarm capture (tab-indented).
HEALTH_CHIP_ALARM = """\
\tHealth Status                  : Alarm
\tError Code                     : A4025021 8C03A000 8C084E00
\tError Information              : ascend_monitor adda heart beat lost error

\t                               : node type=process-manager, sensor type=General Software, \
event state=The process start failed or exit abnormally

\t                               : node type=adda, sensor type=Heartbeat Sensor, \
event state=Heartbeat Lost."""
