"""The library never imports streamlit: proven in a clean interpreter (harlequin's test)."""

from __future__ import annotations

import subprocess
import sys

from conftest import ROOT


def test_annotate_imports_without_streamlit():
    code = (
        "import importlib, pkgutil, sys\n"
        "import annotate\n"
        "for module in pkgutil.walk_packages(annotate.__path__, 'annotate.'):\n"
        "    importlib.import_module(module.name)\n"
        "print(sorted(m for m in sys.modules if m.startswith('annotate.')))\n"
        "assert 'streamlit' not in sys.modules, 'streamlit was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert "annotate.cli" in result.stdout and "annotate.store" in result.stdout
