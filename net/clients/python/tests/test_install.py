"""`pip install` from the folder works offline (Debian's setuptools and wheel, no index)."""

import os
import shutil
import subprocess
import sys

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def test_pip_install_offline_into_a_venv(tmp_path):
    src = tmp_path / "src"  # a copy: the build leaves build/ and *.egg-info beside the sources
    shutil.copytree(os.path.join(HERE, "relgraph"), src / "relgraph",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for f in ("pyproject.toml", "README.md"):
        shutil.copy(os.path.join(HERE, f), src / f)
    venv = tmp_path / "venv"
    # --system-site-packages: Debian's python3-wheel, which setuptools 66 builds wheels with;
    # --without-pip and pip --python: Debian's pip installs into it (no copy of pip: faster).
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip",
                    str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                    "install", "-q", "--no-index", "--no-build-isolation", str(src)], check=True)
    out = subprocess.run([str(venv / "bin" / "python"), "-c",
                          "import relgraph; print(relgraph.__file__, relgraph.__version__)"],
                         cwd=str(tmp_path), check=True, capture_output=True, text=True).stdout
    assert str(venv) in out and "0.1.0" in out
