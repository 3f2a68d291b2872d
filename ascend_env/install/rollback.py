"""Going back to a recorded state: `ascend-env rollback` (each host's `previous` record) and a
roll's `--on-fail rollback` (what its failed batch had before).

A rollback is an install of the spec the target state was recorded with, in rollback mode
(install/going_back.py decides what the vendor allows). Hosts going back to the same spec
from the same CANN run together. Before anything changes, every destination is resolved and
the repository checked for all of its files, and for the installer of each CANN release that
must be uninstalled first; what is missing is named, and nothing runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ascend_env.ansible.runner import PlaybookRun, run_playbook
from ascend_env.ansible.variables import RollbackVars
from ascend_env.core.errors import AscendEnvError
from ascend_env.core.versions import AscendVersion, try_parse
from ascend_env.install.state import HostRecord, InstalledState, parse_record, stats_of
from ascend_env.repository.installers import RepoError, verify_repo
from ascend_env.spec.cann_layout import NEW_LAYOUT
from ascend_env.spec.catalogue import Catalogue
from ascend_env.spec.envspec import EnvSpec, build_spec
from ascend_env.spec.plan import Plan, resolve

# The frameworks' venv goes back only where the target state recorded one.
COMPONENTS = ("driver", "firmware", "cann", "env")
READ_STAT = "ascend_state_read"


@dataclass
class Destination:
    """Hosts going back to one recorded state, checked against the repository."""

    hosts: list[str]
    state: InstalledState
    spec: EnvSpec
    plan: Plan
    components: list[str]
    rollback: RollbackVars


def read_records(run: PlaybookRun) -> dict[str, HostRecord | None]:
    """Each host's installed-state record (playbooks/state.yml; read-only, no lock); a host
    that could not be read is an error naming it, before anything changes."""
    rc, log, events = run_playbook({}, run, playbook="state.yml")
    stats = stats_of(events)
    if not stats:
        raise AscendEnvError(f"the hosts' records could not be read (ansible-playbook exit "
                             f"{rc}); see {log}")
    problems = [f"{host}: {'unreachable' if counts.get('unreachable') else 'the read failed'}"
                for host, counts in stats.items()
                if counts.get("unreachable") or counts.get("failures")]
    if problems:
        raise AscendEnvError("the installed-state records of these hosts could not be read, "
                             "nothing was changed on any host (see " + str(log) + "):\n  "
                             + "\n  ".join(problems))
    return {host: parse_record((counts.get("custom") or {}).get(READ_STAT), host)
            for host, counts in stats.items()}


def previous_states(records: dict[str, HostRecord | None]
                    ) -> dict[str, tuple[InstalledState, InstalledState | None]]:
    """Per host, (where it goes back to, what it has now): its record's previous and current
    states; a host without a previous state is an error naming it."""
    missing = [f"{host}: no installed-state record (never installed by ascend-env install)"
               if record is None else f"{host}: its record has no previous state (installed "
               f"once, with {record.current.describe()})"
               for host, record in records.items() if record is None or record.previous is None]
    if missing:
        raise AscendEnvError("nothing to go back to on these hosts, nothing was changed on "
                             "any host:\n  " + "\n  ".join(missing))
    return {host: (record.previous, record.current) for host, record in records.items()
            if record is not None and record.previous is not None}


def _release(version: str | None) -> AscendVersion | None:
    parsed = try_parse(version) if version else None
    return parsed.release() if parsed is not None else None


def _must_uninstall(goal: InstalledState, now: InstalledState | None) -> str | None:
    """The CANN release that must be uninstalled before the goal's goes back in (8.5.0 on)."""
    have, want = (now.cann.version if now else None), goal.cann.version
    have_release, want_release = _release(have), _release(want)
    if have is None or have_release is None or want_release is None or have_release == \
            want_release:
        return None
    return have if max(have_release, want_release) >= NEW_LAYOUT else None


def _spec(state: InstalledState, host: str) -> EnvSpec:
    assert state.spec is not None
    return build_spec(state.spec.document, f"the spec recorded on {host} "
                                           f"({state.spec.name})")


def destinations(targets: dict[str, tuple[InstalledState, InstalledState | None]],
                 repo: Path, catalogue: Catalogue) -> list[Destination]:
    """Group the hosts by where they go, resolve each destination and check the repository
    for everything each needs; RepoError names every problem, and nothing has run."""
    problems: list[str] = []
    groups: dict[tuple[str, str | None], list[str]] = {}
    for host, (goal, now) in targets.items():
        if goal.spec is None:
            problems.append(f"{host}: the state to go back to ({goal.describe()}) was not "
                            "installed by ascend-env install, so no spec names its files; "
                            "install it with a spec instead")
            continue
        groups.setdefault((goal.spec.digest, _must_uninstall(goal, now)), []).append(host)
    found = []
    for (_, uninstall), hosts in groups.items():
        goal, now = targets[hosts[0]]
        try:
            spec = _spec(goal, hosts[0])
            plan = resolve(spec, catalogue)
            components = [*COMPONENTS, *(["python"] if goal.venv is not None else [])]
            verify_repo(plan, repo, set(components))
            rollback = RollbackVars()
            if uninstall is not None:
                rollback = _uninstaller(uninstall, now, hosts[0], repo, catalogue)
        except AscendEnvError as exc:
            problems.append(f"{', '.join(hosts)} (back to {goal.describe()}): {exc}")
            continue
        found.append(Destination(hosts=hosts, state=goal, spec=spec, plan=plan,
                                 components=components, rollback=rollback))
    if problems:
        raise RepoError("the rollback cannot run, nothing was changed on any host:\n  "
                        + "\n  ".join(problems))
    return found


def _uninstaller(release: str, now: InstalledState | None, host: str, repo: Path,
                 catalogue: Catalogue) -> RollbackVars:
    """The installer of the CANN release the hosts have now, which uninstalls it."""
    if now is None or now.spec is None:
        raise AscendEnvError(f"CANN {release} must be uninstalled first, and no recorded spec "
                             "names its installer")
    installers = verify_repo(resolve(_spec(now, host), catalogue), repo, {"cann"})
    toolkit = installers.get("toolkit")
    if toolkit is None:
        raise RepoError(f"the toolkit installer of CANN {release} (to uninstall it first) is "
                        f"not in {repo}")
    return RollbackVars(uninstall_cann=release, uninstaller=str(toolkit.path),
                        uninstaller_sha256=toolkit.sha256)
