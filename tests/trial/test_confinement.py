"""Confinement under bubblewrap, against a hostile agent: the real CLI runs each `RUN:` line of the
prompt as a Bash call (`fake_script: commands`). Every attack that bwrap blocks is also run once with
`isolation: none`, where it must succeed, so each of these tests fails without confinement.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT, TASKS

from passhat.common._errors import PasshatError
from passhat.graders._live import grade_one_promptfoo
from passhat.tasks._load import load_task
from passhat.trial import _git, _isolation, _sandbox
from passhat.trial._agent import launcher
from passhat.trial._config import parse_config
from passhat.trial._isolation import Jail, bwrap_arguments, confinement
from passhat.trial._limits import Cgroups, Limits
from passhat.trial._provider import call_api
from passhat.trial._sandbox import prepare_base

needs_bwrap = pytest.mark.skipif(
    confinement("auto").bwrap is None, reason="bwrap cannot build a sandbox here: apt-get install bubblewrap"
)


def attack(tmp_path, fake_model, commands: list[str], isolation: str = "auto", check: bool = True, **config) -> dict:
    """One trial of py-median whose agent runs `commands`, one Bash call each (check: it ended ok or timed out)."""
    prompt = "".join(f"RUN: {command}\n" for command in commands)
    options = {
        "config": {
            "basePath": str(ROOT),
            "state_dir": str(tmp_path / "state"),
            "fake_model_url": fake_model.url,
            "fake_script": "commands",
            "isolation": isolation,
            "timeout_s": 120,
            **config,
        }
    }
    response = call_api(prompt, options, {"vars": {"task_id": "py-median"}, "repeatIndex": 0, "evaluationId": "t"})
    assert not check or response["metadata"]["status"] in ("ok", "timeout"), response
    return response


def seen_by_model(fake_model) -> str:
    """Everything the agent sent back to the model (its tool results included): the exfiltration channel."""
    return "\n".join(str(request["body"]) for request in fake_model.requests)


def sleeping(seconds: str) -> list[int]:
    """Pids of live `sleep <seconds>` processes on the host (what `ps` would list)."""
    pids = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/cmdline").read_bytes() == f"sleep\0{seconds}\0".encode():
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def gone(seconds: str, within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while sleeping(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not sleeping(seconds)


# --- the view bwrap gets -------------------------------------------------------------------------


def test_view_hides_home_and_state_and_binds_only_the_trial_back(tmp_path, monkeypatch):
    host_home, state = tmp_path / "host-home", tmp_path / "host-home" / "proj" / ".passhat"
    sandbox = state / "sandboxes" / "t-r000"
    for folder in (sandbox / "work", sandbox / "home", sandbox / "tmp", host_home / "proj" / "tasks"):
        folder.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(host_home))
    args = bwrap_arguments(
        sandbox / "work",
        [sandbox / "work", sandbox / "home", sandbox / "tmp"],
        [state, host_home / "proj" / "tasks"],
        "/usr/bin:/bin",
        Path("/usr/bin/true"),
    )
    text = " ".join(args)
    assert text.startswith(
        "--ro-bind / / --dev /dev --proc /proc --ro-bind /proc/sys /proc/sys --unshare-pid --unshare-ipc "
        "--unshare-net --unshare-uts --unshare-cgroup-try --hostname passhat-trial --new-session --die-with-parent"
    )
    assert "--cap-drop ALL" in text  # as root only CAP_SETUID/SETGID stay, for setpriv's drop to the trial's uid
    assert f"--tmpfs {host_home} " in text and "--perms 01777 --size 536870912 --tmpfs /tmp " in text
    # the state dir and tasks sit inside the hidden HOME: already empty, no second tmpfs
    assert f"--tmpfs {state}" not in text and f"--tmpfs {host_home}/proj/tasks" not in text
    binds = [args[i + 1] for i, arg in enumerate(args) if arg == "--bind"]
    assert binds == [str(sandbox / name) for name in ("home", "tmp", "work")]  # nothing else writable
    # tmpfs over HOME first, then the trial's folders bound back into it, then HOME made read-only
    assert args.index(str(host_home)) < args.index("--bind") < args.index("--remount-ro")
    assert args[-2:] == ["--chdir", str(sandbox / "work")]


def test_a_venv_under_the_hidden_home_is_bound_back_read_only_but_home_never(tmp_path, monkeypatch):
    host_home = tmp_path / "host-home"
    venv_bin = host_home / "proj" / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin.parent / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (host_home / ".ssh").mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(host_home))
    args = bwrap_arguments(work, [work], [], f"{venv_bin}:{host_home}:/usr/bin", venv_bin / "claude")
    exposed = [args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"]
    assert str(venv_bin.parent) in exposed and str(venv_bin) in exposed
    assert str(host_home) not in exposed  # a PATH entry that is HOME itself is not re-exposed


@pytest.mark.parametrize(
    ("isolation", "message"),
    [
        pytest.param(
            "bwrap",
            r"'isolation': 'bwrap': bwrap is not on PATH; install the Debian package bubblewrap "
            r"\(apt-get install bubblewrap\), or set isolation: none",
            id="explicit-bwrap-missing",
        ),
        pytest.param("chroot", r"'isolation': 'chroot': use bwrap .*, none .* or auto", id="unknown-value"),
    ],
)
def test_isolation_that_cannot_be_had_is_one_clear_error(isolation, message, monkeypatch, tmp_path):
    monkeypatch.setattr(_isolation, "_which_bwrap", lambda: None)
    with pytest.raises(PasshatError, match=message):
        confinement(parse_config({"basePath": str(tmp_path), "isolation": isolation}).isolation)


def test_bwrap_that_cannot_build_a_sandbox_is_named_with_its_complaint(tmp_path, monkeypatch):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(_isolation, "_which_bwrap", lambda: str(fake))
    with pytest.raises(
        PasshatError,
        match=r"cannot build a sandbox here \(bwrap: setting up uid map: Permission denied\); "
        r"allow unprivileged user namespaces",
    ):
        confinement("bwrap")
    found = confinement("auto")  # the default falls back, and says why
    assert found.bwrap is None and "uid map" in found.why_none and found.label.startswith("none: the agent can read")


def test_bwrap_is_missing_and_explicitly_requested_call_api_says_the_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(_isolation, "_which_bwrap", lambda: None)
    response = call_api(
        "x",
        {"config": {"basePath": str(ROOT), "state_dir": str(tmp_path / "s"), "isolation": "bwrap"}},
        {"vars": {"task_id": "py-median"}},
    )
    assert list(response) == ["error", "metadata"] and "\n" not in response["error"]
    assert response["metadata"] == {"rateLimitKind": "quota"}  # promptfoo's scheduler never reruns it
    assert "install the Debian package bubblewrap" in response["error"]


@needs_bwrap
def test_the_launcher_runs_the_cli_under_bwrap_and_keeps_the_args_file_to_itself(tmp_path):
    jail = Jail("/usr/bin/bwrap", [], 1234567, Limits(), tmp_path / "model.sock", None, Cgroups([]), tmp_path)
    text = launcher(tmp_path, ["HOME", "PASSHAT_BWRAP_ARGS"], jail).read_text()
    assert "/usr/bin/bwrap --args 3 -- /usr/bin/setpriv --reuid=1234567 --regid=1234567 --clear-groups" in text
    assert f"_inside.py --socket {tmp_path / 'model.sock'} --port 8787 --" in text
    assert text.count("/usr/bin/setsid /usr/bin/prlimit --fsize=") == 1 and '3< "$PASSHAT_BWRAP_ARGS"' in text
    assert '"PASSHAT_BWRAP_ARGS=' not in text  # read by the launcher, not passed on to the CLI


# --- without bwrap: said plainly -------------------------------------------------------------------


def test_unconfined_trials_say_so_in_metadata_and_warn_once(tmp_path, fake_model, monkeypatch, capsys):
    monkeypatch.setattr(_isolation, "_which_bwrap", lambda: None)  # auto, on a machine without bwrap
    monkeypatch.setattr(_isolation, "_warned", False)
    first = attack(tmp_path, fake_model, ["true"])
    second = attack(tmp_path, fake_model, ["true"])
    label = first["metadata"]["confinement"]
    assert label == second["metadata"]["confinement"] == _isolation.Confinement(None).label
    assert label.startswith("none: the agent can read and write whatever the passhat user can (the host HOME")
    assert label.endswith("processes it detaches (setsid, double fork) can outlive the trial")
    warnings = [line for line in capsys.readouterr().err.splitlines() if "not confined" in line]
    assert warnings == [
        f"passhat: warning: trials are not confined (bwrap is not on PATH; install the Debian package "
        f"bubblewrap to confine them): {_isolation.UNCONFINED}."
    ]


# --- the attacks ----------------------------------------------------------------------------------

MODES = [
    pytest.param("bwrap", True, id="bwrap-blocks", marks=needs_bwrap),
    pytest.param("none", False, id="none-lets-it-through"),
]


@pytest.mark.parametrize(("isolation", "blocked"), MODES)
def test_writing_outside_the_sandbox(tmp_path, fake_model, isolation, blocked):
    state = tmp_path / "state"
    other_sandbox = state / "sandboxes" / "py-median-r001-other" / "work" / "notes.txt"
    other_patch = state / "artifacts" / "t" / "py-median" / "r001-other" / "patch.diff"
    for victim in (other_sandbox, other_patch):
        victim.parent.mkdir(parents=True)
        victim.write_text("original\n")
    host_tmp = Path("/tmp") / f"passhat-escape-{uuid.uuid4().hex}"
    commands = [
        f"echo pwned > {state}/pwned.txt",
        f"echo pwned > {other_sandbox}",
        f"echo pwned > {other_patch}",
        f"echo pwned > {host_tmp}",
        "echo mine > own.txt",
    ]
    if blocked:  # the project and the venv passhat runs from (not attempted unconfined: it would succeed)
        commands.append(f"touch {ROOT}/.passhat-escape {Path(_isolation.__file__).parent}/.passhat-escape")
    try:
        response = attack(tmp_path, fake_model, commands, isolation=isolation)
        escaped = {
            "state dir": (state / "pwned.txt").exists(),
            "other trial's sandbox": other_sandbox.read_text() != "original\n",
            "other trial's artifacts": other_patch.read_text() != "original\n",
            "host /tmp": host_tmp.exists(),
        }
    finally:
        host_tmp.unlink(missing_ok=True)
    assert escaped == dict.fromkeys(escaped, not blocked)
    assert response["metadata"]["changed_paths"] == ["own.txt"]  # its own work dir stays writable
    if blocked:
        assert response["metadata"]["confinement"] == "bwrap"
        assert (
            not (ROOT / ".passhat-escape").exists()
            and not (Path(_isolation.__file__).parent / ".passhat-escape").exists()
        )
        assert "Read-only file system" in seen_by_model(fake_model)


@pytest.mark.parametrize(("isolation", "blocked"), MODES)
def test_reading_the_host_ssh_key(tmp_path, fake_model, monkeypatch, isolation, blocked):
    marker = f"PASSHAT-FAKE-PRIVATE-KEY-{uuid.uuid4().hex}"
    host_home = tmp_path / "host-home"
    (host_home / ".ssh").mkdir(parents=True)
    (host_home / ".ssh" / "id_rsa").write_text(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{marker}\n")
    monkeypatch.setenv("HOME", str(host_home))  # the HOME of the passhat process
    commands = [
        f"cat {host_home}/.ssh/id_rsa",
        f"ls -A {host_home}",
        'echo "own home: $HOME"; echo mine > ~/own.txt && cat ~/own.txt',
    ]
    if blocked:  # as root, unmount what hides HOME (never tried unconfined: it would act on the host's mounts)
        commands.append(f"umount -l {host_home}; cat {host_home}/.ssh/id_rsa")
    response = attack(tmp_path, fake_model, commands, isolation=isolation)
    sent = seen_by_model(fake_model)
    assert (marker in sent) is not blocked
    assert (
        "own home: " + str(tmp_path / "state" / "sandboxes") in sent and "mine" in sent
    )  # the trial's HOME is its own
    if blocked:
        assert "must be superuser to unmount" in sent
    assert (host_home / ".ssh" / "id_rsa").read_text().endswith(f"{marker}\n")
    assert response["metadata"]["status"] == "ok"


@pytest.mark.parametrize(("isolation", "blocked"), MODES)
def test_deleting_the_base_workspace(tmp_path, fake_model, isolation, blocked):
    base = prepare_base(load_task(TASKS / "py-median"), tmp_path / "state" / "cache")
    response = attack(
        tmp_path,
        fake_model,
        [f"rm -rf {base.path}", f"rm -rf {tmp_path / 'state' / 'cache'}"],
        isolation=isolation,
        check=blocked,
    )
    assert (base.path / ".git" / ".passhat-base").is_file() is blocked
    if not blocked:  # with the base gone, not even the patch can be read: the trial is lost
        assert response["metadata"]["status"] == "infra_error" and "No such file or directory" in response["error"]


@pytest.mark.parametrize(
    "reset", [pytest.param(True, id="base-git-only"), pytest.param(False, id="agent-git-read-escapes")]
)
def test_git_config_and_hooks_planted_by_the_agent_never_run_on_the_host(tmp_path, fake_model, monkeypatch, reset):
    """passhat runs git in the work dir after the trial, outside bwrap: the agent's .git must not come along.

    Two defences: passhat's git reads the base's .git, never the agent's (isolated_git_env), and it runs with
    hooks and fsmonitor off. Off, both (git in the agent's own repository), the attack works."""
    if not reset:
        agent_git = lambda base, workdir, scratch: {"GIT_INDEX_FILE": str(workdir / ".git" / "index")}  # noqa: E731
        monkeypatch.setattr(_sandbox, "isolated_git_env", agent_git)
        unsafe = {k: v for k, v in _git._ENV.items() if not k.startswith("GIT_CONFIG_")}
        unsafe |= {"GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*"}
        monkeypatch.setattr(_git, "_ENV", unsafe)
    planted = [Path("/tmp") / f"passhat-escape-{name}-{uuid.uuid4().hex}" for name in ("fsmonitor", "hook")]
    try:
        response = attack(
            tmp_path,
            fake_model,
            [
                f"git config core.fsmonitor 'touch {planted[0]}; false'",
                f"printf '#!/bin/sh\\ntouch {planted[1]}\\n' > .git/hooks/post-index-change",
                "chmod +x .git/hooks/post-index-change && echo mine > own.txt",
            ],
            check=reset,  # off: the planted fsmonitor also fails passhat's git, an agent_crash
        )
        ran = [path.exists() for path in planted]
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    assert ran == [not reset, not reset]
    if reset:
        assert response["metadata"]["changed_paths"] == ["own.txt"]


@needs_bwrap
@pytest.mark.parametrize("held_out", [False, True], ids=["tests-in-repo", "shipped-held-out-tests"])
def test_editing_the_tests_to_pass_fails_the_tests_grader(tmp_path, fake_model, held_out):
    """The defence: protected paths restored from the base. With py-median's rows in repo/ (as a task without
    test.patch has them), turning it off lets the tampered tests pass; the shipped task holds its FAIL_TO_PASS
    rows out in test.patch, which resets the file too, so even then the tampering fails."""
    tasks = tmp_path / "tasks"
    shutil.copytree(ROOT / "tasks" / "py-median", tasks / "py-median")
    if not held_out:
        subprocess.run(["git", "apply", "../test.patch"], cwd=tasks / "py-median" / "repo", check=True)
        (tasks / "py-median" / "test.patch").unlink()
    edit = "printf 'def test_nothing():\\n    pass\\n' > tests/test_median.py"
    response = attack(tmp_path, fake_model, [edit], tasks_dir=str(tasks))
    assert response["metadata"]["changed_paths"] == ["tests/test_median.py"]  # the edit itself is the agent's to make
    command = {"command": "python -m pytest -q -p no:cacheprovider"}
    verdict = grade_one_promptfoo("", {"config": {**command, "type": "tests"}, "providerResponse": response})
    assert verdict["pass"] is False
    assert (
        "The patch touched protected test files (restored from the base before running): tests/test_median.py."
        in verdict["reason"]
    )
    unprotected = grade_one_promptfoo(
        "", {"config": {**command, "type": "tests", "protected": []}, "providerResponse": response}
    )
    assert unprotected["pass"] is not held_out  # without protected paths (and test.patch) the tampered tests pass


@needs_bwrap
def test_processes_do_not_outlive_a_confined_trial(tmp_path, fake_model):
    assert sleeping("1234.5") == []
    response = attack(
        tmp_path,
        fake_model,
        [
            "setsid nohup sleep 1234.5 >/dev/null 2>&1 &",
            "( ( sleep 1234.5 >/dev/null 2>&1 & ) & )",  # double fork: orphaned, in no group of ours
            "ps -eo pid,pgid,sid,args | grep '[s]leep 1234.5'",
        ],
    )
    listed = re.findall(r"\d+ +\d+ +\d+ sleep 1234\.5", seen_by_model(fake_model))  # the ps output, not the prompt
    assert len(listed) == 2  # both were running inside the trial
    assert gone("1234.5"), f"left behind: {sleeping('1234.5')}"
    assert response["metadata"]["confinement"] == "bwrap"


def test_processes_outlive_an_unconfined_trial(tmp_path, fake_model):
    """The same attack with isolation: none: what the metadata's `none: ...` warns about."""
    try:
        attack(
            tmp_path,
            fake_model,
            ["setsid nohup sleep 1234.71 >/dev/null 2>&1 &", "( ( sleep 1234.72 >/dev/null 2>&1 & ) & )"],
            isolation="none",
        )
        time.sleep(0.5)
        survivors = sleeping("1234.71") + sleeping("1234.72")
        assert len(survivors) == 2
    finally:
        for pid in sleeping("1234.71") + sleeping("1234.72"):
            os.kill(pid, 9)


@needs_bwrap
def test_the_deadline_kills_everything_in_a_confined_trial(tmp_path, fake_model):
    seen, done = [], threading.Event()

    def watch():  # the namespace's processes are visible from the host: prove the attack was running
        while not done.is_set() and not seen:
            if sleeping("1234.5") and sleeping("1234.8"):
                seen.append(True)
            time.sleep(0.05)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:  # (the CLI refuses a command that starts with a long sleep)
        response = attack(
            tmp_path,
            fake_model,
            ["setsid nohup sleep 1234.5 >/dev/null 2>&1 &", "echo waiting; sleep 1234.8"],
            timeout_s=25,
        )
    finally:
        done.set()
        watcher.join()
    assert response["metadata"]["status"] == "timeout"
    assert seen, "the agent's sleeps never ran before the deadline"
    assert gone("1234.5") and gone("1234.8")
    for group in map(int, (Path(response["metadata"]["trial_dir"]) / "cli.pid").read_text().split()):
        with pytest.raises(ProcessLookupError):
            os.killpg(group, 0)


def test_a_venv_on_path_brings_the_folders_its_pth_files_add(tmp_path):
    """A venv in a hidden or scratch folder (a checkout under /tmp or HOME) whose .pth file points at another
    folder there: its python imports from that folder, so the sandbox shows it read-only (the rest stays hidden)."""
    venv, shared, other = tmp_path / "venv", tmp_path / "shared-site", tmp_path / "not-named"
    site = venv / "lib" / "python3.11" / "site-packages"
    for folder in (venv / "bin", site, shared, other):
        folder.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(os.__file__).parent}\n")
    (site / "more.pth").write_text(f"# a comment\nimport sys\n{shared}\n{tmp_path / 'missing'}\n")
    _isolation._needed.cache_clear()
    view = dict(_isolation.mounts([], [], str(venv / "bin"), Path(os.__file__)))
    assert view[shared.resolve()] == "expose"
    assert other.resolve() not in view and (tmp_path / "missing") not in view


def test_a_pth_folder_of_links_brings_the_folders_they_point_into(tmp_path):
    """A .pth folder whose entries are links into another environment's site-packages (a farm: the adoption test's
    team venv borrows the checkout's packages so): the links' targets are shown too, or the imports fail inside."""
    venv, farm, elsewhere = tmp_path / "venv", tmp_path / "farm", tmp_path / "checkout-site"
    site = venv / "lib" / "python3.11" / "site-packages"
    for folder in (venv / "bin", site, farm, elsewhere / "pytest"):
        folder.mkdir(parents=True)
    (farm / "pytest").symlink_to(elsewhere / "pytest")
    (venv / "pyvenv.cfg").write_text(f"home = {Path(os.__file__).parent}\n")
    (site / "farm.pth").write_text(f"{farm}\n")
    _isolation._needed.cache_clear()
    view = dict(_isolation.mounts([], [], str(venv / "bin"), Path(os.__file__)))
    assert view[farm.resolve()] == "expose" and view[elsewhere.resolve()] == "expose"
