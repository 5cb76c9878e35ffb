"""Where Kotae keeps its data, as the kotae binary decides it (core/paths.cpp): $KOTAE_DATA, else
$XDG_DATA_HOME/kotae, else ~/.local/share/kotae. Shared by the repository's Python scripts."""

import os
import pathlib


def data_dir() -> pathlib.Path:
    if os.environ.get("KOTAE_DATA"):
        return pathlib.Path(os.environ["KOTAE_DATA"])
    if os.environ.get("XDG_DATA_HOME"):
        return pathlib.Path(os.environ["XDG_DATA_HOME"]) / "kotae"
    return pathlib.Path.home() / ".local/share/kotae"


def models_dir() -> pathlib.Path:
    return data_dir() / "models"
