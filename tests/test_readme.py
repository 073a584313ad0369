"""The README's commands and Python examples run as pasted (shell commands at small sizes),
and those of the pages it hands the reader on to, in the order a reader meets them."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: The README, then the pages its sections moved to, in the order they were in it (a later
#: page's commands may use an earlier one's files).
PAGES = [README, *(ROOT / "docs" / f"{name}.md" for name in (
    "deciding", "lending", "serving", "simulating", "sweeps", "reproducing", "learners"))]
TEXT = "\n".join(page.read_text() for page in PAGES)
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, flags=re.S)
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", TEXT, flags=re.S)
#: The decision service's blocks start a server in the background: each runs as one script.
SERVICE = [b for b in SHELL_BLOCKS if "sat serve" in b]
SHELL = [b for b in SHELL_BLOCKS if b not in SERVICE]

#: Commands the README shows that this test does not run, each with where it is covered.
NOT_RUN = {
    "make demo": "runs `sat reproduce --quick`, which tests/test_reproduce.py runs",
    "make test": "is the command that runs this test",
    "source .venv/bin/activate": "the test puts the environment's bin/ first on PATH instead",
    "sat reproduce --quick": "tests/test_reproduce.py runs it (shared across workers)",
    "sat reproduce": "the full run takes an hour; it is --quick's code at larger sizes",
}
#: Small sizes: flag → value used here instead of the README's.
SMALL = {"--horizon": "300", "-T": "300", "--seeds": "2"}


def _commands() -> list[str]:
    """Every shell command in the README, continuation lines joined, comments dropped."""
    out = []
    for block in SHELL:
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                out.append(shlex.join(words))
    return out


COMMANDS = _commands()


def _small(command: str) -> str:
    words = shlex.split(command)
    for i, word in enumerate(words[:-1]):
        if word in SMALL:
            words[i + 1] = SMALL[word]
    return shlex.join(words)


def test_readme_opens_with_make_demo_and_make_test():
    head = "\n".join(README.read_text().splitlines()[:10])
    assert "make demo" in head and "make test" in head


def test_readme_says_to_activate_the_environment():
    text = README.read_text()
    assert "source .venv/bin/activate" in text and ".venv/bin/sat" in text


def test_readme_is_a_first_screen_and_every_page_it_names_exists():
    """About 200 lines at most (it was 942), and each docs page it links to is there."""
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    linked = re.findall(r"\]\(((?:docs|benchmarks)/[^)#]+)\)", text)
    assert len(linked) >= 10
    for path in linked:
        assert (ROOT / path).is_file(), path
    for page in PAGES[1:]:
        assert f"]({page.relative_to(ROOT)})" in text, page


def test_every_shell_command_is_run_or_accounted_for():
    assert len(COMMANDS) >= 8
    for command in COMMANDS:
        assert command in NOT_RUN or command.startswith("sat "), command
    # Each exception is still in the README (else it is stale here).
    assert set(NOT_RUN) <= set(COMMANDS)


def test_readme_shell_commands_run_as_pasted(tmp_path):
    """In order, as a user would paste them after activating .venv, at small sizes."""
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for spec in (tmp_path / "examples").glob("*.toml"):  # the specs at small sizes too
        text = re.sub(r"(?m)^horizon = .*$", "horizon = 300", spec.read_text())
        spec.write_text(re.sub(r"(?m)^seeds = .*$", "seeds = 2", text))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = 0
    for command in COMMANDS:
        if command in NOT_RUN:
            continue
        small = _small(command)
        done = subprocess.run(["bash", "-c", small], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"{small}\n{done.stdout}\n{done.stderr}"
        assert "Traceback" not in done.stderr, done.stderr
        ran += 1
    assert ran >= 6
    assert (tmp_path / "runs/first/results.parquet").is_file()
    assert (tmp_path / "runs/small/all.csv").is_file()
    assert (tmp_path / "runs/small/report/index.html").is_file()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("block", SERVICE, ids=[f"service{i}" for i in range(len(SERVICE))])
def test_readme_service_blocks_run_as_one_script(block, tmp_path):
    """Each block as pasted into a shell (a server started with `&`, stopped with `kill %1`),
    on free ports and at small sizes."""
    pytest.importorskip("fastapi", reason="the 'serve' extra is not installed")
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    script = block.replace("\\\n", " ")
    for flag, value in SMALL.items():
        script = re.sub(rf"(?<= ){re.escape(flag)} \d+", f"{flag} {value}", script)
    for port in sorted(set(re.findall(r"--port (\d+)", script))):  # its URLs name it too
        script = script.replace(port, str(_free_port()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    # Should a command fail, the server started with & is stopped all the same.
    script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + script
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{script}\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr
    assert '"error"' not in done.stdout, done.stdout
    if "sat serve check" in script:
        assert '"accepted": true' in done.stdout and "bit for bit" in done.stdout
    if "sat serve play" in script:
        assert "the same as the engine in process" in done.stdout


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_python_block_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block may write files (a saved learner), as a user's would
    exec(compile(code, str(README), "exec"), {})


def layout_order(text: str, layers: tuple[frozenset[str], ...]) -> list[str]:
    """What is wrong with the README's layout paragraph against the import layers: a public
    layer it does not name (in backticks), or one it names before a lower one."""
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rank = {area: i for i, layer in enumerate(layers) for area in layer}
    public = [a for a in rank if not a.startswith("_") or a == "_jit"]
    found = {a: section.find(f"`{a}`") for a in public}
    wrong = [f"{a} is not named" for a, at in found.items() if at < 0]
    named = sorted((at, a) for a, at in found.items() if at >= 0)
    wrong += [f"{b} (layer {rank[b]}) is named after {a} (layer {rank[a]})"
              for (_, a), (_, b) in pairwise(named) if rank[b] < rank[a]]
    return wrong


def test_the_layout_paragraph_names_every_layer_in_order():
    from tests.test_import_circles import LAYERS

    assert layout_order(README.read_text(), LAYERS) == []
    # The control: the paragraph as it read before the saved-files layer is refused.
    stale = README.read_text().replace("← `persistence`", "")
    assert layout_order(stale, LAYERS) == ["persistence is not named"]
