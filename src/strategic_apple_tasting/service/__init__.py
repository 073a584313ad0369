"""A decision service (``sat serve``): decisions by id under a published rule, outcomes learned
when they arrive, on a real database.

Layers: :mod:`.config` (what runs), :mod:`.store` (tables, connection, migrations),
:mod:`.settings` (what a database keeps of the config, and a start's against it),
:mod:`.deciding` (the writer of decisions and outcomes), :mod:`.learning` (the one learner and
the log's replay), :mod:`.keys` (API keys), :mod:`.running` (the service's parts in one
process), :mod:`.app` (HTTP: the gate and the refusals; the routes in :mod:`.routes`, what a
request may say in :mod:`.bodies`) and :mod:`.page` (the public page), :mod:`.wire` (the
strategic game played against a running service).

Needs the ``serve`` extra (``pip install 'strategic-apple-tasting[serve]'``).
"""

from .config import ServiceConfig

__all__ = ["ServiceConfig"]
