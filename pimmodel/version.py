"""The package version, in one place: ``pyproject.toml`` reads it from here (a setuptools dynamic version), so
the installed metadata, ``pimmodel.__version__``, ``pimmodel --version`` and every record's provenance agree."""

__version__ = "0.1.0"
