"""Worker processes beyond this one: starting Ray for worker tasks (:func:`start_ray`, shared by
``nclab reproduce --backend ray`` and ``nclab measure --backend ray``). Ray is an optional extra,
imported only when a Ray backend is asked for."""

from __future__ import annotations

from .errors import ConfigError

__all__ = ["start_ray"]


def start_ray(workers: int, address: str | None = None):
    """(the ray module, whether this call started it): joins the cluster at ``address``, else
    starts a local Ray with ``workers`` CPUs; an already running Ray is used as it is. Workers get
    ``NCLAB_PROGRESS=0`` (no progress bars from tasks)."""
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray: pip install 'nclab[ray]' (or pip install ray)"
        ) from None
    if ray.is_initialized():
        return ray, False
    kwargs = {
        "include_dashboard": False,
        "log_to_driver": False,
        "runtime_env": {"env_vars": {"NCLAB_PROGRESS": "0"}},
    }
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=workers, **kwargs)
    return ray, True
