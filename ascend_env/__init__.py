"""ascend-env: provision and validate Huawei Ascend NPU environments."""

__version__ = "0.1.0"
