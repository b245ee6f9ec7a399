"""The operator console: server-rendered pages at ``/console`` (see docs/console.md).

``site.py`` builds the application (login, sessions, CSRF, error pages) and
``mount_console`` mounts it on the HTTP application; one module per area holds its pages
(``runs.py``, ``stuck.py``, ``approvals.py``, ``memory.py``, ``audit.py``); ``timeline.py``
turns a run's records into what its timeline shows; ``session.py`` seals the session
cookie; ``render.py`` holds the template environment and the security headers.
"""
