"""The README's Python example, run as a user would run it (a fresh interpreter, in an empty
directory), prints exactly the output the README shows."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO

EXAMPLE = re.compile(r"<!-- python-example -->\s*```python\n(.*?)```", re.S)
OUTPUT = re.compile(r"<!-- python-example-output -->\s*```text\n(.*?)```", re.S)


def readme_blocks():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    code, out = EXAMPLE.search(text), OUTPUT.search(text)
    assert code and out, "README.md lost its python-example / python-example-output markers"
    return code.group(1), out.group(1)


def test_readme_example(tmp_path):
    code, expected = readme_blocks()
    (tmp_path / "example.py").write_text(code, encoding="utf-8")
    got = subprocess.run([sys.executable, "example.py"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert got.stdout == expected, f"stdout:\n{got.stdout}\nstderr:\n{got.stderr}"
