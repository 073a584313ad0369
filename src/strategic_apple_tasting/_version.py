"""The release: one place, read by the package, saved files, the service and reports (a module
below every layer, so none imports the package's root for it)."""

__version__ = "0.1.0"
